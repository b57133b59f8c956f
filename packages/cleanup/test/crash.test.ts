import { isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { listVersions, readManifest } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { CrashStore, keysUnder, MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

type Trigger = (op: string, key: string, conditional: boolean) => boolean;

const RECORD = /^_holdfast\/retirement\//;

function nthMatch(n: number, test: Trigger): Trigger {
  let seen = 0;
  return (op, key, conditional) => test(op, key, conditional) && ++seen === n;
}

const steps: [string, () => Trigger][] = [
  ["drain", () => (op, key, c) => op === "put" && RECORD.test(key) && c],
  ["seal", () => nthMatch(2, (op, key, c) => op === "put" && RECORD.test(key) && c)],
  ["commit", () => nthMatch(3, (op, key, c) => op === "put" && RECORD.test(key) && c)],
  ["data deletion", () => (op, key) => op === "deleteMany" && key.startsWith("data/")],
  ["manifest deletion", () => (op, key) => op === "deleteMany" && key.startsWith("_versions/")],
  ["lease deletion", () => (op, key) => op === "deleteMany" && key.startsWith("_holdfast/leases/")],
  ["marker deletion", () => (op, key) => op === "delete" && RECORD.test(key)],
];

describe("crash at each step, then recovery converges", () => {
  for (const [step, trigger] of steps) {
    for (const applied of [false, true]) {
      it(`crash at ${step} (${applied ? "after" : "before"} it applies) converges`, async () => {
        const { ctx, store, time, on } = world();
        await seedDataset(ctx, time, { versions: 5, filesPer: 2, shared: true });
        await acquireLease(ctx, {
          format: holdfastFormat,
          branch: "main",
          version: 1,
          ttlMs: 1_000,
        });
        await time.advance(5_000);
        const crashing = new CrashStore(store, trigger(), applied);
        const error = await cleanup(
          on(crashing),
          { retainVersions: 2 },
          { format: holdfastFormat },
        ).catch((e) => e);
        expect(crashing.crashed).toBe(true);
        expect(isHoldfastError(error)).toBe(true);
        // A new process, after the dead owner's bound.
        await time.advance(16 * MINUTE);
        await cleanup(on(store), { retainVersions: 2 }, { format: holdfastFormat });
        expect(versionsOf(store)).toEqual([4, 5]);
        expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
        expect(keysUnder(store, "_holdfast/leases/")).toEqual([]);
        expect(keysUnder(store, "_holdfast/clock/")).toEqual([]);
        const needed = new Set<string>();
        for await (const e of listVersions(ctx, "main")) {
          for (const f of (await readManifest(ctx, "main", e.version)).manifest.files)
            needed.add(f.key);
        }
        expect(new Set(keysUnder(store, "data/"))).toEqual(needed);
      });
    }
  }
});

describe("unknown commit outcome", () => {
  it("stops deletion until a later run resolves the record", async () => {
    const { ctx, store, time, on } = world();
    await seedDataset(ctx, time, { versions: 4 });
    const dataBefore = keysUnder(store, "data/");
    const faulty = new FaultStore(store);
    // the seal lands; every copy of the commit (and of the abandon after it) is lost
    faulty.on(
      {
        operation: "put",
        key: RECORD,
        precondition: "if-match",
        nth: 2,
        times: Number.POSITIVE_INFINITY,
      },
      { type: "lose-before-apply" },
    );
    const error = await cleanup(
      on(faulty),
      { retainVersions: 1 },
      { format: holdfastFormat },
    ).catch((e) => e);
    expect(isHoldfastError(error, "unresolved")).toBe(true);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4]);
    expect(keysUnder(store, "data/")).toEqual(dataBefore);
    expect(keysUnder(store, "_holdfast/retirement/")).toHaveLength(1);
    await time.advance(16 * MINUTE);
    const stats = await cleanup(on(store), { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.recovered.committed).toBe(1);
    expect(versionsOf(store)).toEqual([4]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });

  it("a commit whose answer was lost but which landed proceeds after reading it back", async () => {
    const { ctx, store, time, on } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const faulty = new FaultStore(store);
    faulty.on(
      { operation: "put", key: RECORD, precondition: "if-match", nth: 2 },
      { type: "apply-then-lose" },
    );
    const stats = await cleanup(on(faulty), { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.retired).toHaveLength(2);
    expect(versionsOf(store)).toEqual([3]);
  });
});
