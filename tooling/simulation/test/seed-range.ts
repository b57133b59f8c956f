import { expect, it } from "vitest";
import { DEFAULT_SIMULATION, runSimulation } from "../src/index.js";

/** Seeds CI runs in all (override with HOLDFAST_SIM_SEEDS / HOLDFAST_SIM_FIRST_SEED). */
const TOTAL = Number(process.env.HOLDFAST_SIM_SEEDS ?? 500);
const FIRST = Number(process.env.HOLDFAST_SIM_FIRST_SEED ?? 1);
/** The seed range is split across this many test files so vitest runs them in parallel. */
export const SLICES = 5;

/** Defines one test per seed of slice `slice` (0-based) of the CI range. */
export function seedSlice(slice: number): void {
  const per = Math.ceil(TOTAL / SLICES);
  const start = FIRST + slice * per;
  const end = Math.min(FIRST + TOTAL, start + per);
  it(`slice ${slice + 1}/${SLICES} of the CI seeds is not empty`, () => {
    expect(TOTAL).toBeGreaterThan(0);
    expect(end - start).toBeGreaterThan(0);
  });
  for (let seed = start; seed < end; seed += 1) {
    it(`seed ${seed}: no invariant is violated`, async () => {
      const result = await runSimulation({ ...DEFAULT_SIMULATION, seed });
      const report = result.violations
        .map((v) => `invariant ${v.invariant} at step ${v.step}: ${v.message}`)
        .join("\n");
      expect(report, `replay: simulate -- replay --seed ${seed}`).toBe("");
      // The run must have exercised the protocol, not idled.
      expect(result.steps).toBeGreaterThan(50);
      expect((result.stats.acquired ?? 0) + (result.stats.acquireRefused ?? 0)).toBeGreaterThan(0);
      expect(
        (result.stats.cleanups ?? 0) +
          (result.stats.cleanupFailed ?? 0) +
          (result.stats.graceRefused ?? 0) +
          (result.stats.crashes ?? 0),
      ).toBeGreaterThan(0);
      // Reference mutations (tags and branches) ran too, or their actors crashed.
      const referenceOps = [
        "tagsCreated",
        "tagCreateFailed",
        "branchesCreated",
        "branchCreateFailed",
        "crashes",
      ].reduce((sum, key) => sum + (result.stats[key] ?? 0), 0);
      expect(referenceOps).toBeGreaterThan(0);
      // The writers that reuse files and the forgers ran too, or crashed.
      const reuseOps = Object.entries(result.stats)
        .filter(([k]) => /^(restore|fork|bulk|forgery)/.test(k) || k === "crashes")
        .reduce((sum, [, n]) => sum + n, 0);
      expect(reuseOps).toBeGreaterThan(0);
    });
  }
}
