import { FaultStore } from "@holdfast/conditional-store/testing";
import { manifestKey, readManifest } from "@holdfast/dataset";
import { acquireLease, deleteLeasesOf, listLeases, renewLease } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import {
  cancelReplaced,
  commit,
  drain,
  finalize,
  type RetirementHandle,
  recoverRetirements,
  retirementPrefix,
  seal,
} from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";
import { MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

// docs/protocol.md §5.4, *A stalled acquire*: an acquire whose lease PUT
// landed after the committer's censuses, and whose admission read came only after a later
// cancelReplaced, rewrites its lease before returning it. A recovered finalizer whose view W
// of the record predates the cancellation (but follows the lease PUT) then keeps the lease
// (invariant 1, L1).
describe("an acquire stalled across a commit and a cancellation", () => {
  it("L1 the stalled acquire rewrites its lease, which survives a recovered finalize with W after its PUT and renews", async () => {
    const { ctx, store, time, on } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    const candidates = [];
    for (const version of [1, 2]) {
      candidates.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
    }
    // A cleaner drained and sealed versions 1 and 2; its censuses saw no lease.
    const sealed = await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: candidates, owner: "01X" }),
    );
    const fault = new FaultStore(store, { sleep: time.sleep });
    const reader = on(fault);
    let recovered: RetirementHandle | undefined;
    let cancelledAt: Date | undefined;
    // The reader's lease PUT lands now; its admission read is held until, meanwhile, the
    // cleaner commits, a recovering cleaner reads the committed record (its view), version 2's
    // manifest is replaced and another cleaner's last look cancels version 2 (cancelReplaced).
    fault.on(
      { operation: "list", key: retirementPrefix("main") },
      {
        type: "before",
        run: async () => {
          await time.advance(2_000);
          const committed = await commit(ctx, sealed);
          const report = await recoverRetirements(ctx, {
            leaseCensus: async () => new Map(),
            referenceCensus: async () => new Map(),
          });
          recovered = report.committed.find((h) => h.key === committed.key);
          await time.advance(2_000);
          const body = (await store.get(manifestKey("main", 2)))!.body;
          await store.delete(manifestKey("main", 2));
          const { etag: replaced } = await store.put(manifestKey("main", 2), body);
          await cancelReplaced(ctx, committed.key, new Map([[2, replaced]]));
          cancelledAt = (await store.head(committed.key))!.lastModified;
        },
      },
    );
    const putAt = time.now();
    const lease = await acquireLease(reader, {
      format: holdfastFormat,
      branch: "main",
      version: 2,
      ttlMs: DEFAULT_MIN_VERSION_AGE_MS + 10 * MINUTE,
    });
    const acquireCounts = fault.requestCounts();
    // The recovered view is of the commit: after the lease PUT by more than a precision
    // interval, before the cancellation.
    expect(recovered!.record.versions.find((v) => v.version === 2)?.cancelled).toBe(false);
    expect(recovered!.lastModified!.getTime()).toBeGreaterThanOrEqual(putAt + 2_000);
    // The recovered finalizer: version 1's manifest is gone; version 2's recorded manifest is
    // absent too (replaced), so its stale view retires both.
    await store.delete(manifestKey("main", 1));
    await finalize(ctx, recovered!, {
      deleteLeases: (branch, versions, o) => deleteLeasesOf(ctx, branch, versions, o),
      presentManifests: async (_branch, versions) => {
        const present = new Set<number>();
        for (const v of versions) {
          const head = await store.head(manifestKey("main", v));
          const recorded = recovered!.record.versions.find((r) => r.version === v)!.manifestEtag;
          if (head?.etag === recorded) present.add(v);
        }
        return present;
      },
      leasesWrittenBefore: new Date(time.now()),
    });
    const leases = [];
    for await (const l of listLeases(ctx, { branch: "main" })) leases.push(l.key);
    expect(leases).toEqual([lease.key]);
    // Kept because the acquire rewrote it after the cancellation. The rare path costs one PUT
    // more than the common one: create, then the rewrite (the HEADs are the dataset marker's,
    // on this store object's first acquire, and the manifest's).
    expect(acquireCounts).toMatchObject({ put: 2, list: 1, get: 1, head: 2, delete: 0 });
    expect(lease.renewal).toBe(1);
    const stored = (await store.head(lease.key))!;
    expect(stored.etag).toBe(lease.etag);
    expect(stored.lastModified.getTime()).toBeGreaterThanOrEqual(cancelledAt!.getTime());
    // The record is gone (finalized): the renewal writes once.
    await expect(renewLease(reader, lease)).resolves.toMatchObject({ version: 2, renewal: 2 });
    // The next cleanup would retire version 2 (retainVersions 1) but for the lease.
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(versionsOf(store)).toEqual([2, 5]);
    expect(stats.retained.find((r) => r.version === 2)?.reason).toBe("lease");
    await expect(renewLease(reader, lease)).resolves.toMatchObject({ version: 2 });
  });

  it("L1 an acquire no record names costs 3 requests, as before (no rewrite)", async () => {
    const { ctx, store, time, on } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const candidates = [{ version: 1, manifestEtag: (await readManifest(ctx, "main", 1)).etag }];
    // A committed record of version 1 elsewhere on the branch does not name version 3.
    await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "01X" })),
    );
    const fault = new FaultStore(store, { sleep: time.sleep });
    const reader = on(fault);
    await acquireLease(reader, {
      format: holdfastFormat,
      branch: "main",
      version: 4,
      ttlMs: MINUTE,
    });
    fault.resetCounts();
    const lease = await acquireLease(reader, {
      format: holdfastFormat,
      branch: "main",
      version: 3,
      ttlMs: MINUTE,
    });
    expect(fault.requestCounts()).toEqual({
      get: 0,
      head: 1,
      put: 1,
      delete: 0,
      deleteMany: 0,
      list: 1,
    });
    expect(lease.renewal).toBe(0);
  });
});

