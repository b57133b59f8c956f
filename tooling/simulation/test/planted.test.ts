import { describe, expect, it } from "vitest";
import { DEFAULT_SIMULATION, type PlantedFault, runSimulation } from "../src/index.js";

/**
 * The checker sees issue 9's hole 1 (docs/protocol.md, "Commits that reuse files"): with
 * either half of its fix planted away, a known seed reports a newest version naming a
 * deleted data file; without the plant the same seed passes. The seeds were found with
 * `simulate -- run 400 1 --plant <fault>` (the first failing seed of each; found again
 * when commits stopped listing the branch, which changed every schedule); if the
 * simulation's actors or the protocol's requests change, find them again the same way.
 */
const CASES: { plant: PlantedFault; seed: number; why: string }[] = [
  {
    plant: "unprotected-reuse",
    seed: 19,
    why: "writers skip the reuse protocol (no intent, no checks)",
  },
  {
    plant: "blind-last-look",
    seed: 252,
    why: "cleanup's last look sees no intent and no new manifest",
  },
];

describe("simulation: hole 1 of issue 9 is visible to the checker (docs/protocol.md, Commits that reuse files)", () => {
  for (const { plant, seed, why } of CASES) {
    it(`seed ${seed} with ${plant} (${why}) reports a newest version naming a deleted file; without the plant it passes`, async () => {
      const planted = await runSimulation({ ...DEFAULT_SIMULATION, seed, plant });
      expect(
        planted.violations.map((v) => v.message),
        `rerun: simulate -- run 1 ${seed} --plant ${plant} --trace`,
      ).toContainEqual(expect.stringMatching(/^the newest version \S+ names a deleted data file /));
      const clean = await runSimulation({ ...DEFAULT_SIMULATION, seed });
      expect(clean.violations, `replay: simulate -- replay --seed ${seed}`).toEqual([]);
    });
  }
});
