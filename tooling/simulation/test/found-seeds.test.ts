import { describe, expect, it } from "vitest";
import { DEFAULT_SIMULATION, runSimulation } from "../src/index.js";

/**
 * Seeds outside the CI range that once reported a violation, each pinned with what was
 * wrong (docs/protocol.md §8). Each fails with the fix removed.
 */
const FOUND: { seed: number; was: string }[] = [
  {
    seed: 203429,
    was:
      "invariant 7 (checker): a breaker's rewrite and repair of main@6 over a present key, " +
      "while main@7 existed, counted as main@6's landing; the commit had landed with nothing above it",
  },
  {
    seed: 201581,
    was:
      "invariant 5 (protocol): a crashed cleaner's committed record kept main@7 after its manifest " +
      "was replaced; the plan of the recovery pass met another refused manifest (main@17) before " +
      "its last look, so main@7 stayed refused to leases after every repair",
  },
];

describe("simulation: seeds found by soaks pass (docs/protocol.md §8)", () => {
  for (const { seed, was } of FOUND) {
    it(`seed ${seed}: no invariant is violated (was: ${was})`, async () => {
      const result = await runSimulation({ ...DEFAULT_SIMULATION, seed });
      const report = result.violations
        .map((v) => `invariant ${v.invariant} at step ${v.step}: ${v.message}`)
        .join("\n");
      expect(report, `replay: simulate -- replay --seed ${seed}`).toBe("");
    });
  }
});
