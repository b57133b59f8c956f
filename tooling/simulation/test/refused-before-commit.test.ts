import { describe, expect, it } from "vitest";
import { DEFAULT_SIMULATION, runSimulation } from "../src/index.js";

/**
 * Check (a) of "Refuse before the commit" (docs/protocol.md §6.1; README "Randomized
 * interleavings"): a run refused before its commit leaves no record it owns. In these seeds a
 * cleaner crashed (or lost an answer) after committing its record; the next run's last look found a
 * retired manifest replaced by refused bytes, cancelled that version in the other run's committed
 * record (`cancelReplaced`, an if-match rewrite that keeps the record's owner: docs/protocol.md
 * §5.5), then read the refused manifest and stopped with no commit of its own. The record it
 * rewrote is not its own: the checker once counted it as one (invariant 5 at steps 951 and 940).
 * What a run drained or took over is still checked (planted fault `no-give-up`,
 * test/planted.test.ts).
 */
describe("simulation: a rewrite of another run's committed record is not a record the run owns", () => {
  // Found again when breakers struck branches too (every schedule changed), again when a reopened renewal gained its second write, and again when writes could reach the store twice and insiders joined: the first seed
  // of 204001..204400 with such a run; the stat counts exactly that run.
  for (const seed of [204244]) {
    it(`seed ${seed}: a run refused after cancelling a replaced version in another run's record passes`, async () => {
      const result = await runSimulation({ ...DEFAULT_SIMULATION, seed });
      const report = result.violations
        .map((v) => `invariant ${v.invariant} at step ${v.step}: ${v.message}`)
        .join("\n");
      expect(report, `replay: simulate -- replay --seed ${seed}`).toBe("");
      expect(result.stats.refusedBeforeCommit ?? 0).toBeGreaterThan(0);
      expect(result.stats.refusedAfterRewritingOthersRecord ?? 0).toBeGreaterThan(0);
    });
  }
});
