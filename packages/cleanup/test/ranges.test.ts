import { describe, expect, it } from "vitest";
import { RetiredLog, VersionSet } from "../src/ranges.js";

// Memory flat in the number of versions (docs/protocol.md §6.2): the
// versions a run listed and retired are kept as ranges. They must answer exactly what a
// plain set or list would.

describe("VersionSet", () => {
  it("answers membership exactly like a Set, in any insertion order", () => {
    let seed = 5;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 50; round += 1) {
      const set = new VersionSet();
      const plain = new Set<number>();
      const ascending = round % 2 === 0;
      let v = 0;
      for (let i = 0; i < 200; i += 1) {
        v = ascending ? v + 1 + (random(4) === 0 ? random(5) : 0) : 1 + random(300);
        set.add(v);
        plain.add(v);
      }
      expect(set.size).toBe(plain.size);
      for (let x = 0; x <= 1200; x += 1) expect(set.has(x)).toBe(plain.has(x));
      const expanded = [...set.ranges()].flatMap(({ from, to }) =>
        Array.from({ length: to - from + 1 }, (_, i) => from + i),
      );
      expect(expanded).toEqual([...plain].sort((a, b) => a - b));
    }
  });

  it("holds 100,000 consecutive versions as one range", () => {
    const set = new VersionSet();
    for (let v = 1; v <= 100_000; v += 1) set.add(v);
    expect([...set.ranges()]).toEqual([{ from: 1, to: 100_000 }]);
    expect(set.size).toBe(100_000);
  });
});

describe("RetiredLog", () => {
  it("reports ranges per branch, the count, and the list on demand", () => {
    const log = new RetiredLog();
    for (const v of [1, 2, 3, 5, 6]) log.push({ branch: "main", version: v });
    log.push({ branch: "dev", version: 4 });
    log.push({ branch: "main", version: 3 }); // counted once
    expect(log.count).toBe(6);
    expect(log.ranges()).toEqual([
      { branch: "main", from: 1, to: 3 },
      { branch: "main", from: 5, to: 6 },
      { branch: "dev", from: 4, to: 4 },
    ]);
    expect(log.toList()).toEqual([
      { branch: "main", version: 1 },
      { branch: "main", version: 2 },
      { branch: "main", version: 3 },
      { branch: "main", version: 5 },
      { branch: "main", version: 6 },
      { branch: "dev", version: 4 },
    ]);
  });
});
