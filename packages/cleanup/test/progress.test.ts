import { FakeTime } from "@holdfast/conditional-store/testing";
import { commitVersion, writeDataFile } from "@holdfast/dataset";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import {
  type CleanupProgress,
  cleanup,
  DEFAULT_ORPHAN_GRACE_MS,
  ProgressTracker,
  planCleanup,
  progressEstimate,
  recover,
} from "../src/index.js";
import { CrashStore, keysUnder, seedDataset, world } from "./helpers.js";

const at = (ms: number, progress: CleanupProgress) => ({ at: ms, progress });

describe("progressEstimate: rate and ETA on an injected clock", () => {
  it("rate over the phase since its first event, left and ETA from the total", () => {
    const events = [
      at(0, { phase: "plan", done: 500 }),
      at(1_000, { phase: "delete", done: 0, total: 1_000 }),
      at(3_000, { phase: "delete", done: 200, total: 1_000 }),
    ];
    // 200 objects in 4 s (first delete event to now) = 50/s; 800 left = 16 s
    expect(progressEstimate(events, 5_000)).toEqual({
      phase: "delete",
      done: 200,
      total: 1_000,
      left: 800,
      ratePerSec: 50,
      etaMs: 16_000,
      elapsedMs: 4_000,
    });
  });

  it("unknown total: rate only; no progress yet: no rate, no ETA; nothing left: ETA 0", () => {
    const plan = progressEstimate(
      [at(0, { phase: "plan", done: 0 }), at(2_000, { phase: "plan", done: 300 })],
      2_000,
    );
    expect(plan).toMatchObject({ done: 300, total: undefined, left: undefined, ratePerSec: 150 });
    expect(plan?.etaMs).toBeUndefined();
    const stalled = progressEstimate([at(0, { phase: "delete", done: 0, total: 10 })], 9_000);
    expect(stalled).toMatchObject({ left: 10, ratePerSec: undefined, etaMs: undefined });
    const over = progressEstimate([at(0, { phase: "delete", done: 10, total: 10 })], 0);
    expect(over).toMatchObject({ left: 0, etaMs: 0 });
    expect(progressEstimate([], 0)).toBeUndefined();
  });

  it("the tracker keeps two events per phase and stamps them with its clock", () => {
    const time = new FakeTime(10_000);
    const tracker = new ProgressTracker(time);
    expect(tracker.estimate()).toBeUndefined();
    tracker.record({ phase: "delete", done: 0, total: 100 });
    time.set(12_000);
    tracker.record({ phase: "delete", done: 40, total: 100 });
    time.set(14_000);
    expect(tracker.estimate()).toMatchObject({ ratePerSec: 10, left: 60, etaMs: 6_000 });
    tracker.record({ phase: "orphans", done: 0 });
    expect(tracker.estimate()).toMatchObject({ phase: "orphans", elapsedMs: 0 });
  });
});

/** Seeds 12 versions of 3 files (records of 4 versions) and one orphan past the grace. */
async function seeded(seed: number) {
  const w = world(seed);
  await seedDataset(w.ctx, w.time, { versions: 12, filesPer: 3 });
  await writeDataFile(w.ctx, new Uint8Array(7));
  await w.time.advance(DEFAULT_ORPHAN_GRACE_MS + 60_000);
  return w;
}

describe("progress of a run in objects (observation only)", () => {
  it("the same requests and outcome with and without onProgress", async () => {
    const quiet = await seeded(7);
    const watched = await seeded(7);
    const options = { format: holdfastFormat, maxVersionsPerRecord: 4, concurrency: 2 };
    const a = await cleanup(quiet.ctx, { retainVersions: 2 }, options);
    const events: CleanupProgress[] = [];
    const b = await cleanup(
      watched.ctx,
      { retainVersions: 2 },
      { ...options, onProgress: (p) => events.push(p) },
    );
    expect(events.length).toBeGreaterThan(10);
    expect(b.requests).toEqual(a.requests);
    expect(b.objectsDeleted).toEqual(a.objectsDeleted);
    expect(watched.store.keys()).toEqual(quiet.store.keys());
  });

  for (const dryRun of [false, true]) {
    it(`${dryRun ? "a plan" : "a run"}: the delete phase has its whole total from its first event (the manifests and the files they name, docs/protocol.md §6); its last done is the manifests and data files deleted`, async () => {
      const { ctx } = await seeded(3);
      const events: CleanupProgress[] = [];
      const run = dryRun ? planCleanup : cleanup;
      const stats = await run(
        ctx,
        { retainVersions: 2 },
        { format: holdfastFormat, maxVersionsPerRecord: 4, onProgress: (p) => events.push(p) },
      );
      const deletes = events.filter((e) => e.phase === "delete");
      // 10 versions retired, read before the drain: their 10 manifests and 30 data files are
      // the total before any delete, and it never grows
      expect(deletes[0]).toEqual({ phase: "delete", done: 0, total: 40 });
      for (const e of deletes) {
        expect(e.total).toBeGreaterThanOrEqual(e.done);
        expect(e.total).toBeLessThanOrEqual(40);
      }
      const deleted = stats.objectsDeleted.manifests + stats.objectsDeleted.dataFiles;
      expect(deleted).toBe(10 + 30);
      expect(deletes.at(-1)).toEqual({ phase: "delete", done: deleted, total: deleted });
      // done never goes back
      for (let i = 1; i < deletes.length; i++) {
        expect(deletes[i]!.done).toBeGreaterThanOrEqual(deletes[i - 1]!.done);
      }
      const sweep = events.filter((e) => e.phase === "orphans").at(-1);
      expect(sweep).toEqual({
        phase: "orphans",
        done: stats.objectsDeleted.total - deleted,
        total: stats.objectsDeleted.total - deleted,
      });
      expect(stats.objectsDeleted.orphans).toBe(1);
    });
  }
});

