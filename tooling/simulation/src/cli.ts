// Runs many seeds: `pnpm --filter @holdfast/simulation simulate -- [count] [firstSeed]`.
// HOLDFAST_SIM_PROFILE=stress uses STRESS_SIMULATION (more faults, more reference actors).
// HOLDFAST_SIM_TRACE=1 prints every released request, fault and outcome (use with count 1).
import { DEFAULT_SIMULATION, runSimulation, STRESS_SIMULATION } from "./simulation.js";

const count = Number(process.argv[2] ?? 200);
const first = Number(process.argv[3] ?? 1);
let failed = 0;
const started = Date.now();
for (let seed = first; seed < first + count; seed += 1) {
  const result = await runSimulation({
    ...(process.env.HOLDFAST_SIM_PROFILE === "stress" ? STRESS_SIMULATION : DEFAULT_SIMULATION),
    seed,
    ...(process.env.HOLDFAST_SIM_TRACE ? { trace: (line: string) => console.log(line) } : {}),
  });
  if (result.violations.length > 0) {
    failed += 1;
    console.log(`seed ${seed}: ${result.violations.length} violation(s)`);
    for (const v of result.violations)
      console.log(`  invariant ${v.invariant} at step ${v.step}: ${v.message}`);
  }
}
console.log(
  `${count - failed} passed, ${failed} failed (seeds ${first}..${first + count - 1}, ${Date.now() - started} ms)`,
);
process.exit(failed > 0 ? 1 : 0);
