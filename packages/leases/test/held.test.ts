import { CountingStore, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import { commitVersion, holdfastLayout, initDataset } from "@holdfast/dataset";
import {
  acquireLease,
  checkLeaseHandle,
  checkLeaseTtl,
  forceReleaseLease,
  INVALID_LEASE_HANDLE,
  keeperTiming,
  releaseLeaseHandle,
  renewLeaseHandle,
  toLeaseHandle,
} from "@holdfast/leases";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

/** A writer host and a second host whose clock is an hour off: leases never read host clocks. */
async function setup() {
  const storeTime = new FakeTime(Date.UTC(2026, 0, 1, 0, 0, 10));
  const memory = new MemoryStore({ clock: storeTime });
  const counting = new CountingStore(memory);
  const ctx: ProtocolContext = createContext(counting, {
    clock: storeTime,
    sleep: recordingSleep(),
    ids: seededIds(5),
  });
  const skewed = createContext(counting, {
    clock: { now: () => storeTime.now() - 3_600_000 },
    sleep: recordingSleep(),
    ids: seededIds(6),
  });
  await initDataset(ctx);
  await commitVersion(ctx, { branch: "main", files: [] });
  const lease = await acquireLease(ctx, {
    format: holdfastLayout,
    branch: "main",
    version: 1,
    ttlMs: 10_000,
  });
  return { storeTime, memory, counting, ctx, skewed, handle: toLeaseHandle(lease) };
}

// docs/protocol.md §4.1: a handle renewed through any host, judged by the store.
describe("lease handles renewed and released by any host", () => {
  it("L3 a handle renewed on a host with a skewed clock keeps the store's term", async () => {
    const { storeTime, skewed, handle, memory } = await setup();
    await storeTime.advance(4_000);
    const renewed = await renewLeaseHandle(skewed, handle);
    expect(renewed.handle.renewal).toBe(1);
    expect(renewed.handle.etag).not.toBe(handle.etag);
    expect(renewed.lease).toMatchObject({ active: true, leaseId: handle.leaseId });
    const stamp = (await memory.head(handle.key))!.lastModified;
    expect(renewed.lease.lastModified).toBe(stamp.toISOString());
    // Renewed again from the new handle, then released: nothing of the lease is left.
    await storeTime.advance(4_000);
    const again = await renewLeaseHandle(skewed, renewed.handle);
    await releaseLeaseHandle(skewed, again.handle);
    expect(await memory.head(handle.key)).toBeNull();
  });

  it("L3 a renewal that lands after the store's term ran out is refused (LEASE_EXPIRED) and removes the lease", async () => {
    const { storeTime, skewed, handle, memory } = await setup();
    // The skewed host's clock would call the lease fresh; the store's stamps say it lapsed.
    await storeTime.advance(12_000);
    await expect(renewLeaseHandle(skewed, handle)).rejects.toMatchObject({
      kind: "refused",
      code: "LEASE_EXPIRED",
    });
    expect(await memory.head(handle.key)).toBeNull();
  });

  it("a handle whose lease is gone is not-found (LEASE_LOST)", async () => {
    const { skewed, handle } = await setup();
    await releaseLeaseHandle(skewed, handle);
    await expect(renewLeaseHandle(skewed, handle)).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_LOST",
    });
  });

  it("invariant 1: a forged handle or one for another lease id is refused before any request", async () => {
    const { counting, skewed, handle } = await setup();
    const before = counting.totalRequests();
    const forged = { ...handle, key: "_holdfast/identity.json" };
    for (const attempt of [
      () => renewLeaseHandle(skewed, forged),
      () => releaseLeaseHandle(skewed, forged),
    ]) {
      await expect(attempt()).rejects.toMatchObject({
        kind: "invalid-input",
        code: INVALID_LEASE_HANDLE,
      });
    }
    expect(() => checkLeaseHandle(handle, "release", "01J9Z3K4V6W8X0Y2Z4A6B8C0D2")).toThrow(
      expect.objectContaining({ kind: "invalid-input", code: INVALID_LEASE_HANDLE }),
    );
    expect(() => checkLeaseHandle("not a handle", "release")).toThrow(
      expect.objectContaining({ code: INVALID_LEASE_HANDLE }),
    );
    expect(counting.totalRequests()).toBe(before);
    // The same id in another case is the same lease; extra fields are dropped.
    expect(
      checkLeaseHandle({ ...handle, extra: 1 }, "release", handle.leaseId.toLowerCase()),
    ).toEqual(handle);
  });

  it("keeperTiming refuses a period that ends after the fence (INVALID_KEEPER_TIMING)", () => {
    expect(keeperTiming(60_000)).toEqual({ renewEveryMs: 20_000, marginMs: 1_000 });
    expect(() => keeperTiming(60_000, { renewEveryMs: 59_000 })).toThrow(
      expect.objectContaining({ kind: "invalid-input", code: "INVALID_KEEPER_TIMING" }),
    );
  });
});

// docs/protocol.md §4.2: `lease release --force` removes anyone's lease by its id.
describe("a lease removed by its id (forceReleaseLease)", () => {
  it("L1 a lease removed by its id is gone: its holder's next renewal is LEASE_LOST", async () => {
    const { ctx, memory, handle } = await setup();
    const removed = await forceReleaseLease(ctx, handle.leaseId.toLowerCase());
    expect(removed).toMatchObject({ leaseId: handle.leaseId, branch: "main", version: 1 });
    expect(await memory.head(handle.key)).toBeNull();
    await expect(renewLeaseHandle(ctx, handle)).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_LOST",
    });
  });

  it("a malformed id is refused before any request (INVALID_LEASE_ID); an unknown one is LEASE_NOT_FOUND", async () => {
    const { ctx, counting, memory, handle } = await setup();
    const before = counting.totalRequests();
    await expect(forceReleaseLease(ctx, "not-a-ulid")).rejects.toMatchObject({
      kind: "invalid-input",
      code: "INVALID_LEASE_ID",
    });
    expect(counting.totalRequests()).toBe(before);
    await expect(forceReleaseLease(ctx, "01J9Z3K4V6W8X0Y2Z4A6B8C0D2")).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_NOT_FOUND",
    });
    expect(await memory.head(handle.key)).not.toBeNull();
  });

  it("checkLeaseTtl accepts MIN_TTL_MS..MAX_TTL_MS and refuses the rest (INVALID_TTL)", () => {
    expect(checkLeaseTtl(100)).toBe(100);
    expect(checkLeaseTtl(86_400_000)).toBe(86_400_000);
    for (const bad of [99, 86_400_001, 1.5, "60000", Number.NaN]) {
      expect(() => checkLeaseTtl(bad, "parse")).toThrow(
        expect.objectContaining({ kind: "invalid-input", code: "INVALID_TTL", operation: "parse" }),
      );
    }
  });
});