describe("every phase has its total before its first item (docs/operations.md, Reading progress)", () => {
  for (const dryRun of [false, true]) {
    it(`${dryRun ? "a plan" : "a run"} on versions that each name every file before them (a Lance table of appends): the delete total counts each file once and none retained, exact from the first event`, async () => {
      const { ctx, time } = world(11);
      await seedDataset(ctx, time, { versions: 30, filesPer: 1 });
      // Cumulative: version v names the files of versions 1..v, as Lance's appends do, so
      // the retained latest names every file and the 24 retired manifests name 300 entries.
      const all: { key: string; size: number }[] = [];
      for (let i = 0; i < 20; i += 1) {
        all.push(await writeDataFile(ctx, new Uint8Array(5)));
        await commitVersion(ctx, { branch: "main", files: [...all] });
        await time.advance(60_000);
      }
      await time.advance(10 * 60_000);
      const events: CleanupProgress[] = [];
      const run = dryRun ? planCleanup : cleanup;
      const stats = await run(
        ctx,
        { retainVersions: 5 },
        { format: holdfastFormat, onProgress: (p) => events.push(p) },
      );
      const phases = events.map((e) => e.phase);
      // in order, each phase once
      expect([...new Set(phases)]).toEqual(["recover", "plan", "retire", "delete", "orphans"]);
      const of = (phase: string) => events.filter((e) => e.phase === phase);
      // plan: 50 versions listed, each done once decided and read; never done > total
      // (its total once the listing ended: before, the listing's lead is not the whole)
      for (const e of of("plan"))
        if (e.total !== undefined) expect(e.done).toBeLessThanOrEqual(e.total);
      expect(of("plan").filter((e) => e.total !== undefined).length).toBeGreaterThan(0);
      expect(of("plan").at(-1)).toEqual({ phase: "plan", done: 50, total: 50 });
      // retire: the 45 candidates, known at its first event
      expect(of("retire")[0]).toEqual({ phase: "retire", done: 0, total: 45 });
      expect(of("retire").at(-1)).toEqual({ phase: "retire", done: 45, total: 45 });
      // delete: 45 manifests and the 30 files only the first 30 versions name (the
      // retained versions 46..50 name the 20 cumulative files), from the first event on
      const deleted = stats.objectsDeleted.manifests + stats.objectsDeleted.dataFiles;
      expect(deleted).toBe(45 + 30);
      for (const e of of("delete")) expect(e.total).toBe(deleted);
      expect(of("delete").at(-1)).toEqual({ phase: "delete", done: deleted, total: deleted });
    });
  }
});

describe("the delete phase's total is corrected as each record is read", () => {
  it("a committed record whose data files and two manifests an earlier run deleted: the total drops to what is left, and the last event has done = total", async () => {
    const { ctx, store, time, on } = world(5);
    await seedDataset(ctx, time, { versions: 6, filesPer: 1 });
    // The run crashes after its data-file batch landed: the record stays committed.
    const crashing = new CrashStore(
      store,
      (op, key) => op === "deleteMany" && key.startsWith("data/"),
      true,
    );
    await expect(
      cleanup(on(crashing), { retainVersions: 1 }, { format: holdfastFormat }),
    ).rejects.toThrow(/crashed/);
    // ... and two of its five manifests went too (an earlier manifest batch).
    for (const key of keysUnder(store, "_versions/main/").slice(0, 2)) await store.delete(key);
    await time.advance(2 * 60_000); // the crashed run's lock runs out
    const events: CleanupProgress[] = [];
    const stats = await recover(ctx, { format: holdfastFormat, onProgress: (p) => events.push(p) });
    const deletes = events.filter((e) => e.phase === "delete");
    expect(deletes[0]).toEqual({ phase: "delete", done: 0, total: 5 });
    const deleted = stats.objectsDeleted.manifests + stats.objectsDeleted.dataFiles;
    expect(stats.objectsDeleted.manifests).toBe(3);
    expect(deletes.at(-1)).toEqual({ phase: "delete", done: deleted, total: deleted });
  });
});
