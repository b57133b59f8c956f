import { manifestKey, readManifest } from "@holdfast/dataset";
import { acquireLease, deleteLeasesOf, listLeases, renewLease } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { cancelReplaced, commit, drain, finalize, readRecord, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";
import { MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

// docs/protocol.md §5.4: a finalizer holding a stale handle (read
// before another cleaner's `cancelReplaced`, as concurrent cleanups without the lock do)
// deletes only leases written before its view of the record, so a lease admitted after the
// cancellation keeps its version through the next cleanup (invariant 1, L1).
describe("a stale finalizer and a version cancelled after its view", () => {
  it("L1 the lease acquired after cancelReplaced survives the stale finalize and a following cleanup keeps its version", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    // A cleaner committed the retirement of versions 1 and 2; finalizer A read it then.
    const candidates = [];
    for (const version of [1, 2]) {
      candidates.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
    }
    const committed = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "01X" })),
    );
    const stale = (await readRecord(ctx, committed.key))!;
    await time.advance(2_000);
    // Version 1's manifest is deleted; version 2's key now holds another object (a repair).
    await store.delete(manifestKey("main", 1));
    const body = (await store.get(manifestKey("main", 2)))!.body;
    await store.delete(manifestKey("main", 2));
    const { etag: replaced } = await store.put(manifestKey("main", 2), body);
    // Another cleaner's last look cancels version 2: acquirable at once, and a reader takes it.
    await cancelReplaced(ctx, committed.key, new Map([[2, replaced]]));
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 2,
      ttlMs: DEFAULT_MIN_VERSION_AGE_MS + 10 * MINUTE,
    });
    // A finalizes with its stale view (both versions retired; the replaced manifest is absent).
    await finalize(ctx, stale, {
      deleteLeases: (branch, versions, o) => deleteLeasesOf(ctx, branch, versions, o),
      presentManifests: async (_branch, versions) => {
        const present = new Set<number>();
        for (const v of versions) {
          const head = await store.head(manifestKey("main", v));
          const recorded = stale.record.versions.find((r) => r.version === v)!.manifestEtag;
          if (head?.etag === recorded) present.add(v);
        }
        return present;
      },
    });
    const leases = [];
    for await (const l of listLeases(ctx, { branch: "main" })) leases.push(l.key);
    expect(leases).toEqual([lease.key]);
    // The next cleanup, once the repaired manifest is old enough, would retire version 2
    // (retainVersions 1) but for the lease.
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(versionsOf(store)).toEqual([2, 5]);
    expect(stats.retained.find((r) => r.version === 2)?.reason).toBe("lease");
    await expect(renewLease(ctx, lease)).resolves.toMatchObject({ version: 2 });
  });
});
