import { EventEmitter } from "node:events";
import {
  type CleanupJob,
  type CleanupPolicyBody,
  type CleanupStatsShape,
  progressDocument,
} from "@holdfast/api-shapes";
import {
  type CleanupProgress,
  type CleanupStats,
  ProgressTracker,
  recoverAll,
  recoverAndCleanup,
  validatePolicy,
} from "@holdfast/cleanup";
import { isHoldfastError } from "@holdfast/conditional-store";
import type { z } from "zod";
import { type DatasetEntry, openServed } from "./datasets.js";
import type { JobHistory } from "./job-history.js";
import type { ServerMetrics } from "./metrics.js";
import { problemFor } from "./problem.js";

/** An event of a job, sent to SSE subscribers: progress, then one `done`. */
export type JobEvent = { type: "progress"; job: CleanupJob } | { type: "done"; job: CleanupJob };

/**
 * Cleanup and recovery runs started through this replica. Each run takes the dataset's cleanup lock on
 * the store (the cleanup package's), so one runs at a time across replicas; every run
 * recovers interrupted retirements before planning, so a replica that died mid-cleanup is
 * finished by the next run anywhere (once its lock's bound ran out in storage time).
 * History is on the store (`JobHistory`), so every replica lists the same jobs; the live
 * progress of a running job is held by the replica that runs it.
 */
export class JobRunner {
  /** Jobs running on this replica, by id (their progress changes in place). */
  readonly #live = new Map<string, CleanupJob>();
  readonly #finishing = new Set<Promise<CleanupJob>>();
  readonly #abort = new AbortController();
  readonly #events = new EventEmitter();

  constructor(
    private readonly replica: string,
    private readonly metrics: ServerMetrics,
    private readonly history: JobHistory,
    private readonly options: {
      lockBoundMs?: number | undefined;
      maxDeletesPerSecond?: number | undefined;
      deleteConcurrency?: number | undefined;
      /** Told when a run's summary could not be left in the store's run history. */
      onHistoryError?: ((error: unknown) => void) | undefined;
    },
  ) {
    this.#events.setMaxListeners(0);
  }

