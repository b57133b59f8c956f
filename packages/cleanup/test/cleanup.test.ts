import {
  CountingStore,
  encodeJson,
  isHoldfastError,
  MemoryStore,
} from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { commitVersion, writeDataFile } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { createTag, holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import {
  cleanup,
  DEFAULT_MIN_VERSION_AGE_MS,
  planCleanup,
  TAGGED_OLD_VERSIONS,
} from "../src/index.js";
import {
  DAY,
  formatWithCensus,
  keysUnder,
  MINUTE,
  seedDataset,
  versionsOf,
  world,
} from "./helpers.js";

describe("cleanup", () => {
  it("retires by retainVersions, deletes unreferenced files, keeps shared ones, leaves no metadata", async () => {
    const { ctx, store, time } = world();
    const { sharedFile } = await seedDataset(ctx, time, { versions: 5, filesPer: 2, shared: true });
    const before = keysUnder(store, "data/").length;
    let manifestBytes = 0;
    for (const key of keysUnder(store, "_versions/main/").slice(0, 3)) {
      manifestBytes += (await store.get(key))!.body.byteLength;
    }
    const progress: string[] = [];
    const stats = await cleanup(
      ctx,
      { retainVersions: 2 },
      {
        format: holdfastFormat,
        onProgress: (p) => progress.push(p.phase),
      },
    );
    expect(versionsOf(store)).toEqual([4, 5]);
    expect(stats.retired.map((r) => r.version)).toEqual([1, 2, 3]);
    expect(stats.retained).toEqual([
      { branch: "main", version: 4, reason: "policy", reasons: ["policy"] },
      { branch: "main", version: 5, reason: "latest", reasons: ["latest"] },
    ]);
    expect(stats.objectsDeleted.manifests).toBe(3);
    // v1's first file is named by every later version: kept
    expect(stats.objectsDeleted.dataFiles).toBe(5);
    expect(keysUnder(store, "data/").length).toBe(before - 5);
    expect(store.keys()).toContain(sharedFile.key);
    // the 5 data files' bytes and the 3 retired manifests' own (the listing's sizes)
    expect(stats.deletedByKind.data).toEqual({ objects: 5, bytes: 11 + 2 * (10 + 11) });
    expect(stats.deletedByKind.manifests).toEqual({ objects: 3, bytes: manifestBytes });
    expect(stats.bytesDeleted).toBe(11 + 2 * (10 + 11) + manifestBytes);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    expect(keysUnder(store, "_holdfast/clock/")).toEqual([]);
    expect(new Set(progress)).toEqual(new Set(["recover", "plan", "retire", "delete", "orphans"]));
    expect(stats.requests.total).toBe(
      Object.entries(stats.requests)
        .filter(([k]) => k !== "total")
        .reduce((n, [, v]) => n + v, 0),
    );
    expect(stats.requests.put).toBeGreaterThanOrEqual(4); // probe, drain, seal, commit
  });

  it("always keeps the latest version of every branch", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    await seedDataset(ctx, time, { versions: 1, branch: "side" });
    const stats = await cleanup(
      ctx,
      { beforeVersion: 100 },
      { format: formatWithCensus(async () => new Map()) },
    );
    expect(versionsOf(store)).toEqual([3]);
    expect(versionsOf(store, "side")).toEqual([1]);
    expect(stats.retained.filter((r) => r.reason === "latest")).toHaveLength(2);
  });

  it("olderThan compares manifest Last-Modified with storage time, not the local clock", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 4 }); // one minute apart
    // The cleaner's local clock is a day ahead: storage time decides.
    const skewed = { ...ctx, clock: { now: () => time.now() + DAY } };
    await cleanup(
      skewed,
      { olderThanMs: DEFAULT_MIN_VERSION_AGE_MS + 2 * MINUTE + 30_000 },
      { format: formatWithCensus(async () => new Map()) },
    );
    expect(versionsOf(store)).toEqual([3, 4]);
  });

  it("never retires a version younger than the minimum age, whatever the policy", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    // Two more versions committed just now: a writer may still be re-issuing them.
    expect((await commitVersion(ctx, { branch: "main", files: [] })).version).toBe(4);
    expect((await commitVersion(ctx, { branch: "main", files: [] })).version).toBe(5);
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS - MINUTE);
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      { format: formatWithCensus(async () => new Map()) },
    );
    expect(versionsOf(store)).toEqual([4, 5]);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 4, reason: "recent" }),
    );
    await time.advance(2 * MINUTE);
    await cleanup(ctx, { retainVersions: 1 }, { format: formatWithCensus(async () => new Map()) });
    expect(versionsOf(store)).toEqual([5]);
    await expect(
      cleanup(ctx, { retainVersions: 1, minVersionAgeMs: -1 }, { format: holdfastFormat }),
    ).rejects.toMatchObject({
      kind: "invalid-input",
    });
  });

  it("beforeVersion and olderThan combine", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    await cleanup(
      ctx,
      { beforeVersion: 2, olderThanMs: 0 },
      { format: formatWithCensus(async () => new Map()) },
    );
    expect(versionsOf(store)).toEqual([2, 3, 4, 5]);
  });

  it("rejects a bad policy before writing anything", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    const keys = store.keys();
    for (const policy of [
      {},
      { retainVersions: 0 },
      { olderThanMs: -1 },
      { beforeVersion: 1.5 },
      { retainVersions: 1, branches: ["../x"] },
    ]) {
      const error = await cleanup(ctx, policy, {
        format: formatWithCensus(async () => new Map()),
      }).catch((e) => e);
      expect(isHoldfastError(error, "invalid-input")).toBe(true);
    }
    expect(store.keys()).toEqual(keys);
  });

  it("errorIfTaggedOldVersions fails with a typed error before any retirement write", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    await store.put(
      "_refs/tags/keep.json",
      encodeJson({ schema: 1, name: "keep", target: { branch: "main", version: 1 } }),
    );
    const error = await cleanup(
      ctx,
      { retainVersions: 1, errorIfTaggedOldVersions: true },
      { format: holdfastFormat },
    ).catch((e) => e);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error.code).toBe(TAGGED_OLD_VERSIONS);
    expect(versionsOf(store)).toEqual([1, 2, 3]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    // without the flag the tag simply retains its version
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(versionsOf(store)).toEqual([1, 3]);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "tag" }),
    );
  });

  it("deletes orphan data files older than the grace only", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    const old = await writeDataFile(ctx, new Uint8Array(7));
    await time.advance(8 * DAY);
    const young = await writeDataFile(ctx, new Uint8Array(9));
    const stats = await cleanup(
      ctx,
      { retainVersions: 5 },
      { format: formatWithCensus(async () => new Map()) },
    );
    expect(stats.objectsDeleted.orphans).toBe(1);
    expect(store.keys()).not.toContain(old.key);
    expect(store.keys()).toContain(young.key);
    expect(versionsOf(store)).toEqual([1, 2]);
  });

  it("deletes in backend-sized batches", async () => {
    const { ctx: base, time } = world();
    const counting = new CountingStore(
      new FaultStore(base.store, { capabilities: { maxBatchDelete: 3 } }),
    );
    const ctx = { ...base, store: counting };
    await seedDataset(ctx, time, { versions: 6, filesPer: 2 });
    counting.resetCounts();
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      { format: formatWithCensus(async () => new Map()), concurrency: 2 },
    );
    expect(stats.objectsDeleted.dataFiles).toBe(10);
    // 10 data files in batches of 3 (4 requests), 5 manifests (2); no leases, no orphans
    expect(counting.requestCounts().deleteMany).toBe(4 + 2);
  });

  it("planCleanup makes the same decisions with zero writes", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 6, shared: true });
    await writeDataFile(ctx, new Uint8Array(3)); // an orphan
    await time.advance(8 * DAY);
    await store.put(
      "_refs/tags/t.json",
      encodeJson({ schema: 1, name: "t", target: { branch: "main", version: 2 } }),
    );
    const counting = new CountingStore(store);
    const planCtx = { ...ctx, store: counting };
    const plan = await planCleanup(
      planCtx,
      { retainVersions: 2 },
      {
        format: holdfastFormat,
        storageNow: new Date(time.now()),
      },
    );
    const writes = counting.requestCounts();
    expect(writes.put + writes.delete + writes.deleteMany).toBe(0);
    expect(plan.dryRun).toBe(true);
    const real = await cleanup(ctx, { retainVersions: 2 }, { format: holdfastFormat });
    expect(plan.retired).toEqual(real.retired);
    expect(sortRetained(plan.retained)).toEqual(sortRetained(real.retained));
    expect(plan.objectsDeleted).toEqual(real.objectsDeleted);
    expect(plan.bytesDeleted).toBe(real.bytesDeleted);
  });
  it("splits a branch's candidates over several bounded records", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 8, filesPer: 1 });
    const counting = new CountingStore(store);
    const stats = await cleanup(
      { ...ctx, store: counting },
      { retainVersions: 1 },
      { format: holdfastFormat, maxVersionsPerRecord: 3 },
    );
    expect(stats.retired.map((r) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // 3 records x (drain, seal, commit, deletion mark before its first delete: docs/protocol.md
    // §5.5) + the cleanup lock (its stamp is the run's "now") + the head hint's retired floor,
    // raised once for the branch (§2, F1)
    expect(counting.requestCounts().put).toBe(3 * 4 + 1 + 1);
    expect(versionsOf(store)).toEqual([8]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });

  it("runs on an RGW-like store: content-MD5 ETags, no conditional delete", async () => {
    const { time } = world();
    const store = new MemoryStore({
      clock: time,
      etagMode: "content-md5",
      conditionalDelete: false,
    });
    const ctx = { ...world().ctx, store };
    await seedDataset(ctx, time, { versions: 4 });
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 2, ttlMs: 60_000 });
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(versionsOf(store)).toEqual([2, 4]);
    expect(stats.retained).toContainEqual({
      branch: "main",
      version: 2,
      reason: "lease",
      reasons: ["lease"],
    });
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });
});

