import type { MemoryStore } from "@holdfast/conditional-store";
import { manifestKey, readManifest } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { censusReferences } from "@holdfast/refs-lifecycle";
import { commit, drain, readAdmission, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup, recover } from "../src/index.js";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";
import {
  HookStore,
  keysUnder,
  MINUTE,
  RecordingStore,
  seedDataset,
  versionsOf,
  world,
} from "./helpers.js";

const RECORDS = "_holdfast/retirement/";
const garbage = new TextEncoder().encode("not a manifest");

/** Every listed version of `branch` can be leased (and the lease released). */
async function allAcquirable(
  ctx: Parameters<typeof acquireLease>[0],
  versions: number[],
  branch = "main",
) {
  for (const version of versions) {
    const lease = await acquireLease(ctx, { branch, version, ttlMs: 60_000 });
    expect(lease.version).toBe(version);
  }
}

/** Replaces the object at `key` with the same bytes: another object, another ETag. */
async function replace(store: MemoryStore, key: string) {
  const body = (await store.get(key))!.body;
  await store.delete(key);
  await store.put(key, body);
}

// docs/protocol.md, Cleanup "Refuse before the commit": every manifest a run retires or keeps
// is read and validated by the format before its first retirement record (the drain); a
// refusal writes no `_holdfast/retirement/` object at all and releases the cleanup lock.
describe("manifests the format refuses, found before the first retirement write", () => {
  it.each([
    ["a candidate", 2, 5, {}],
    ["the latest version", 5, 5, {}],
    ["a version the window keeps", 4, 5, { retainVersions: 3 }],
    ["the latest, three records after the first", 25, 25, { maxVersionsPerRecord: 10 }],
  ] as const)(
    "invariant 5: a corrupt manifest of %s stops the run before any retirement write; every version stays acquirable",
    async (_name, corrupt, versions, extra) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions, filesPer: 1 });
      await store.put(manifestKey("main", corrupt), garbage);
      await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE); // old enough to be a candidate
      const recording = new RecordingStore(store);
      const rctx = { ...ctx, store: recording };
      const { maxVersionsPerRecord, ...policy } = { retainVersions: 1, ...extra } as {
        retainVersions: number;
        maxVersionsPerRecord?: number;
      };
      const error = await cleanup(rctx, policy, {
        referenceCensus: censusReferences(rctx),
        maxVersionsPerRecord,
      }).catch((e) => e);
      expect(error).toMatchObject({
        kind: "invalid-input",
        code: "MALFORMED_OBJECT",
        key: manifestKey("main", corrupt),
      });
      // Not one retirement write (drain, seal, abandon), not one deletion of a manifest or file.
      expect(recording.writesUnder(RECORDS)).toEqual([]);
      expect(recording.writesUnder("_versions/")).toEqual([]);
      expect(recording.writesUnder("data/")).toEqual([]);
      // The lock was taken and released.
      expect(recording.writesUnder("_holdfast/cleanup/lock.json")).toHaveLength(2);
      expect(keysUnder(store, "_holdfast/cleanup/")).toEqual([]);
      expect(versionsOf(store)).toHaveLength(versions);
      for (let v = 1; v < versions; v += 1) {
        expect((await readAdmission(ctx, "main", v)).state).toBe("open");
      }
      await allAcquirable(
        ctx,
        Array.from({ length: versions }, (_, i) => i + 1),
      );
    },
  );

  it("a manifest replaced between the listing and its read is kept (reason changed) and never drained", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const key = manifestKey("main", 2);
    const before = await readManifest(ctx, "main", 2);
    let replaced = false;
    const hook = new HookStore(store, async (op, k) => {
      if (op === "get" && k === key && !replaced) {
        replaced = true;
        await replace(store, key);
      }
    });
    const hctx = { ...ctx, store: hook };
    const stats = await cleanup(
      hctx,
      { retainVersions: 1 },
      { referenceCensus: censusReferences(hctx) },
    );
    expect(replaced).toBe(true);
    expect(stats.retained).toContainEqual({ branch: "main", version: 2, reason: "changed" });
    expect(stats.retiredRanges).toEqual([
      { branch: "main", from: 1, to: 1 },
      { branch: "main", from: 3, to: 4 },
    ]);
    expect(versionsOf(store)).toEqual([2, 5]);
    for (const file of before.manifest.files) expect(await store.head(file.key)).not.toBeNull();
    expect(keysUnder(store, RECORDS)).toEqual([]);
    await allAcquirable(ctx, [2, 5]);
  });

  it("a manifest replaced between its read and the drain is kept (reason changed) with its files", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const key = manifestKey("main", 2);
    const before = await readManifest(ctx, "main", 2);
    let replaced = false;
    const hook = new HookStore(store, async (op, k) => {
      if (op === "put" && k.startsWith(RECORDS) && !replaced) {
        replaced = true; // the drain: every manifest was read before it
        await replace(store, key);
      }
    });
    const hctx = { ...ctx, store: hook };
    const stats = await cleanup(
      hctx,
      { retainVersions: 1 },
      { referenceCensus: censusReferences(hctx) },
    );
    expect(replaced).toBe(true);
    expect(stats.retained).toContainEqual({ branch: "main", version: 2, reason: "changed" });
    expect(versionsOf(store)).toEqual([2, 5]);
    for (const file of before.manifest.files) expect(await store.head(file.key)).not.toBeNull();
    expect(keysUnder(store, RECORDS)).toEqual([]);
    await allAcquirable(ctx, [2, 5]);
  });
});

// docs/protocol.md, Retirement "A recorded manifest that was replaced".
describe("a committed record whose manifest changed since it was drained", () => {
  it.each([
    ["recover", (c: Parameters<typeof recover>[0]) => recover(c)],
    [
      "the next cleanup",
      (c: Parameters<typeof recover>[0]) =>
        cleanup(c, { retainVersions: 5 }, { referenceCensus: censusReferences(c) }),
    ],
  ] as const)(
    "invariant 5: %s keeps the version and its files and removes the record; the version is acquirable again",
    async (_name, settle) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 4 });
      const drained = await readManifest(ctx, "main", 2);
      const committed = await commit(
        ctx,
        await seal(
          ctx,
          await drain(ctx, {
            branch: "main",
            versions: [{ version: 2, manifestEtag: drained.etag }],
            owner: "01CRASHEDCLEANER",
          }),
        ),
      );
      expect(committed.record.state).toBe("committed");
      // The manifest at the key is replaced (a repair): another object, another ETag.
      const key = manifestKey("main", 2);
      const body = (await store.get(key))!.body;
      await store.delete(key);
      await store.put(key, body);
      expect((await store.head(key))!.etag).not.toBe(drained.etag);
      await expect(
        acquireLease(ctx, { branch: "main", version: 2, ttlMs: 60_000 }),
      ).rejects.toMatchObject({
        code: "COMMITTED",
      });

      const stats = await settle(ctx);
      expect(stats.warnings.join("\n")).toMatch(
        /main@2: manifest changed since it was drained; kept/,
      );
      expect(keysUnder(store, RECORDS)).toEqual([]);
      expect(versionsOf(store)).toEqual([1, 2, 3, 4]);
      for (const file of drained.manifest.files) expect(await store.head(file.key)).not.toBeNull();
      await allAcquirable(ctx, [2]);
    },
  );
});