// docs/protocol.md §5.4, *A stalled renewal*: a late renewal (its term
// ran out in flight, so the committer's censuses counted the lease expired) whose PUT landed
// before a recovered finalizer's view W, and whose admission read came only after a later
// cancelReplaced, writes its lease once more; the stale finalize then keeps it (invariant 1).
describe("a renewal stalled across a commit and a cancellation", () => {
  it("L1 the stalled renewal writes again after the cancellation, and survives a recovered finalize with W after its first PUT", async () => {
    const { ctx, store, time, on } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    const fault = new FaultStore(store, { sleep: time.sleep });
    const reader = on(fault);
    const lease = await acquireLease(reader, {
      format: holdfastFormat,
      branch: "main",
      version: 2,
      ttlMs: MINUTE,
    });
    const candidates = [];
    for (const version of [1, 2]) {
      candidates.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
    }
    // A cleaner drained and sealed versions 1 and 2; its censuses counted the lease expired.
    const sealed = await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: candidates, owner: "01X" }),
    );
    let recovered: RetirementHandle | undefined;
    let cancelledAt: Date | undefined;
    // The renewal's PUT lands just before the term ends; its admission read is held while the
    // cleaner commits, a recovering cleaner reads the committed record (its view W), version
    // 2's manifest is replaced and another cleaner's last look cancels it (cancelReplaced).
    await time.advance(MINUTE - 1_000);
    fault.on(
      { operation: "list", key: retirementPrefix("main") },
      {
        type: "before",
        run: async () => {
          await time.advance(2_000);
          const committed = await commit(ctx, sealed);
          const report = await recoverRetirements(ctx, {
            leaseCensus: async () => new Map(),
            referenceCensus: async () => new Map(),
          });
          recovered = report.committed.find((h) => h.key === committed.key);
          await time.advance(2_000);
          const body = (await store.get(manifestKey("main", 2)))!.body;
          await store.delete(manifestKey("main", 2));
          const { etag: replaced } = await store.put(manifestKey("main", 2), body);
          await cancelReplaced(ctx, committed.key, new Map([[2, replaced]]));
          cancelledAt = (await store.head(committed.key))!.lastModified;
        },
      },
    );
    const putAt = time.now();
    fault.resetCounts();
    const renewed = await renewLease(reader, lease);
    // Two lease PUTs; the admission LIST and GET; the manifest HEAD of a term that ran out.
    expect(fault.requestCounts()).toMatchObject({ put: 2, list: 1, get: 1, head: 1, delete: 0 });
    expect(recovered!.record.versions.find((v) => v.version === 2)?.cancelled).toBe(false);
    expect(recovered!.lastModified!.getTime()).toBeGreaterThanOrEqual(putAt + 2_000);
    await store.delete(manifestKey("main", 1));
    await finalize(ctx, recovered!, {
      deleteLeases: (branch, versions, o) => deleteLeasesOf(ctx, branch, versions, o),
      presentManifests: async (_branch, versions) => {
        const present = new Set<number>();
        for (const v of versions) {
          const head = await store.head(manifestKey("main", v));
          const recorded = recovered!.record.versions.find((r) => r.version === v)!.manifestEtag;
          if (head?.etag === recorded) present.add(v);
        }
        return present;
      },
      leasesWrittenBefore: new Date(time.now()),
    });
    const leases = [];
    for await (const l of listLeases(ctx, { branch: "main" })) leases.push(l.key);
    expect(leases).toEqual([lease.key]);
    const stored = (await store.head(lease.key))!;
    expect(stored.etag).toBe(renewed.etag);
    expect(stored.lastModified.getTime()).toBeGreaterThanOrEqual(cancelledAt!.getTime());
    expect(renewed.renewal).toBe(lease.renewal + 2);
  });
});
