import { describe, expect, it } from "vitest";
import { gaps, groupRanges, planRanges, rangeLabel, reasonsOf } from "../web/src/ranges.js";
import { describeCapability, describeSkew, formatBytes, formatDuration } from "../web/src/words.js";

// The dashboard's pure parts (apps/server/web/src): range grouping and the words it shows
// for capabilities, clock skew, bytes and durations. The browser test checks them on screen.

describe("range grouping", () => {
  const v = (branch: string, version: number, state: string) => ({ branch, version, state });

  it("groups consecutive versions of one branch with one key; a gap or a new key starts a range", () => {
    const ranges = groupRanges(
      [
        v("main", 3, "retire"),
        v("main", 1, "retire"),
        v("main", 2, "retire"),
        v("main", 4, "keep"),
        v("main", 6, "keep"),
        v("exp", 1, "keep"),
        v("exp", 2, "keep"),
      ],
      (i) => i.state,
    );
    expect(ranges.map((r) => [r.branch, r.from, r.to, r.items[0]!.state])).toEqual([
      ["main", 1, 3, "retire"],
      ["main", 4, 4, "keep"],
      ["main", 6, 6, "keep"],
      ["exp", 1, 2, "keep"],
    ]);
    expect(ranges[0]!.items.map((i) => i.version)).toEqual([1, 2, 3]);
  });

  it("3,000 versions in three states are three ranges, not 3,000 rows", () => {
    const items = Array.from({ length: 3000 }, (_, i) =>
      v("main", i + 1, i < 2990 ? "retire" : i === 2995 ? "leased" : "keep"),
    );
    const ranges = groupRanges(items, (i) => i.state);
    expect(ranges.map((r) => `${rangeLabel(r)} ${r.items[0]!.state}`)).toEqual([
      "1–2,990 retire",
      "2,991–2,995 keep",
      "2,996 leased",
      "2,997–3,000 keep",
    ]);
  });

  it("a version listed twice stays in its first range", () => {
    const ranges = groupRanges(
      [v("main", 1, "a"), v("main", 1, "b"), v("main", 2, "a")],
      (i) => i.state,
    );
    expect(ranges.map((r) => [r.from, r.to])).toEqual([[1, 2]]);
  });

  it("gaps: version numbers missing between the start and the highest listed", () => {
    expect(gaps([5, 6, 9, 10], 1)).toEqual([
      { from: 1, to: 4 },
      { from: 7, to: 8 },
    ]);
    expect(gaps([4, 5], 4)).toEqual([]);
    expect(gaps([], 1)).toEqual([]);
  });

  it("a plan groups by decision and by every reason; a plan with one reason per version reads as a one-element list", () => {
    const ranges = planRanges({
      retired: [
        { branch: "main", version: 1 },
        { branch: "main", version: 2 },
      ],
      retained: [
        { branch: "main", version: 3, reason: "tag" },
        { branch: "main", version: 4, reason: "lease", reasons: ["policy", "lease"] },
        { branch: "main", version: 5, reason: "lease", reasons: ["lease", "policy"] },
        { branch: "main", version: 6, reason: "policy" },
        { branch: "main", version: 7, reason: "policy" },
      ],
    });
    expect(
      ranges.map((r) => [rangeLabel(r), r.items[0]!.decision, r.items[0]!.reasons.join("+")]),
    ).toEqual([
      ["1–2", "retire", ""],
      ["3", "keep", "tag"],
      ["4–5", "keep", "lease+policy"],
      ["6–7", "keep", "policy"],
    ]);
    expect(reasonsOf({ reason: "latest" })).toEqual(["latest"]);
    expect(reasonsOf({ reason: "latest", reasons: [] })).toEqual(["latest"]);
  });
});

describe("words", () => {
  it("every capability a store declares reads as a sentence, never its field name", () => {
    const caps = {
      atomicConditionalUpdate: true,
      atomicConditionalDelete: false,
      timestampPrecisionMs: 1000,
      maxBatchDelete: 1000,
      requestMode: "single-attempt",
      etagIsContentHash: true,
    };
    for (const [name, value] of Object.entries(caps)) {
      const row = describeCapability(name, value);
      expect(row.name).not.toBe(name);
      expect(row.text).not.toContain(name);
      expect(row.text.endsWith(".")).toBe(true);
    }
    expect(describeCapability("timestampPrecisionMs", 1000).text).toContain("1 s");
    expect(describeCapability("atomicConditionalDelete", false).text).toContain("not honoured");
    // An unknown capability still shows, by its name.
    expect(describeCapability("futureThing", 3)).toEqual({
      name: "futureThing",
      text: "futureThing: 3",
    });
  });

  it("clock skew has one sign: positive means the store is ahead of this server", () => {
    expect(describeSkew(2500)).toBe("The store clock is 2.5 s ahead of this server.");
    expect(describeSkew(-4000)).toBe("The store clock is 4.0 s behind this server.");
    expect(describeSkew(-76)).toBe("The store clock is 0.08 s behind this server.");
    expect(describeSkew(20)).toContain("agrees");
    expect(describeSkew(null)).toContain("could not be compared");
  });

  it("bytes and durations", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(999)).toBe("999 B");
    expect(formatBytes(1234)).toBe("1.2 kB");
    expect(formatBytes(367_000_000)).toBe("367 MB");
    expect(formatDuration(850)).toBe("850 ms");
    expect(formatDuration(42_000)).toBe("42 s");
    expect(formatDuration(250_000)).toBe("4 min 10 s");
    expect(formatDuration(3 * 3_600_000 + 5 * 60_000)).toBe("3 h 5 min");
  });
});