  /**
   * Starts a run and resolves once it holds the dataset's cleanup lock (the cleanup
   * package's store-based lock: one run at a time across every replica), with the job in
   * its first state. A run refused because another holds the lock rejects with that
   * `conflict` (code CLEANUP_RUNNING) and is not recorded; an invalid policy rejects with
   * `invalid-input` before anything is written.
   */
  async start(
    dataset: DatasetEntry,
    kind: "cleanup" | "recover",
    trigger: "api" | "schedule",
    policy: CleanupPolicyBody | null,
  ): Promise<{ job: CleanupJob; finished: Promise<CleanupJob> }> {
    // A policy the run would refuse is refused here, before the job exists: no id, no
    // record, no lock (invariant 6), as the plan route refuses it.
    const cleanupPolicy = policy ?? { retainVersions: 1 };
    if (kind === "cleanup") validatePolicy(cleanupPolicy);
    const id = dataset.ctx.ids.next();
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
      references: null,
      referenceKeys: null,
      error: null,
    };
    const startedMs = performance.now();
    // Rate and ETA on the dataset's injected clock, by the cleanup package's one estimate.
    const tracker = new ProgressTracker(dataset.ctx.clock);
    const meter = this.metrics.jobProgress(dataset.name, id);
    // Set once this run holds the dataset's cleanup lock; only such a run may declare
    // another job lost (a run that failed before the lock proves nothing about the others).
    let heldLock = false;
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const options = {
      signal: this.#abort.signal,
      ...(this.options.lockBoundMs === undefined
        ? {}
        : { ownershipBoundMs: this.options.lockBoundMs }),
      ...(this.options.maxDeletesPerSecond === undefined
        ? {}
        : { maxDeletesPerSecond: this.options.maxDeletesPerSecond }),
      ...(this.options.deleteConcurrency === undefined
        ? {}
        : { deleteConcurrency: this.options.deleteConcurrency }),
      onProgress: (progress: CleanupProgress) => {
        // The first progress event comes after the lock is taken: the server never runs
        // `concurrent` or a dry run as a job (the policy shape has no dryRun), so every
        // job's run takes the lock before its first step.
        heldLock = true;
        locked();
        const estimate = tracker.record(progress);
        job.progress = progressDocument(estimate);
        meter.update(estimate);
        this.#events.emit(id, { type: "progress", job } satisfies JobEvent);
      },
    };
    const run = (async () => {
      // The dataset's format (a Lance table's manifests; its codec brings Lance's census), as
      // the CLI passes it.
      const { format } = (await openServed(dataset)).resolved;
      // The run leaves its summary in the store's run history (the cleanup package's), which
      // the dashboard lists beside the CLI's runs; a failed write is logged, never fatal.
      const history = {
        trigger,
        jobId: id,
        onError: (error: unknown) => this.options.onHistoryError?.(error),
      };
      const run = { ...options, format, history };
      // References are recovered first, by the cleanup package (as the CLI's runs do).
      const done =
        kind === "recover"
          ? await recoverAll(dataset.ctx, run)
          : await recoverAndCleanup(dataset.ctx, cleanupPolicy, run);
      job.references = done.references;
      job.referenceKeys = done.referenceKeys === null ? null : { ...done.referenceKeys };
      return done.stats;
    })();
    // Settled once start() decides: true when the job is admitted (and its start record
    // written), false when the lock was refused and the job is not recorded.
    let admit!: (admitted: boolean) => void;
    const admitted = new Promise<boolean>((resolve) => {
      admit = resolve;
    });
    let startRecorded: Promise<void> = Promise.resolve();
    // Tracked from the start, so shutdown waits for every run and its end record.
    const finished = run
      .then(
        (stats) => {
          job.stats = statsBody(stats);
          job.state = "succeeded";
          this.#countDeleted(dataset.name, stats);
          return job;
        },
        (error: unknown) => {
          // An interrupted run still says what it did.
          const partial = (error as { stats?: CleanupStats }).stats;
          if (partial) job.stats = statsBody(partial);
          job.error = problemFor(error);
          job.state = "failed";
          return job;
        },
      )
      .then(async (done) => {
        if (!(await admitted)) return done;
        done.finishedAt = new Date().toISOString();
        meter.end();
        this.metrics.cleanupDuration.observe(
          { dataset: dataset.name, kind, outcome: done.state },
          (performance.now() - startedMs) / 1000,
        );
        await startRecorded;
        await this.history.recordEnd(dataset, done);
        this.#live.delete(id);
        this.#events.emit(id, { type: "done", job: done } satisfies JobEvent);
        return done;
      });
    this.#finishing.add(finished);
    void finished.finally(() => this.#finishing.delete(finished));

    const outcome = await Promise.race([
      lockHeld.then(() => "running" as const),
      run.then(
        () => "running" as const,
        (error: unknown) => error,
      ),
    ]);
    if (outcome !== "running" && isHoldfastError(outcome, "conflict")) {
      meter.end();
      admit(false);
      throw outcome;
    }
    this.#live.set(id, job);
    // Only a run that held the lock knows no job that started before it can still be
    // running; any recorded as such lost its replica (a late end record still wins). A run
    // that failed before taking the lock (its lock write refused or unknown) settles nothing.
    startRecorded = this.history
      .recordStart(dataset, job)
      .then(() =>
        heldLock ? this.history.settleLost(dataset, id, new Set(this.#live.keys())) : undefined,
      );
    admit(true);
    await startRecorded;
    return { job, finished };
  }

  /** Jobs of a dataset, newest first, from the store; this replica's running ones with live progress. */
  async list(dataset: DatasetEntry): Promise<CleanupJob[]> {
    return (await this.history.list(dataset)).map((j) => this.#live.get(j.id) ?? j);
  }

  /** One job: live when it runs here, else as the store recorded it. */
  async get(dataset: DatasetEntry, id: string): Promise<CleanupJob | undefined> {
    const live = this.#live.get(id.toUpperCase());
    if (live && live.dataset === dataset.name) return live;
    return this.history.get(dataset, id);
  }

  /** Whether the job runs on this replica (its events can be followed here). */
  isLive(id: string): boolean {
    return this.#live.has(id.toUpperCase());
  }

  /** Subscribes to a job's events; returns the unsubscribe function. */
  subscribe(id: string, listener: (event: JobEvent) => void): () => void {
    this.#events.on(id, listener);
    return () => this.#events.off(id, listener);
  }

  /**
   * Shutdown: aborts running jobs, which the cleanup package stops at its next safe point
   * (a pre-commit retirement is given up, a committed one left for recovery), and waits
   * for them to settle so the lock is released, not left to time out.
   */
  async drain(): Promise<void> {
    this.#abort.abort(new Error("server shutting down"));
    await Promise.allSettled([...this.#finishing]);
  }

  get runningCount(): number {
    return this.#live.size;
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
