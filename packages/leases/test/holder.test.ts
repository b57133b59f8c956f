import { CountingStore, decodeJson, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import { commitVersion, holdfastLayout, initDataset } from "@holdfast/dataset";
import {
  acquireLease,
  checkLeaseHandle,
  describeLeases,
  renewLease,
  renewLeaseHandle,
  toLeaseHandle,
} from "@holdfast/leases";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

// The optional holder label (docs/protocol.md §4, lease object body): written after `proof`
// when given, kept by every renewal, shown by listings; refused before any request when bad.

async function setup() {
  const time = new FakeTime(Date.UTC(2026, 0, 1));
  const memory = new MemoryStore({ clock: time });
  const counting = new CountingStore(memory);
  const ctx: ProtocolContext = createContext(counting, {
    clock: time,
    sleep: recordingSleep(),
    ids: seededIds(11),
  });
  await initDataset(ctx);
  await commitVersion(ctx, { branch: "main", files: [] });
  return { time, memory, counting, ctx };
}

const acquire = (ctx: ProtocolContext, holder?: string) =>
  acquireLease(ctx, {
    format: holdfastLayout,
    branch: "main",
    version: 1,
    ttlMs: 60_000,
    ...(holder === undefined ? {} : { holder }),
  });

describe("lease holder label", () => {
  it("is written last in the body, kept by renewals (library and handle), and listed with the time left", async () => {
    const { time, memory, ctx } = await setup();
    const lease = await acquire(ctx, "nightly-report · host 7");
    expect(lease.holder).toBe("nightly-report · host 7");
    const body = async () =>
      decodeJson((await memory.get(lease.key))!.body) as Record<string, unknown>;
    expect(Object.keys(await body()).at(-1)).toBe("holder");
    expect((await body()).holder).toBe("nightly-report · host 7");

    await time.advance(1_000);
    const renewed = await renewLease(ctx, lease);
    expect(await body()).toMatchObject({ renewal: 1, holder: "nightly-report · host 7" });
    const handle = toLeaseHandle(renewed);
    expect(handle.holder).toBe("nightly-report · host 7");
    await time.advance(1_000);
    const viaHandle = await renewLeaseHandle(ctx, handle);
    expect(await body()).toMatchObject({ renewal: 2, holder: "nightly-report · host 7" });
    expect(viaHandle.lease.holder).toBe("nightly-report · host 7");
    expect(viaHandle.handle.holder).toBe("nightly-report · host 7");

    await time.advance(20_000);
    const [listed] = await describeLeases(ctx);
    expect(listed).toMatchObject({ holder: "nightly-report · host 7", active: true });
    // Written 20 s ago with a 60 s TTL (plus a second of precision): about 41 s left.
    expect(listed!.timeLeftMs).toBeGreaterThan(35_000);
    expect(listed!.timeLeftMs).toBeLessThanOrEqual(41_000);
  });

  it("a lease without one has a body with no holder field and lists holder null", async () => {
    const { memory, ctx } = await setup();
    const lease = await acquire(ctx);
    expect(lease.holder).toBeUndefined();
    expect(toLeaseHandle(lease)).not.toHaveProperty("holder");
    expect(decodeJson((await memory.get(lease.key))!.body)).not.toHaveProperty("holder");
    const [listed] = await describeLeases(ctx);
    expect(listed!.holder).toBeNull();
  });

  it.each([
    ["empty", ""],
    ["too long", "x".repeat(129)],
    ["a control character", "a\nb"],
    ["not a string", 42],
  ])("invariant 6: a holder that is %s is refused before any request", async (_why, holder) => {
    const { counting, ctx } = await setup();
    const before = counting.totalRequests();
    await expect(acquire(ctx, holder as string)).rejects.toMatchObject({
      kind: "invalid-input",
      code: "INVALID_HOLDER",
    });
    expect(counting.totalRequests()).toBe(before);
  });

  it("a handle with a bad holder is refused as INVALID_LEASE_HANDLE", async () => {
    const { ctx } = await setup();
    const handle = toLeaseHandle(await acquire(ctx, "ok"));
    expect(() => checkLeaseHandle({ ...handle, holder: "a\u0000b" }, "renewLease")).toThrow(
      expect.objectContaining({ code: "INVALID_LEASE_HANDLE" }),
    );
  });
});
