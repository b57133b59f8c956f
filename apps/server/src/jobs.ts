import { EventEmitter } from "node:events";
import type { CleanupJob, CleanupPolicyBody, CleanupStatsShape } from "@holdfast/api-shapes";
import { type CleanupStats, cleanup, recover } from "@holdfast/cleanup";
import { recoverReferences } from "@holdfast/refs-lifecycle";
import type { z } from "zod";
import { acquireCleanupLock, cleanupBusy } from "./cleanup-lock.js";
import type { DatasetEntry } from "./datasets.js";
import type { ServerMetrics } from "./metrics.js";
import { problemFor } from "./problem.js";

/** An event of a job, sent to SSE subscribers: progress, then one `done`. */
export type JobEvent = { type: "progress"; job: CleanupJob } | { type: "done"; job: CleanupJob };

/**
 * Cleanup and recovery runs of this replica. Each run first takes the dataset's cleanup
 * lock on the store, so one runs at a time across replicas; recovery always runs first
 * (a cleanup recovers interrupted retirements before planning), so a replica that died
 * mid-cleanup is finished by the next run anywhere. History is this replica's, in memory.
 */
export class JobRunner {
  readonly #history: CleanupJob[] = [];
  readonly #running = new Map<string, Promise<CleanupJob>>();
  readonly #events = new EventEmitter();

  constructor(
    private readonly replica: string,
    private readonly metrics: ServerMetrics,
    private readonly options: { lockBoundMs: number; historySize?: number },
  ) {
    this.#events.setMaxListeners(0);
  }

  /**
   * Starts a run; resolves once it is registered (the lock taken), with the job in its
   * first state. Throws `conflict` (CLEANUP_RUNNING) when another run holds the lock.
   */
  async start(
    dataset: DatasetEntry,
    kind: "cleanup" | "recover",
    trigger: "api" | "schedule",
    policy: CleanupPolicyBody | null,
  ): Promise<{ job: CleanupJob; finished: Promise<CleanupJob> }> {
    const id = dataset.ctx.ids.next();
    const lock = await acquireCleanupLock(dataset.ctx, {
      owner: this.replica,
      jobId: id,
      boundMs: this.options.lockBoundMs,
    });
    if (!lock) throw cleanupBusy(dataset.name);
    const job: CleanupJob = {
      id,
      dataset: dataset.name,
      kind,
      trigger,
      state: "running",
      replica: this.replica,
      policy: policy as Record<string, unknown> | null,
      startedAt: new Date().toISOString(),
      finishedAt: null,
      progress: null,
      stats: null,
      error: null,
    };
    this.#remember(job);
    const startedMs = performance.now();
    const finished = (async (): Promise<CleanupJob> => {
      try {
        const onProgress = (progress: CleanupJob["progress"]) => {
          job.progress = progress;
          this.#events.emit(id, { type: "progress", job } satisfies JobEvent);
        };
        // References first: a retirement's recovery censuses them, so settle their intents.
        await recoverReferences(dataset.ctx);
        const stats: CleanupStats =
          kind === "recover"
            ? await recover(dataset.ctx, { onProgress })
            : await cleanup(dataset.ctx, policy ?? { retainVersions: 1 }, { onProgress });
        job.stats = statsBody(stats);
        job.state = "succeeded";
        this.#countDeleted(dataset.name, stats);
      } catch (error) {
        job.error = problemFor(error);
        job.state = "failed";
      } finally {
        await lock.release().catch(() => undefined);
        job.finishedAt = new Date().toISOString();
        this.metrics.cleanupDuration.observe(
          { dataset: dataset.name, kind, outcome: job.state },
          (performance.now() - startedMs) / 1000,
        );
        this.#running.delete(id);
        this.#events.emit(id, { type: "done", job } satisfies JobEvent);
      }
      return job;
    })();
    this.#running.set(id, finished);
    return { job, finished };
  }

  /** Jobs of a dataset, newest first. */
  history(dataset: string): CleanupJob[] {
    return this.#history.filter((j) => j.dataset === dataset);
  }

  get(dataset: string, id: string): CleanupJob | undefined {
    return this.#history.find(
      (j) => j.dataset === dataset && j.id.toUpperCase() === id.toUpperCase(),
    );
  }

  /** Subscribes to a job's events; returns the unsubscribe function. */
  subscribe(id: string, listener: (event: JobEvent) => void): () => void {
    this.#events.on(id, listener);
    return () => this.#events.off(id, listener);
  }

  /**
   * Waits for every running job. The cleanup API takes no abort signal, so a run finishes
   * its steps rather than stop between a seal and its deletions; recovery would finish it
   * anyway, but finishing here leaves no lock to time out.
   */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.#running.values()]);
  }

  get runningCount(): number {
    return this.#running.size;
  }

  #remember(job: CleanupJob): void {
    this.#history.unshift(job);
    this.#history.length = Math.min(this.#history.length, this.options.historySize ?? 50);
  }

  #countDeleted(dataset: string, stats: CleanupStats): void {
    for (const [kind, count] of Object.entries(stats.objectsDeleted)) {
      if (kind !== "total" && count > 0) this.metrics.objectsDeleted.inc({ dataset, kind }, count);
    }
  }
}

/** Cleanup stats as the API documents them (the same fields; the shape allows additions). */
export function statsBody(stats: CleanupStats): z.infer<typeof CleanupStatsShape> {
  return stats as unknown as z.infer<typeof CleanupStatsShape>;
}
