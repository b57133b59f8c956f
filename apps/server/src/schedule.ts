import { CleanupPolicyShape } from "@holdfast/api-shapes";
import { validatePolicy } from "@holdfast/cleanup";
import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import { Cron } from "croner";
import type { FastifyBaseLogger } from "fastify";
import { z } from "zod";
import type { AppDeps } from "./app.js";

/** When a task runs: every N milliseconds, or on a cron expression (croner syntax, UTC). */
const WhenShape = z.union([
  z.strictObject({ everyMs: z.number().int().min(1000) }),
  z.strictObject({
    cron: z.string().refine((pattern) => {
      try {
        new Cron(pattern, { paused: true }).stop();
        return true;
      } catch {
        return false;
      }
    }, "not a cron expression"),
  }),
]);

/** One dataset's schedule: a cleanup with its policy, and/or a recovery. */
export const ScheduleEntrySchema = z.strictObject({
  dataset: z.string().min(1),
  cleanup: z.strictObject({ when: WhenShape, policy: CleanupPolicyShape }).optional(),
  recover: z.strictObject({ when: WhenShape }).optional(),
});
export type ScheduleEntry = z.infer<typeof ScheduleEntrySchema>;

/** The server config file (`holdfast serve --config FILE`): schedules per dataset. */
export const ServerConfigFileSchema = z.strictObject({
  schedules: z.array(ScheduleEntrySchema).default([]),
});

/**
 * Checks schedules before the server starts: each names a served dataset and each cleanup
 * policy is one the run accepts (`invalid-input` otherwise), so a bad config fails at start,
 * not at its first tick.
 */
export function validateSchedules(
  entries: readonly ScheduleEntry[],
  datasets: ReadonlySet<string>,
): void {
  for (const entry of entries) {
    if (!datasets.has(entry.dataset)) {
      throw holdfastError(
        "invalid-input",
        "parse",
        `schedule names an unknown dataset ${entry.dataset}`,
        { hint: `served datasets: ${[...datasets].join(", ")}` },
      );
    }
    if (entry.cleanup) validatePolicy(entry.cleanup.policy);
  }
}

/**
 * Starts the schedules. A tick whose dataset is being cleaned by another replica is
 * skipped (the store-based cleanup lock decides), so N replicas with the same schedule
 * run each cleanup once. Returns a stopper for shutdown.
 */
export function startSchedules(
  entries: readonly ScheduleEntry[],
  deps: AppDeps,
  log: FastifyBaseLogger,
): { stop(): void } {
  const stops: (() => void)[] = [];
  for (const entry of entries) {
    const ds = deps.datasets.get(entry.dataset);
    if (!ds) throw new Error(`schedule names an unknown dataset ${entry.dataset}`);
    const tasks = [
      entry.recover && { kind: "recover" as const, when: entry.recover.when, policy: null },
      entry.cleanup && {
        kind: "cleanup" as const,
        when: entry.cleanup.when,
        policy: entry.cleanup.policy,
      },
    ].filter((t) => t !== undefined);
    for (const task of tasks) {
      let busy = false;
      const tick = async () => {
        if (busy) return;
        busy = true;
        try {
          const { finished } = await deps.jobs.start(ds, task.kind, "schedule", task.policy);
          const job = await finished;
          log.info({ dataset: ds.name, job: job.id, state: job.state }, `scheduled ${task.kind}`);
        } catch (error) {
          if (isHoldfastError(error, "conflict")) {
            log.info(
              { dataset: ds.name },
              `scheduled ${task.kind} skipped: another replica runs one`,
            );
          } else {
            log.error({ err: error, dataset: ds.name }, `scheduled ${task.kind} failed to start`);
          }
        } finally {
          busy = false;
        }
      };
      if ("everyMs" in task.when) {
        const timer = setInterval(() => void tick(), task.when.everyMs);
        timer.unref();
        stops.push(() => clearInterval(timer));
      } else {
        const job = new Cron(task.when.cron, { timezone: "UTC", protect: true }, () => tick());
        stops.push(() => job.stop());
      }
    }
  }
  return {
    stop: () => {
      for (const stop of stops) stop();
    },
  };
}
