import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Profile } from "./args.js";
import { profileConfig, type Violation } from "./config.js";
import { describeConfig, shrinkFailure } from "./shrink.js";
import { runSimulation } from "./simulation.js";

/** Environment variable that turns a forked CLI into a soak worker. */
export const SOAK_WORKER_ENV = "HOLDFAST_SIM_SOAK_WORKER";

interface WorkerJob {
  readonly index: number;
  readonly stride: number;
  readonly first: number;
  readonly deadline: number;
  readonly profile: Profile;
}

type WorkerMessage =
  | { type: "progress"; schedules: number; steps: number }
  | { type: "failed"; seed: number; violations: Violation[] };

export interface SoakReport {
  readonly schedules: number;
  readonly steps: number;
  readonly failedSeeds: number[];
  readonly elapsedMs: number;
}

/**
 * Runs seeds across `workers` child processes until `durationMs` has passed: worker i runs
 * seeds first+i, first+i+workers, ... Prints schedules per second as it goes; a failing
 * seed is replayed and shrunk in this process afterwards.
 */
export async function soak(options: {
  durationMs: number;
  workers: number;
  first: number;
  profile: Profile;
  shrink: boolean;
  log: (line: string) => void;
}): Promise<SoakReport> {
  const { log } = options;
  const started = Date.now();
  const deadline = started + options.durationMs;
  const script = fileURLToPath(new URL("./cli.ts", import.meta.url));
  const perWorker = new Map<number, { schedules: number; steps: number }>();
  const failedSeeds: number[] = [];
  const total = () => {
    let schedules = 0;
    let steps = 0;
    for (const w of perWorker.values()) {
      schedules += w.schedules;
      steps += w.steps;
    }
    return { schedules, steps };
  };
  const ticker = setInterval(() => {
    const { schedules } = total();
    const s = (Date.now() - started) / 1000;
    log(
      `soak: ${schedules} schedules in ${s.toFixed(0)} s (${(schedules / s).toFixed(1)}/s), ${failedSeeds.length} failing`,
    );
  }, 30_000);
  try {
    await Promise.all(
      Array.from({ length: options.workers }, (_, index) => {
        const job: WorkerJob = {
          index,
          stride: options.workers,
          first: options.first,
          deadline,
          profile: options.profile,
        };
        return new Promise<void>((resolve, reject) => {
          const child = fork(script, [], {
            env: { ...process.env, [SOAK_WORKER_ENV]: JSON.stringify(job) },
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          });
          child.on("message", (message: WorkerMessage) => {
            if (message.type === "progress") {
              perWorker.set(index, { schedules: message.schedules, steps: message.steps });
            } else {
              failedSeeds.push(message.seed);
              log(`seed ${message.seed}: ${message.violations.length} violation(s)`);
              for (const v of message.violations) {
                log(`  invariant ${v.invariant} at step ${v.step}: ${v.message}`);
              }
            }
          });
          child.on("error", reject);
          child.on("exit", (code) =>
            code === 0 ? resolve() : reject(new Error(`soak worker ${index} exited with ${code}`)),
          );
        });
      }),
    );
  } finally {
    clearInterval(ticker);
  }
  const elapsedMs = Date.now() - started;
  const { schedules, steps } = total();
  failedSeeds.sort((a, b) => a - b);
  if (options.shrink && failedSeeds.length > 0) {
    await replayAndShrink(failedSeeds[0]!, options.profile, log);
  }
  return { schedules, steps, failedSeeds, elapsedMs };
}

/** The body of one soak worker process (see {@link SOAK_WORKER_ENV}). */
export async function soakWorker(raw: string): Promise<void> {
  const job = JSON.parse(raw) as WorkerJob;
  const send = (message: WorkerMessage) =>
    new Promise<void>((resolve) => process.send!(message, () => resolve()));
  let schedules = 0;
  let steps = 0;
  let lastReport = 0;
  for (let seed = job.first + job.index; Date.now() < job.deadline; seed += job.stride) {
    const result = await runSimulation({ ...profileConfig(job.profile), seed });
    schedules += 1;
    steps += result.steps;
    if (result.violations.length > 0) {
      await send({ type: "failed", seed, violations: result.violations });
    }
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      await send({ type: "progress", schedules, steps });
    }
  }
  await send({ type: "progress", schedules, steps });
}

/** Reruns a failing seed, shrinks it and prints the minimal schedule (every released request). */
export async function replayAndShrink(
  seed: number,
  profile: Profile,
  log: (line: string) => void,
): Promise<boolean> {
  log(`replaying seed ${seed} (${profile} profile) and shrinking it`);
  const shrunk = await shrinkFailure({ ...profileConfig(profile), seed });
  if (!shrunk) {
    log(`seed ${seed} passes on replay`);
    return false;
  }
  log(`minimal failing schedule after ${shrunk.tries} runs: ${describeConfig(shrunk.config)}`);
  for (const v of shrunk.result.violations) {
    log(`  invariant ${v.invariant} at step ${v.step}: ${v.message}`);
  }
  log("schedule:");
  await runSimulation({ ...shrunk.config, trace: (line) => log(`  ${line}`) });
  return true;
}
