import { describe, expect, it } from "vitest";
import { DEFAULT_SIMULATION, type PlantedFault, runSimulation } from "../src/index.js";

/**
 * The checker sees each planted fault: with it, a known seed reports the violation the
 * fault reopens; without it the same seed passes. Seeds were found with
 * `simulate -- run 400 1 --plant <fault>` (the first failing seed of each; found again when
 * lease attackers, then appenders, joined the default actors, each of which changed every
 * schedule); if the
 * simulation's actors or the protocol's requests change, find them again the same way.
 *
 * - `unprotected-reuse`, `blind-last-look`: either half of the fix for reused files removed
 *   (docs/protocol.md, "Commits that reuse files"): a newest version names a deleted file.
 * - `forgeable-leases`: handles built from the lease listing carried out as before lease
 *   secrets (docs/protocol.md §4, "Lease secrets"): a reader's version is deleted while its
 *   lease protects it (invariant 1).
 */
const CASES: { plant: PlantedFault; seed: number; why: string; seen: RegExp }[] = [
  {
    plant: "unprotected-reuse",
    seed: 12,
    why: "writers skip the reuse protocol (no intent, no checks)",
    seen: /^the newest version \S+ names a deleted data file /,
  },
  {
    plant: "blind-last-look",
    seed: 232,
    why: "cleanup's last look sees no intent and no new manifest",
    seen: /^the newest version \S+ names a deleted data file /,
  },
  {
    plant: "forgeable-leases",
    seed: 1,
    why: "a lease attacker releases or shortens a reader's lease from the listing",
    seen: /^reader-\d+'s leased version \S+ lost .* while protected$/,
  },
];

describe("simulation: planted faults are visible to the checker", () => {
  for (const { plant, seed, why, seen } of CASES) {
    it(`seed ${seed} with ${plant} (${why}) reports the violation; without the plant it passes`, async () => {
      const planted = await runSimulation({ ...DEFAULT_SIMULATION, seed, plant });
      expect(
        planted.violations.map((v) => v.message),
        `rerun: simulate -- run 1 ${seed} --plant ${plant} --trace`,
      ).toContainEqual(expect.stringMatching(seen));
      const clean = await runSimulation({ ...DEFAULT_SIMULATION, seed });
      expect(clean.violations, `replay: simulate -- replay --seed ${seed}`).toEqual([]);
    });
  }

  it("invariant 1 lease attackers ran and every forged handle was refused", async () => {
    const clean = await runSimulation({ ...DEFAULT_SIMULATION, seed: 134 });
    expect(clean.stats.leaseForgeryRefused ?? 0).toBeGreaterThan(0);
    expect(clean.stats.leaseForgeryApplied ?? 0).toBe(0);
  });
});
