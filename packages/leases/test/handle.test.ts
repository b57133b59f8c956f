import { CountingStore, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import { commitVersion, holdfastLayout, initDataset, manifestKey } from "@holdfast/dataset";
import {
  acquireLease,
  INVALID_LEASE_HANDLE,
  type Lease,
  leaseKey,
  releaseLease,
  renewLease,
} from "@holdfast/leases";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

async function setup() {
  const time = new FakeTime(Date.UTC(2026, 0, 1));
  const memory = new MemoryStore({ clock: time });
  const counting = new CountingStore(memory);
  const ctx: ProtocolContext = createContext(counting, {
    clock: time,
    sleep: recordingSleep(),
    ids: seededIds(3),
  });
  await initDataset(ctx);
  await commitVersion(ctx, { branch: "main", files: [] });
  await commitVersion(ctx, { branch: "main", files: [] });
  const lease = await acquireLease(ctx, {
    format: holdfastLayout,
    branch: "main",
    version: 1,
    ttlMs: 60_000,
  });
  const manifest = (await memory.head(manifestKey("main", 2)))!;
  return { memory, counting, ctx, lease, manifest };
}

// docs/protocol.md §4.1.
describe("lease handles are checked before use", () => {
  it("hole 4: release given a handle whose key (and ETag) is a manifest's is refused and the manifest stays", async () => {
    const { memory, counting, ctx, lease, manifest } = await setup();
    const before = counting.totalRequests();
    for (const forged of [
      { ...lease, key: manifest.key },
      { ...lease, key: manifest.key, etag: manifest.etag },
    ]) {
      await expect(releaseLease(ctx, forged)).rejects.toMatchObject({
        kind: "invalid-input",
        code: INVALID_LEASE_HANDLE,
      });
    }
    expect(counting.totalRequests()).toBe(before);
    expect((await memory.head(manifest.key))?.etag).toBe(manifest.etag);
  });

  it("hole 4: on a store whose DELETE ignores If-Match (RGW), release given a manifest's key is refused and the manifest stays", async () => {
    const time = new FakeTime(Date.UTC(2026, 0, 1));
    const memory = new MemoryStore({ clock: time, conditionalDelete: false });
    const ctx = createContext(memory, { clock: time, sleep: recordingSleep(), ids: seededIds(4) });
    await initDataset(ctx);
    await commitVersion(ctx, { branch: "main", files: [] });
    await commitVersion(ctx, { branch: "main", files: [] });
    const lease = await acquireLease(ctx, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    const manifest = (await memory.head(manifestKey("main", 2)))!;
    await expect(releaseLease(ctx, { ...lease, key: manifest.key })).rejects.toMatchObject({
      kind: "invalid-input",
      code: INVALID_LEASE_HANDLE,
    });
    expect((await memory.head(manifest.key))?.etag).toBe(manifest.etag);
  });

  it("hole 4: renew given a manifest's key and ETag is refused and the manifest keeps its bytes", async () => {
    const { memory, counting, ctx, lease, manifest } = await setup();
    const bodyBefore = (await memory.get(manifest.key))!.body;
    const forged = { ...lease, key: manifest.key, etag: manifest.etag };
    const before = counting.totalRequests();
    await expect(renewLease(ctx, forged)).rejects.toMatchObject({
      kind: "invalid-input",
      code: INVALID_LEASE_HANDLE,
    });
    expect(counting.totalRequests()).toBe(before);
    const after = (await memory.get(manifest.key))!;
    expect(after.etag).toBe(manifest.etag);
    expect(after.body).toEqual(bodyBefore);
  });

  it("refuses handles that name another lease, a foreign suffix, or lack an ETag, without a request", async () => {
    const { counting, ctx, lease } = await setup();
    const otherLease = leaseKey("main", 2, lease.leaseId, lease.secret);
    const forgeries: unknown[] = [
      null,
      "lease",
      { ...lease, key: otherLease },
      { ...lease, version: 2 },
      { ...lease, branch: "dev" },
      { ...lease, key: `${lease.key}.bak` },
      { ...lease, key: lease.key.replace("_holdfast/leases/", "_holdfast/leases//") },
      { ...lease, etag: "" },
      { ...lease, etag: undefined },
      { ...lease, leaseId: "not-a-ulid" },
      { ...lease, ttlMs: Number.NaN },
      { ...lease, writtenAtLocalMs: "soon" },
    ];
    const before = counting.totalRequests();
    for (const handle of forgeries) {
      await expect(releaseLease(ctx, handle as Lease)).rejects.toMatchObject({
        kind: "invalid-input",
      });
      await expect(renewLease(ctx, handle as Lease)).rejects.toMatchObject({
        kind: "invalid-input",
      });
    }
    expect(counting.totalRequests()).toBe(before);
  });

  it("release deletes its own lease at its ETag, also after a renewal whose answer was lost", async () => {
    const { memory, ctx, lease } = await setup();
    const renewed = await renewLease(ctx, lease);
    // The holder kept the older handle (the renewal's answer was lost): its ETag is stale.
    await releaseLease(ctx, lease);
    expect(await memory.head(renewed.key)).toBeNull();
  });
});
