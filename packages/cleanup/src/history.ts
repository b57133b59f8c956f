import {
  encodeJson,
  holdfastError,
  isHoldfastError,
  listAll,
  type ObjectStore,
  putIfAbsent,
  readJsonAs,
} from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { resolverOptions } from "@holdfast/protocol/internal";
import { CLEANUP_RUNNING } from "@holdfast/retirement";
import { z } from "zod";
import { CleanupInterruptedError, type CleanupStats } from "./types.js";

/**
 * Run history: a small summary of every cleanup or recovery run that asked for one
 * (`CleanupOptions.history`), kept on the dataset's own store so whoever ran it (the CLI, a
 * server job, a schedule, a script) every reader of the store sees it. One object per run,
 * written once, create-only, when the run ends (docs/protocol.md §1):
 *
 *   _holdfast/history/<ulid>.json
 *
 * The ULID comes from the run's id source, so key order is time order. After each write the
 * oldest summaries beyond `keep` are deleted. Writing and pruning are best effort: a
 * failure is reported through `onError` and never fails the run (the summary only informs;
 * nothing reads it to decide what to delete).
 */
export const HISTORY_PREFIX = "_holdfast/history/";

/** Summaries kept per dataset unless a run says otherwise. */
export const DEFAULT_HISTORY_KEEP = 100;

/** Most version ranges a summary lists per kind; past it, `rangesTruncated` is true. */
export const MAX_HISTORY_RANGES = 200;

const HISTORY_KEY = /^_holdfast\/history\/([0-9A-HJKMNP-TV-Z]{26})\.json$/;

/** What a run that keeps a summary says about itself. */
export interface RunHistoryOptions {
  /** Who started the run: `cli`, `api`, `schedule`, or any short label. @default "library" */
  readonly trigger?: string | undefined;
  /** An id the starter knows the run by (the server's job id). */
  readonly jobId?: string | undefined;
  /** Summaries kept on the store, the newest first (1..10,000). @default DEFAULT_HISTORY_KEEP */
  readonly keep?: number | undefined;
  /** Told about a summary that could not be written or pruned. @default ignore */
  readonly onError?: ((error: unknown) => void) | undefined;
}

const RangeShape = z.object({
  branch: z.string(),
  from: z.number().int(),
  to: z.number().int(),
});

/** A stored run summary (schema 1). Unknown fields are kept, so later writers may add some. */
export const RunSummaryShape = z.looseObject({
  schema: z.literal(1),
  id: z.string(),
  mode: z.enum(["cleanup", "recover"]),
  trigger: z.string(),
  jobId: z.string().nullable(),
  /** Local clock of the machine that ran it (the listing's `recordedAt` is storage time). */
  startedAt: z.string(),
  endedAt: z.string(),
  elapsedMs: z.number(),
  outcome: z.enum(["succeeded", "interrupted", "failed"]),
  error: z
    .object({ kind: z.string(), code: z.string().nullable(), message: z.string() })
    .nullable(),
  retiredVersions: z.number().int(),
  finishedVersions: z.number().int(),
  retiredRanges: z.array(RangeShape),
  finishedRanges: z.array(RangeShape),
  rangesTruncated: z.boolean(),
  keptVersions: z.number().int(),
  objectsDeleted: z.record(z.string(), z.number()),
  bytesDeleted: z.number(),
  warnings: z.array(z.string()),
});
/** A run summary as stored (`RunSummaryShape`). */
export type RunSummary = z.infer<typeof RunSummaryShape>;

/** A summary as listed: what was stored plus the store's stamp of its write (storage time). */
export type RunHistoryEntry = RunSummary & { readonly recordedAt: string };

/**
 * Builds the summary of a run that ended: from its stats (none when it failed before
 * any), its outcome and error. Bounded: at most MAX_HISTORY_RANGES ranges per kind and ten
 * warnings, whatever the run's size.
 */
