import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup, TAGGED_OLD_VERSIONS } from "../src/index.js";
import { keysUnder, seedDataset, versionsOf, world } from "./helpers.js";

// docs/protocol.md §6.1 and §6.2: the plan streams each
// record's candidates to the reads that validate them, and the first record is drained only
// once every manifest of the run is read; the tag policy still fails before any retirement write.

describe("streamed plan", () => {
  it("reads every manifest of the plan, the latest included, before the first drain; each record is re-read once at deletion", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 40, filesPer: 1 });
    const fault = new FaultStore(store);
    const stats = await cleanup(
      { ...ctx, store: fault },
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        maxVersionsPerRecord: 10,
        format: holdfastFormat,
      },
    );
    expect(stats.retiredRanges).toEqual([{ branch: "main", from: 1, to: 39 }]);
    expect(stats.retired).toHaveLength(39);
    expect(versionsOf(store)).toEqual([40]);
    // Four records; the first drain (create-only PUT of a record) comes after the plan
    // reached the end of the branch (where it reads the latest version's manifest), and
    // after every manifest read before the commits (each of the 40 read once).
    const log = fault.requests();
    const firstDrain = log.findIndex(
      (r) => r.operation === "put" && r.key.startsWith("_holdfast/retirement/main/"),
    );
    const latestRead = log.findIndex(
      (r) => r.operation === "get" && r.key === "_versions/main/00000000000000000040.json",
    );
    expect(firstDrain).toBeGreaterThanOrEqual(0);
    expect(latestRead).toBeGreaterThanOrEqual(0);
    expect(firstDrain).toBeGreaterThan(latestRead);
    const manifestReads = log
      .map((r, i) => ({ ...r, i }))
      .filter((r) => r.operation === "get" && r.key.startsWith("_versions/main/"));
    expect(manifestReads).toHaveLength(40);
    expect(manifestReads.every((r) => r.i < firstDrain)).toBe(true);
    // Each committed record is re-read once at deletion (its versions are not held).
    const recordGets = log.filter(
      (r) => r.operation === "get" && r.key.startsWith("_holdfast/retirement/main/"),
    );
    expect(recordGets).toHaveLength(4);
  });

  it("a tag in the last record still fails the run before any retirement write", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 40, filesPer: 1 });
    await store.put(
      "_refs/tags/keep.json",
      encodeJson({ schema: 1, name: "keep", target: { branch: "main", version: 35 } }),
    );
    const error = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, errorIfTaggedOldVersions: true },
      {
        maxVersionsPerRecord: 10,
        format: holdfastFormat,
      },
    ).catch((e) => e);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error.code).toBe(TAGGED_OLD_VERSIONS);
    expect(versionsOf(store)).toHaveLength(40);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });
});
