import { type CleanupJob, CleanupJobShape, JsonShapes } from "@holdfast/api-shapes";
import { encodeJson, listAll, putIfAbsent, readJsonAs } from "@holdfast/conditional-store";
import { z } from "zod";
import type { DatasetEntry } from "./datasets.js";
import { problem } from "./problem.js";

/**
 * Cleanup job history and the last cleanup plan, kept on the dataset's own store so every
 * replica sees the same history and a restart loses none of it (the server keeps no state
 * of its own). Every object is written once, create-only, and never rewritten:
 *
 *   _holdfast/server/jobs/<job id>.json        the job as it started (state running)
 *   _holdfast/server/jobs/<job id>.end.json    the job as it ended (succeeded or failed)
 *   _holdfast/server/jobs/<job id>.lost.json   written by a later run that found the job
 *                                              still running while it held the dataset's
 *                                              cleanup lock: its replica died mid-run
 *   _holdfast/server/plans/<plan id>.json      a plan made through the API
 *
 * An `.end` record wins over a `.lost` one (a job whose replica wrote its end late was not
 * lost after all). Job and plan ids are ULIDs, so key order is time order; only the newest
 * `limit` jobs and `planLimit` plans are kept, older ones are deleted after each write.
 */
export const JOBS_PREFIX = "_holdfast/server/jobs/";
export const PLANS_PREFIX = "_holdfast/server/plans/";

const JOB_KEY = /^_holdfast\/server\/jobs\/([0-9A-HJKMNP-TV-Z]{26})(\.end|\.lost)?\.json$/;
const PLAN_KEY = /^_holdfast\/server\/plans\/([0-9A-HJKMNP-TV-Z]{26})\.json$/;

/** A stored plan: the `cleanup` document of a dry run plus when it was made. */
export const StoredPlanShape = JsonShapes.cleanup.extend({ plannedAt: z.string() });
export type StoredPlan = z.infer<typeof StoredPlanShape>;

type Stage = "start" | "end" | "lost";

export class JobHistory {
  constructor(
    private readonly limits: { jobs: number; plans: number },
    private readonly onError: (error: unknown, what: string) => void,
  ) {}

  /** Records a job as it starts (create-only). */
  recordStart(ds: DatasetEntry, job: CleanupJob): Promise<void> {
    return this.#write(ds, jobKey(job.id, "start"), job, `start of job ${job.id}`);
  }

  /** Records a job as it ended (create-only), then drops the oldest jobs beyond the limit. */
  async recordEnd(ds: DatasetEntry, job: CleanupJob): Promise<void> {
    await this.#write(ds, jobKey(job.id, "end"), job, `end of job ${job.id}`);
    await this.#prune(ds).catch((error: unknown) => this.onError(error, "pruning the history"));
  }

  /**
   * Called by run `by` once it held the dataset's cleanup lock: a job that started before it
   * and is still recorded as running cannot be (one run holds the lock at a time), so its
   * replica stopped before it finished. Each gets a `.lost` record saying so; `running`
   * names this replica's own jobs.
   */
  async settleLost(ds: DatasetEntry, by: string, running: ReadonlySet<string>): Promise<void> {
    const jobs = await this.list(ds).catch((error: unknown) => {
      this.onError(error, "listing jobs to settle lost ones");
      return [];
    });
    for (const job of jobs) {
      if (job.state !== "running" || running.has(job.id) || job.id >= by) continue;
      const lost: CleanupJob = {
        ...job,
        state: "failed",
        progress: null,
        error: problem(
          502,
          "unresolved",
          `replica ${job.replica} stopped before job ${job.id} finished`,
          {
            code: "JOB_LOST",
            hint: "a later run holding the cleanup lock recovered what it left (retirements finished or undone)",
          },
        ),
      };
      await this.#write(ds, jobKey(job.id, "lost"), lost, `lost job ${job.id}`);
    }
  }