export function runSummary(
  run: {
    id: string;
    mode: "cleanup" | "recover";
    startedAtMs: number;
    endedAtMs: number;
    options: RunHistoryOptions;
  },
  stats: CleanupStats | undefined,
  error?: unknown,
): RunSummary {
  const count = (ranges: readonly { from: number; to: number }[]) =>
    ranges.reduce((sum, r) => sum + (r.to - r.from + 1), 0);
  const retired = stats?.retiredRanges ?? [];
  const finished = stats?.finishedRanges ?? [];
  const range = (r: { branch: string; from: number; to: number }) => ({
    branch: r.branch,
    from: r.from,
    to: r.to,
  });
  return {
    schema: 1,
    id: run.id,
    mode: run.mode,
    trigger: run.options.trigger ?? "library",
    jobId: run.options.jobId ?? null,
    startedAt: new Date(run.startedAtMs).toISOString(),
    endedAt: new Date(run.endedAtMs).toISOString(),
    elapsedMs: run.endedAtMs - run.startedAtMs,
    outcome:
      error === undefined
        ? "succeeded"
        : isHoldfastError(error, "aborted")
          ? "interrupted"
          : "failed",
    error: error === undefined ? null : describeError(error),
    retiredVersions: count(retired),
    finishedVersions: count(finished),
    retiredRanges: retired.slice(0, MAX_HISTORY_RANGES).map(range),
    finishedRanges: finished.slice(0, MAX_HISTORY_RANGES).map(range),
    rangesTruncated: retired.length > MAX_HISTORY_RANGES || finished.length > MAX_HISTORY_RANGES,
    keptVersions: stats?.retained.length ?? 0,
    objectsDeleted: { ...(stats?.objectsDeleted ?? {}) },
    bytesDeleted: stats?.bytesDeleted ?? 0,
    warnings: (stats?.warnings ?? []).slice(0, 10),
  };
}

/**
 * Writes a run's summary (create-only, `_holdfast/history/<id>.json`), then deletes the
 * oldest beyond `keep`. Never throws: a failure goes to `options.onError`. 1 PUT + 1 LIST,
 * + 1 batch DELETE when summaries are pruned.
 */
export async function writeRunSummary(
  ctx: ProtocolContext,
  summary: RunSummary,
  options: RunHistoryOptions = {},
): Promise<void> {
  const report = options.onError ?? (() => {});
  try {
    if (!HISTORY_KEY.test(historyKey(summary.id))) {
      throw new Error(`run id ${summary.id} is not a ULID`);
    }
    await putIfAbsent(ctx.store, historyKey(summary.id), encodeJson(summary), resolverOptions(ctx));
  } catch (error) {
    report(error);
    return;
  }
  try {
    await pruneRunHistory(ctx.store, historyKeep(options.keep));
  } catch (error) {
    report(error);
  }
}

/** Deletes the oldest summaries beyond `keep` (one LIST, one batch DELETE when needed). */
export async function pruneRunHistory(store: ObjectStore, keep: number): Promise<number> {
  const keys: string[] = [];
  for await (const meta of listAll(store, HISTORY_PREFIX)) {
    if (HISTORY_KEY.test(meta.key)) keys.push(meta.key);
  }
  keys.sort();
  const old = keys.slice(0, Math.max(0, keys.length - keep));
  if (old.length > 0) await store.deleteMany(old);
  return old.length;
}

/**
 * The run summaries on a store, newest first, at most `limit` (one LIST, one GET per
 * summary returned). An object that does not parse as a summary is skipped.
 */
export async function listRunHistory(
  store: ObjectStore,
  options: { limit?: number; signal?: AbortSignal } = {},
): Promise<RunHistoryEntry[]> {
  const limit = options.limit ?? DEFAULT_HISTORY_KEEP;
  const found: { key: string; lastModified: Date }[] = [];
  for await (const meta of listAll(store, HISTORY_PREFIX, { signal: options.signal })) {
    if (HISTORY_KEY.test(meta.key)) found.push({ key: meta.key, lastModified: meta.lastModified });
  }
  found.sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
  const entries: RunHistoryEntry[] = [];
  for (const { key, lastModified } of found) {
    if (entries.length >= limit) break;
    const summary = await readJsonAs(store, key, RunSummaryShape);
    if (summary) entries.push({ ...summary, recordedAt: lastModified.toISOString() });
  }
  return entries;
}

