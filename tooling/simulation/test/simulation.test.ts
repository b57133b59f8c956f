import { describe, expect, it } from "vitest";
import { DEFAULT_SIMULATION, runSimulation } from "../src/index.js";

const SEEDS = Number(process.env.HOLDFAST_SIM_SEEDS ?? 40);
const FIRST = Number(process.env.HOLDFAST_SIM_FIRST_SEED ?? 1);

describe("randomized interleavings (docs/guarantees.md, invariants 1–5)", () => {
  for (let seed = FIRST; seed < FIRST + SEEDS; seed += 1) {
    it(`seed ${seed}: no invariant is violated`, async () => {
      const result = await runSimulation({ ...DEFAULT_SIMULATION, seed });
      const report = result.violations
        .map((v) => `invariant ${v.invariant} at step ${v.step}: ${v.message}`)
        .join("\n");
      expect(report, `rerun with HOLDFAST_SIM_FIRST_SEED=${seed} HOLDFAST_SIM_SEEDS=1`).toBe("");
      // The run must have exercised the protocol, not idled.
      expect(result.steps).toBeGreaterThan(50);
      expect((result.stats.acquired ?? 0) + (result.stats.acquireRefused ?? 0)).toBeGreaterThan(0);
      expect(
        (result.stats.cleanups ?? 0) +
          (result.stats.cleanupFailed ?? 0) +
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
    });
  }
});
