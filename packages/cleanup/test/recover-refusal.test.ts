import { manifestKey, readManifest } from "@holdfast/dataset";
import { acquireLease, releaseLease, renewLease } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { commit, drain, readRecord, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup, recover } from "../src/index.js";
import { keysUnder, RecordingStore, seedDataset, versionsOf, world } from "./helpers.js";

const RECORDS = "_holdfast/retirement/";
const garbage = new TextEncoder().encode("not a manifest");

type Ctx = Parameters<typeof recover>[0];

/** Every listed version of `branch` can be leased (and the lease released). */
async function allAcquirable(ctx: Ctx, versions: number[], branch = "main") {
  for (const version of versions) {
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch,
      version,
      ttlMs: 60_000,
    });
    expect(lease.version).toBe(version);
    await releaseLease(ctx, lease);
  }
}

/** A crashed cleaner's record of `versions` of main, as it drained them, moved up to `state`. */
async function crashedRecord(ctx: Ctx, versions: number[], state: "sealed" | "committed") {
  const drained = [];
  for (const version of versions) {
    drained.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
  }
  const sealed = await seal(
    ctx,
    await drain(ctx, { branch: "main", versions: drained, owner: "01CRASHEDCLEANER" }),
  );
  return state === "sealed" ? sealed : commit(ctx, sealed);
}

/**
 * main 1..5 and a branch `side` (one version): the reference census of a main record reads
 * side's manifests (descendant lineage), so bytes the format refuses there stop it.
 */
async function twoBranches() {
  const w = world();
  await seedDataset(w.ctx, w.time, { versions: 5, filesPer: 1 });
  await seedDataset(w.ctx, w.time, { versions: 1, filesPer: 1, branch: "side" });
  const refused = manifestKey("side", 1);
  const original = (await w.store.get(refused))!.body;
  return { ...w, refused, original };
}

const runs = [
  ["recover", (ctx: Ctx) => recover(ctx, { format: holdfastFormat })],
  ["cleanup", (ctx: Ctx) => cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat })],
] as const;

// docs/protocol.md §5.3: a sealed record whose census meets a
// refusal is given up before its commit (cancelled, then deleted); the refusal is thrown
// unchanged, naming the file.
describe("a crashed cleaner's sealed record whose recovery census meets a refusal", () => {
  it.each(runs)(
    "invariant 5: %s gives it up (every version leasable, a lease it blocked renews again), deletes nothing and throws the refusal by name; once repaired, recover and cleanup settle everything",
    async (_name, run) => {
      const { ctx, store, refused, original } = await twoBranches();
      // A reader leased 2 before the crashed cleaner drained; its renewals stopped at the seal.
      const lease = await acquireLease(ctx, {
        format: holdfastFormat,
        branch: "main",
        version: 2,
        ttlMs: 10 * 60_000,
      });
      const sealed = await crashedRecord(ctx, [1, 2, 3], "sealed");
      await expect(renewLease(ctx, lease)).rejects.toMatchObject({ code: "SEALED" });
      await store.put(refused, garbage);
      const recording = new RecordingStore(store);
      const rctx = { ...ctx, store: recording };

      await expect(run(rctx)).rejects.toMatchObject({
        kind: "invalid-input",
        code: "MALFORMED_OBJECT",
        key: refused,
      });
      // The give-up: the if-match rewrite to cancelled, then its DELETE. No other record
      // written, no manifest or data file deleted.
      expect(recording.writesUnder(RECORDS)).toEqual([sealed.key, sealed.key]);
      expect(keysUnder(store, RECORDS)).toEqual([]);
      expect(recording.writesUnder("_versions/")).toEqual([]);
      expect(recording.writesUnder("data/")).toEqual([]);
      expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
      const renewed = await renewLease(ctx, lease);
      await allAcquirable(ctx, [1, 3, 4, 5]);

      // While the refusal lasts, recover has nothing left to do and a cleanup meets the
      // refusal in its plan, before its first record; once repaired, a cleanup retires as
      // usual (2 kept for its lease) and leaves no record.
      const again = new RecordingStore(store);
      const actx = { ...ctx, store: again };
      expect((await recover(actx, { format: holdfastFormat })).recovered).toEqual({
        committed: 0,
        cancelled: 0,
        retained: 0,
      });
      await expect(
        cleanup(actx, { retainVersions: 1 }, { format: holdfastFormat }),
      ).rejects.toMatchObject({ code: "MALFORMED_OBJECT", key: refused });
      expect(again.writesUnder(RECORDS)).toEqual([]);
      await store.put(refused, original);
      const settled = await recover(ctx, { format: holdfastFormat });
      expect(settled.recovered).toEqual({ committed: 0, cancelled: 0, retained: 0 });
      const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
      expect(stats.retained).toContainEqual(
        expect.objectContaining({ branch: "main", version: 2, reason: "lease" }),
      );
      expect(versionsOf(store)).toEqual([2, 5]);
      expect(keysUnder(store, RECORDS)).toEqual([]);
      await renewLease(ctx, renewed);
      await allAcquirable(ctx, [2, 5]);
      await allAcquirable(ctx, [1], "side");
    },
  );

  it.each(runs)(
    "invariant 5: %s still cancels a committed record's replaced version before throwing the refusal; the committed record runs to completion once repaired",
    async (_name, run) => {
      const { ctx, store, refused, original } = await twoBranches();
      const committed = await crashedRecord(ctx, [1, 2, 3], "committed");
      const sealed = await crashedRecord(ctx, [4], "sealed");
      // Version 2's manifest is replaced (a repair: another ETag); side's by refused bytes.
      const key2 = manifestKey("main", 2);
      const body2 = (await store.get(key2))!.body;
      await store.delete(key2);
      await store.put(key2, body2);
      await store.put(refused, garbage);
      const recording = new RecordingStore(store);

      await expect(run({ ...ctx, store: recording })).rejects.toMatchObject({
        code: "MALFORMED_OBJECT",
        key: refused,
      });
      // The sealed record given up (rewrite, DELETE), then the committed one's cancellation.
      expect(recording.writesUnder(RECORDS)).toEqual([sealed.key, sealed.key, committed.key]);
      expect(recording.writesUnder("_versions/")).toEqual([]);
      expect(recording.writesUnder("data/")).toEqual([]);
      const after = (await readRecord(ctx, committed.key))!.record;
      expect(after.state).toBe("committed");
      expect(after.versions.map((v) => [v.version, v.cancelled])).toEqual([
        [1, false],
        [2, true],
        [3, false],
      ]);
      await allAcquirable(ctx, [2, 4]);
      for (const version of [1, 3]) {
        await expect(
          acquireLease(ctx, { format: holdfastFormat, branch: "main", version, ttlMs: 60_000 }),
        ).rejects.toMatchObject({ code: "COMMITTED" });
      }

      await store.put(refused, original);
      const settled = await recover(ctx, { format: holdfastFormat });
      expect(settled.finished).toEqual([
        { branch: "main", version: 1 },
        { branch: "main", version: 3 },
      ]);
      expect(keysUnder(store, RECORDS)).toEqual([]);
      expect(versionsOf(store)).toEqual([2, 4, 5]);
      await allAcquirable(ctx, [2, 4, 5]);
    },
  );
});
