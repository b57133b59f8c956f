import { manifestKey, readManifest } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { censusReferences } from "@holdfast/refs-lifecycle";
import { commit, drain, readAdmission, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup, recover } from "../src/index.js";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";
import { keysUnder, MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

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

// docs/protocol.md, Cleanup "Refuse before the commit": every manifest a run retires or keeps
// is read and validated before its first retirement commit; a refusal leaves no record.
describe("manifests the format refuses, found before the commit boundary", () => {
  it("invariant 5: a corrupt manifest of a candidate stops the run before its commit; no record is left and every version stays acquirable", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    await store.put(manifestKey("main", 2), garbage);
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE); // old enough to be a candidate
    const error = await cleanup(
      ctx,
      { retainVersions: 1 },
      { referenceCensus: censusReferences(ctx) },
    ).catch((e) => e);
    expect(error).toMatchObject({ kind: "invalid-input", code: "MALFORMED_OBJECT" });
    expect(keysUnder(store, RECORDS)).toEqual([]);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    for (const v of [1, 2, 3, 4]) expect((await readAdmission(ctx, "main", v)).state).toBe("open");
    await allAcquirable(ctx, [1, 2, 3, 4, 5]);
  });

  it("invariant 5: a corrupt latest manifest, read after the branch's first records are sealed, stops the run before any commit", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 25, filesPer: 1 });
    // Records of 10 versions: the first two are retired before the plan reaches version 25.
    await store.put(manifestKey("main", 25), garbage);
    const error = await cleanup(
      ctx,
      { retainVersions: 1 },
      { referenceCensus: censusReferences(ctx), maxVersionsPerRecord: 10 },
    ).catch((e) => e);
    expect(error).toMatchObject({ kind: "invalid-input", code: "MALFORMED_OBJECT" });
    expect(keysUnder(store, RECORDS)).toEqual([]);
    expect(versionsOf(store)).toHaveLength(25);
    await allAcquirable(
      ctx,
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
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