describe("every reason a kept version is kept (docs/operations.md)", () => {
  for (const dryRun of [true, false]) {
    it(`${dryRun ? "the plan" : "the run"}: a leased and tagged version inside retainVersions shows policy, lease and tag; the leased latest shows latest and lease`, async () => {
      const { ctx, time } = world(21);
      await seedDataset(ctx, time, { versions: 6 });
      await acquireLease(ctx, {
        format: holdfastFormat,
        branch: "main",
        version: 5,
        ttlMs: 600_000,
      });
      await acquireLease(ctx, {
        format: holdfastFormat,
        branch: "main",
        version: 6,
        ttlMs: 600_000,
      });
      await createTag(
        ctx,
        { name: "v5", target: { branch: "main", version: 5 } },
        { format: holdfastFormat },
      );
      const stats = await cleanup(ctx, { retainVersions: 3, dryRun }, { format: holdfastFormat });
      const of = (v: number) => stats.retained.find((k) => k.version === v);
      expect(of(5)).toEqual({
        branch: "main",
        version: 5,
        reason: "policy",
        reasons: ["policy", "lease", "tag"],
      });
      expect(of(6)).toEqual({
        branch: "main",
        version: 6,
        reason: "latest",
        reasons: ["latest", "lease"],
      });
      expect(of(4)?.reasons).toEqual(["policy"]);
    });
  }
});

function sortRetained(list: { branch: string; version: number; reason: string }[]) {
  return [...list].sort((a, b) => a.version - b.version);
}
