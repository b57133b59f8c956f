import { initDataset } from "@holdfast/dataset";
import { spawnBreakers } from "./actors/breakers.js";
import { spawnCleaners } from "./actors/cleaners.js";
import { spawnInsiders } from "./actors/insiders.js";
import { spawnForgers, spawnLeaseAttackers, spawnReaders } from "./actors/readers.js";
import { spawnBranchers, spawnTaggers } from "./actors/references.js";
import {
  spawnAppenders,
  spawnBulkWriters,
  spawnForkers,
  spawnHintlessWriters,
  spawnRestorers,
  spawnWriters,
} from "./actors/writers.js";
import { createStepChecker } from "./checks.js";
import { OWNERSHIP_BOUND_MS, type SimulationConfig, type SimulationResult } from "./config.js";
import { checkFinalRecovery } from "./final-check.js";
import { SimulationWorld } from "./world.js";

/**
 * Runs readers (acquire/renew/release), writers (commit), taggers (create/delete tags) and
 * cleaners (cleanup with crashes and lost answers) against one memory store under a seeded
 * scheduler, checking docs/guarantees.md invariants 1–4 after every step and invariant 5 after a final
 * recovery once every ownership bound and TTL has passed.
 */
export async function runSimulation(config: SimulationConfig): Promise<SimulationResult> {
  const world = new SimulationWorld(config);
  await world.seedDataset(initDataset);
  // The order of starting actors is part of the schedule a seed names: keep it.
  spawnWriters(world);
  spawnHintlessWriters(world);
  spawnRestorers(world);
  spawnForkers(world);
  spawnBulkWriters(world);
  spawnAppenders(world);
  spawnForgers(world);
  spawnReaders(world);
  spawnTaggers(world);
  spawnBranchers(world);
  spawnCleaners(world);
  spawnLeaseAttackers(world);
  spawnBreakers(world);
  spawnInsiders(world);

  const checkStep = createStepChecker({
    memory: world.memory,
    sched: world.sched,
    protections: world.protections,
    tags: world.tags,
    branches: world.branches,
    failedCommitFiles: world.failedCommitFiles,
    writes: () => world.writes,
    broken: world.broken,
    violate: (invariant, message) => world.violate(invariant, message),
  });
  const all = Promise.all(world.actors);
  await world.sched.run(() => world.running === 0, checkStep);
  await all;

  // Invariant 5: after the bounds pass, recovery leaves nothing stuck.
  world.sched.advance(OWNERSHIP_BOUND_MS + 25 * 60 * 60 * 1000);
  await checkFinalRecovery(world, checkStep);
  return world.result();
}
