import { commitVersion, manifestKey, readManifest, writeDataFile } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { createBranch, deleteBranch, holdfastFormat } from "@holdfast/refs-lifecycle";
import { commit, drain, retirementPrefix, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";
import { keysUnder, MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

// docs/protocol.md §2.1, F1 "A branch torn down under a record": a branch deletion removes
// the branch's manifests and retirement state, but a cleaner's drain whose answer was lost
// can be re-issued after it and write the record again, which then goes on to commit.
// Cleanup must settle that record (its manifests are gone) without refusing to raise a
// floor above the branch's latest, and without blocking the other branches' records
// (invariant 5), nor delete a re-created branch's versions (invariant 1).
async function worldWithRecordOnTornDownBranch() {
  const w = world();
  const { ctx, store, time } = w;
  await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
  await createBranch(
    ctx,
    { name: "b", parent: { branch: "main", version: 5 } },
    { format: holdfastFormat },
  );
  for (let i = 0; i < 3; i += 1) {
    await commitVersion(ctx, { branch: "b", files: [await writeDataFile(ctx, new Uint8Array(4))] });
  }
  await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
  const versions = [];
  for (const version of [1, 2]) {
    versions.push({ version, manifestEtag: (await readManifest(ctx, "b", version)).etag });
  }
  const drained = await drain(ctx, { branch: "b", versions, owner: "01X" });
  const record = (await store.get(drained.key))!.body;
  await deleteBranch(ctx, "b", { format: holdfastFormat });
  expect(keysUnder(store, retirementPrefix("b"))).toEqual([]);
  // The drain's re-issue lands after the teardown; the cleaner seals and commits it.
  const { etag } = await store.put(drained.key, record, { precondition: { ifNoneMatch: "*" } });
  await commit(ctx, await seal(ctx, { ...drained, etag }));
  return w;
}

describe("a committed record on a branch torn down under it", () => {
  it("invariant 5 cleanup settles the record and still retires main's versions", async () => {
    const { ctx, store } = await worldWithRecordOnTornDownBranch();
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    expect(versionsOf(store, "main")).toEqual([5]);
    expect(stats.retired.map((r) => `${r.branch}@${r.version}`)).toEqual([
      "main@1",
      "main@2",
      "main@3",
      "main@4",
    ]);
  });

  it("invariant 1 a branch re-created under the same name keeps its versions and its lease", async () => {
    const { ctx, store } = await worldWithRecordOnTornDownBranch();
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 5 } },
      { format: holdfastFormat },
    );
    await commitVersion(ctx, { branch: "b", files: [await writeDataFile(ctx, new Uint8Array(4))] });
    const before = (await store.head(manifestKey("b", 1)))!.etag;
    await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    // The new incarnation's version 1 is another object than the recorded one: kept.
    expect((await store.head(manifestKey("b", 1)))?.etag).toBe(before);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    await expect(
      acquireLease(ctx, { format: holdfastFormat, branch: "b", version: 1, ttlMs: MINUTE }),
    ).resolves.toMatchObject({ version: 1 });
    // The next commit on the new incarnation takes the number after its latest.
    expect((await commitVersion(ctx, { branch: "b", files: [] })).version).toBe(2);
  });
});
