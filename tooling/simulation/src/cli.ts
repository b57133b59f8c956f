// `pnpm --filter @holdfast/simulation simulate -- [run] [COUNT] [FIRST]`, `... simulate -- soak
// --duration 10m --workers 2`, `... simulate -- replay --seed N` (see USAGE in args.ts).
// Exit codes: 0 every seed passed (and at least one ran), 1 a violation or no seed ran, 2 bad arguments.
import { type PlantedFault, parseCommand, USAGE, UsageError } from "./args.js";
import { profileConfig } from "./config.js";
import { runSimulation } from "./simulation.js";
import { replayAndShrink, SOAK_WORKER_ENV, soak, soakWorker } from "./soak.js";

async function main(): Promise<number> {
  const worker = process.env[SOAK_WORKER_ENV];
  if (worker) {
    await soakWorker(worker);
    return 0;
  }
  let command: ReturnType<typeof parseCommand>;
  try {
    command = parseCommand(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`simulate: ${error.message}\n${USAGE}`);
    return 2;
  }
  const log = (line: string) => console.log(line);
  switch (command.kind) {
    case "help":
      console.log(USAGE);
      return 0;
    case "replay":
      if (command.shrink)
        return (await replayAndShrink(command.seed, command.profile, log)) ? 1 : 0;
      return (await runSeeds(1, command.seed, command.profile, true)) ? 0 : 1;
    case "soak": {
      const report = await soak({ ...command, log });
      const s = report.elapsedMs / 1000;
      console.log(
        `soak: ${report.schedules} schedules (${report.steps} steps) in ${s.toFixed(0)} s across ${command.workers} workers: ${(report.schedules / s).toFixed(1)} schedules/s, ${report.failedSeeds.length} violating seeds${report.failedSeeds.length > 0 ? ` (${report.failedSeeds.slice(0, 20).join(", ")})` : ""}`,
      );
      console.log(
        `${report.schedules - report.failedSeeds.length} passed, ${report.failedSeeds.length} failed`,
      );
      if (report.schedules === 0) {
        console.error("simulate: no schedule ran");
        return 1;
      }
      return report.failedSeeds.length > 0 ? 1 : 0;
    }
    case "run":
      return (await runSeeds(
        command.count,
        command.first,
        command.profile,
        command.trace,
        command.plant,
      ))
        ? 0
        : 1;
  }
}

/** Runs `count` seeds from `first`; true when at least one ran and none broke an invariant. */
async function runSeeds(
  count: number,
  first: number,
  profile: "default" | "stress",
  trace: boolean,
  plant?: PlantedFault,
): Promise<boolean> {
  let failed = 0;
  let ran = 0;
  const started = Date.now();
  for (let seed = first; seed < first + count; seed += 1) {
    const result = await runSimulation({
      ...profileConfig(profile),
      seed,
      ...(trace ? { trace: (line: string) => console.log(line) } : {}),
      ...(plant ? { plant } : {}),
    });
    ran += 1;
    if (result.violations.length > 0) {
      failed += 1;
      console.log(`seed ${seed}: ${result.violations.length} violation(s)`);
      for (const v of result.violations) {
        console.log(`  invariant ${v.invariant} at step ${v.step}: ${v.message}`);
      }
      console.log(
        plant
          ? `  rerun: simulate -- run 1 ${seed} --profile ${profile} --plant ${plant} --trace`
          : `  replay and shrink: simulate -- replay --seed ${seed} --profile ${profile}`,
      );
    }
  }
  console.log(
    `${ran - failed} passed, ${failed} failed (seeds ${first}..${first + count - 1}, ${profile} profile${plant ? `, planted fault ${plant}` : ""}, ${Date.now() - started} ms)`,
  );
  return ran > 0 && failed === 0;
}

process.exit(await main());
