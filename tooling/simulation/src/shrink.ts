import type { SimulationConfig, SimulationResult } from "./config.js";
import { runSimulation } from "./simulation.js";

/** The config fields the shrinker may lower (actor counts and rounds), in the order it tries them. */
const COUNTS = [
  "rounds",
  "readers",
  "writers",
  "restorers",
  "forkers",
  "bulkWriters",
  "appenders",
  "forgers",
  "leaseAttackers",
  "breakers",
  "insiders",
  "taggers",
  "branchers",
  "cleaners",
] as const satisfies readonly (keyof SimulationConfig)[];

export interface ShrinkResult {
  readonly config: SimulationConfig;
  readonly result: SimulationResult;
  /** Simulations run while shrinking. */
  readonly tries: number;
}

/**
 * Shrinks a failing configuration: keeps the seed and greedily lowers actor counts,
 * rounds and fault rates while the run still breaks an invariant, until no single
 * step down keeps it failing. The result is the smallest schedule found that fails.
 */
export async function shrinkFailure(
  failing: SimulationConfig,
  maxTries = 200,
): Promise<ShrinkResult | null> {
  let best = failing;
  let bestResult = await runSimulation(failing);
  let tries = 1;
  if (bestResult.violations.length === 0) return null;
  let improved = true;
  while (improved && tries < maxTries) {
    improved = false;
    for (const candidate of smaller(best)) {
      if (tries >= maxTries) break;
      tries += 1;
      const result = await runSimulation(candidate);
      if (result.violations.length > 0) {
        best = candidate;
        bestResult = result;
        improved = true;
        break;
      }
    }
  }
  return { config: best, result: bestResult, tries };
}

/** One-step-smaller variants of a config: each count to 0, halved, minus one; each fault rate to 0. */
function* smaller(config: SimulationConfig): Generator<SimulationConfig> {
  for (const field of COUNTS) {
    const value = (config[field] as number | undefined) ?? 0;
    const floor = field === "rounds" ? 1 : 0;
    const options = new Set([floor, Math.floor(value / 2), value - 1]);
    for (const next of [...options].sort((a, b) => a - b)) {
      if (next >= floor && next < value) yield { ...config, [field]: next };
    }
  }
  for (const fault of ["crash", "loseBefore", "applyThenLose", "repeat"] as const) {
    if (config.faults[fault] > 0) yield { ...config, faults: { ...config.faults, [fault]: 0 } };
  }
}

/** The knobs of a config a reader needs to rerun it (the seed decides everything else). */
export function describeConfig(config: SimulationConfig): string {
  const parts = COUNTS.map((f) => `${f}=${(config[f] as number | undefined) ?? 0}`);
  parts.push(
    `faults=${config.faults.applyThenLose}/${config.faults.loseBefore}/${config.faults.crash}/${config.faults.repeat}`,
  );
  return `seed=${config.seed} ${parts.join(" ")}`;
}