  /** Jobs of a dataset, newest first, each in its latest recorded stage. */
  async list(ds: DatasetEntry): Promise<CleanupJob[]> {
    const stages = await this.#stages(ds);
    const jobs: CleanupJob[] = [];
    for (const [id, found] of [...stages].sort(([a], [b]) => (a < b ? 1 : a > b ? -1 : 0))) {
      const job = await this.#readLatest(ds, id, found);
      if (job) jobs.push(job);
    }
    return jobs;
  }

  /** One job in its latest recorded stage, or undefined. */
  async get(ds: DatasetEntry, id: string): Promise<CleanupJob | undefined> {
    const upper = id.toUpperCase();
    return this.#readLatest(ds, upper, new Set<Stage>(["end", "lost", "start"]));
  }

  /** Stores a plan (create-only) and drops the oldest beyond the limit. */
  async savePlan(ds: DatasetEntry, id: string, plan: StoredPlan): Promise<void> {
    await this.#write(ds, `${PLANS_PREFIX}${id}.json`, plan, `plan ${id}`);
    const keys: string[] = [];
    for await (const meta of listAll(ds.store, PLANS_PREFIX)) {
      if (PLAN_KEY.test(meta.key)) keys.push(meta.key);
    }
    keys.sort();
    await this.#remove(ds, keys.slice(0, Math.max(0, keys.length - this.limits.plans)));
  }

  /** The newest stored plan, or null. */
  async lastPlan(ds: DatasetEntry): Promise<StoredPlan | null> {
    const keys: string[] = [];
    for await (const meta of listAll(ds.store, PLANS_PREFIX)) {
      if (PLAN_KEY.test(meta.key)) keys.push(meta.key);
    }
    for (const key of keys.sort().reverse()) {
      const plan = await readJsonAs(ds.store, key, StoredPlanShape);
      if (plan) return plan;
    }
    return null;
  }

  async #stages(ds: DatasetEntry): Promise<Map<string, Set<Stage>>> {
    const stages = new Map<string, Set<Stage>>();
    for await (const meta of listAll(ds.store, JOBS_PREFIX)) {
      const match = JOB_KEY.exec(meta.key);
      if (!match) continue;
      const id = match[1]!;
      const stage: Stage = match[2] === ".end" ? "end" : match[2] === ".lost" ? "lost" : "start";
      stages.set(id, (stages.get(id) ?? new Set()).add(stage));
    }
    return stages;
  }

  async #readLatest(
    ds: DatasetEntry,
    id: string,
    stages: ReadonlySet<Stage>,
  ): Promise<CleanupJob | undefined> {
    for (const stage of ["end", "lost", "start"] as const) {
      if (!stages.has(stage)) continue;
      const job = await readJsonAs(ds.store, jobKey(id, stage), CleanupJobShape);
      // The store holds one dataset's history: another replica may serve it under another name.
      if (job) return job;
    }
    return undefined;
  }

  async #prune(ds: DatasetEntry): Promise<void> {
    const stages = await this.#stages(ds);
    const ids = [...stages.keys()].sort();
    const old = ids.slice(0, Math.max(0, ids.length - this.limits.jobs));
    const keys = old.flatMap((id) => [...stages.get(id)!].map((stage) => jobKey(id, stage)));
    await this.#remove(ds, keys);
  }

  async #remove(ds: DatasetEntry, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    try {
      await ds.store.deleteMany(keys);
    } catch (error) {
      this.onError(error, `pruning ${keys.length} history object(s)`);
    }
  }

  async #write(ds: DatasetEntry, key: string, value: unknown, what: string): Promise<void> {
    try {
      // A conflict means the record already exists (written once, never replaced).
      await putIfAbsent(ds.store, key, encodeJson(value), { sleep: ds.ctx.sleep });
    } catch (error) {
      this.onError(error, `recording ${what}`);
    }
  }
}

// --- utils ---

function jobKey(id: string, stage: Stage): string {
  return `${JOBS_PREFIX}${id}${stage === "start" ? "" : `.${stage}`}.json`;
}
