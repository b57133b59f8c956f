import { describe, expect, it } from "vitest";
import { DEFAULT_SIMULATION, type PlantedFault, runSimulation } from "../src/index.js";

/**
 * The checker sees each planted fault: with it, a known seed reports the violation the
 * fault reopens; without it the same seed passes. Seeds were found with
 * `simulate -- run 400 1 --plant <fault>` (the first failing seed of each whose violation
 * is the one named here; found again when lease attackers, appenders, then manifest
 * breakers joined the default actors, when the deletion mark added a write per record,
 * and when breakers struck branches and forks too, and when an acquire admitted by a cancellation
 * rewrote its lease, and when writes could reach the store twice and insiders joined, each
 * of which changed every schedule); if the
 * simulation's actors or the protocol's requests change, find them again the same way.
 *
 * - `unprotected-reuse`, `blind-last-look`: either half of the fix for reused files removed
 *   (docs/protocol.md §2.5): a newest version names a deleted file.
 * - `forgeable-leases`: handles built from the lease listing carried out as before lease
 *   secrets (docs/protocol.md §4.2): a reader's version is deleted while its
 *   lease protects it (invariant 1).
 * - `late-validation`: cleaners do not validate manifests before the commit
 *   (docs/protocol.md §6.1): a run reads a manifest a
 *   breaker replaced with refused bytes and drains (or commits) anyway.
 * - `no-drop`: the rewrite that cancels a replaced manifest's version in its committed
 * record is refused (docs/protocol.md §5.5): once repaired, that version is still refused to every
 * lease.
 * - `no-give-up`: the reference census reads a manifest a breaker replaced after the plan
 *   (a refusal between a run's drain and its commit) and the run's give-up of its records
 *   is refused (docs/protocol.md §6.1): the refused run
 *   leaves a record it owns. With the census refusal alone the same seed passes.
 */
const CASES: { plant: PlantedFault; seed: number; why: string; seen: RegExp }[] = [
  {
    plant: "unprotected-reuse",
    seed: 24,
    why: "writers skip the reuse protocol (no intent, no checks)",
    seen: /^the newest version \S+ names a deleted data file /,
  },
  {
    plant: "blind-last-look",
    seed: 8,
    why: "cleanup's last look sees no intent and no new manifest",
    seen: /^the newest version \S+ names a deleted data file /,
  },
  {
    plant: "forgeable-leases",
    seed: 79,
    why: "a lease attacker releases or shortens a reader's lease from the listing",
    seen: /^reader-\d+'s leased version \S+ lost .* while protected$/,
  },
  {
    plant: "late-validation",
    seed: 28,
    why: "a cleanup drains or commits after reading a manifest the format refuses",
    seen: /^cleaner-\d+'s cleanup (drained|committed) \S+ after reading \S+, which the format refuses$/,
  },
  {
    plant: "no-drop",
    seed: 223,
    why: "a committed record keeps a version whose manifest was replaced",
    seen: /^\S+@\d+ stays un-leasable after a recovery pass and the repair of its manifest: /,
  },
  {
    plant: "no-give-up",
    seed: 11,
    why: "a run refused between its drain and its commit keeps its record",
    seen: /^cleaner-\d+'s cleanup was refused before its commit but left \S+ record \S+$/,
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

  it("Refuse before the commit: breakers replace manifests inside cleanups (main and branches), which refuse before committing", async () => {
    const clean = await runSimulation({ ...DEFAULT_SIMULATION, seed: 45 });
    expect(clean.violations).toEqual([]);
    expect(clean.stats["broken:window"] ?? 0).toBeGreaterThan(0);
    const onBranches = Object.entries(clean.stats)
      .filter(([k]) => k.startsWith("broken:branch:"))
      .reduce((sum, [, n]) => sum + n, 0);
    expect(onBranches).toBeGreaterThan(0);
    expect(clean.stats.repaired ?? 0).toBeGreaterThan(0);
    expect(clean.stats.refusedBeforeCommit ?? 0).toBeGreaterThan(0);
  });

  it("invariant 1 lease attackers ran and every forged handle was refused", async () => {
    const clean = await runSimulation({ ...DEFAULT_SIMULATION, seed: 134 });
    expect(clean.stats.leaseForgeryRefused ?? 0).toBeGreaterThan(0);
    expect(clean.stats.leaseForgeryApplied ?? 0).toBe(0);
  });
});