/**
 * Runs `go` (one cleanup or recovery) and, when `history` asks for it, leaves its summary on
 * the store as it ends, whatever the outcome: succeeded, interrupted (with what it did) or
 * failed. A run refused before it began (bad input, another cleanup holding the lock) leaves
 * none. A plan never does (it writes nothing). The options are checked before the run.
 */
export async function withRunHistory(
  ctx: ProtocolContext,
  mode: "plan" | "cleanup" | "recover",
  history: RunHistoryOptions | false | undefined,
  go: () => Promise<CleanupStats>,
): Promise<CleanupStats> {
  if (mode === "plan" || history === undefined || history === false) return go();
  checkRunHistoryOptions(history, mode);
  const run = { id: ctx.ids.next(), mode, startedAtMs: ctx.clock.now(), options: history };
  let stats: CleanupStats;
  try {
    stats = await go();
  } catch (error) {
    if (!refusedBeforeStart(error)) {
      const done = error instanceof CleanupInterruptedError ? error.stats : undefined;
      const summary = runSummary({ ...run, endedAtMs: ctx.clock.now() }, done, error);
      await writeRunSummary(ctx, summary, history);
    }
    throw error;
  }
  await writeRunSummary(ctx, runSummary({ ...run, endedAtMs: ctx.clock.now() }, stats), history);
  return stats;
}

/** Checks run history options (`invalid-input` INVALID_OPTION, as every run option), before any request. */
export function checkRunHistoryOptions(history: unknown, operation: string): RunHistoryOptions {
  const bad = (why: string) =>
    holdfastError("invalid-input", operation, `invalid history option: ${why}`, {
      code: "INVALID_OPTION",
    });
  if (typeof history !== "object" || history === null) throw bad("not an object");
  const { trigger, jobId, keep, onError } = history as Record<string, unknown>;
  if (trigger !== undefined && (typeof trigger !== "string" || !/^[\w.:-]{1,64}$/.test(trigger)))
    throw bad("trigger must be 1 to 64 letters, digits, . _ : -");
  if (jobId !== undefined && (typeof jobId !== "string" || jobId.length > 128))
    throw bad("jobId must be a string of at most 128 characters");
  if (
    keep !== undefined &&
    (!Number.isSafeInteger(keep) || (keep as number) < 1 || (keep as number) > 10_000)
  )
    throw bad("keep must be an integer from 1 to 10000");
  if (onError !== undefined && typeof onError !== "function")
    throw bad("onError must be a function");
  return history as RunHistoryOptions;
}

/** The key of a run's summary. */
export function historyKey(id: string): string {
  return `${HISTORY_PREFIX}${id}.json`;
}

// --- utils ---

function historyKeep(keep: number | undefined): number {
  return keep ?? DEFAULT_HISTORY_KEEP;
}

/** A run that never began: refused input, or another cleanup holds the lock. */
function refusedBeforeStart(error: unknown): boolean {
  return (
    isHoldfastError(error, "invalid-input") ||
    (isHoldfastError(error, "conflict") && (error as { code?: string }).code === CLEANUP_RUNNING)
  );
}

function describeError(error: unknown): RunSummary["error"] {
  if (error instanceof Error) {
    const { kind, code } = error as Error & { kind?: unknown; code?: unknown };
    return {
      kind: typeof kind === "string" ? kind : "internal",
      code: typeof code === "string" ? code : null,
      message: error.message.slice(0, 500),
    };
  }
  return { kind: "internal", code: null, message: String(error).slice(0, 500) };
}
