import type { DatasetFormat, VersionBounds } from "@holdfast/dataset";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { seedDataset, world } from "./helpers.js";

// Cleanup 10 finalize (docs/protocol.md §5.4): the check that a record's manifests are gone
// asks the format for the record's versions only (`listVersions` with a range), so a format
// whose names sort by version (Lance V2) lists one run of keys per record, not the whole
// branch: a table of n versions cleaned in records of r made n/r listings of up to n
// versions each.

describe("Cleanup 10 finalize: the present-manifest check lists the record's range", () => {
  it("each record's finalize asks for exactly its versions; the rest of the run asks for every version", async () => {
    const { ctx, time, on, store } = world(12);
    await seedDataset(ctx, time, { versions: 25, filesPer: 1 });
    const ranges: (VersionBounds | undefined)[] = [];
    const format: DatasetFormat = {
      ...holdfastFormat,
      listVersions(c, branch, range) {
        ranges.push(range);
        return holdfastFormat.listVersions(c, branch, range);
      },
    };
    const stats = await cleanup(
      on(store),
      { retainVersions: 1 },
      { format, maxVersionsPerRecord: 10 },
    );
    expect(stats.objectsDeleted.manifests).toBe(24);
    const asked = ranges.filter((r) => r !== undefined);
    // Records of 10, 10 and 4 versions, each finalized once.
    expect(asked).toEqual([
      { from: 1, to: 10 },
      { from: 11, to: 20 },
      { from: 21, to: 24 },
    ]);
    // The plan and the last look list every version (no range).
    expect(ranges.filter((r) => r === undefined).length).toBeGreaterThanOrEqual(2);
  });
});
