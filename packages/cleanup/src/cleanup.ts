import { isHoldfastError } from "@holdfast/conditional-store";
import { requireFormat } from "@holdfast/dataset/internal";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  DEFAULT_OWNERSHIP_BOUND_MS,
  isCleanupLockLost,
  type RetirementHandle,
  releaseCleanupLock,
  renewCleanupLock,
  startDeletion,
  startHeartbeat,
} from "@holdfast/retirement";
import { deleteRetired, type PlannedDeletions, retireVersionNumbers } from "./delete.js";
import { finalizeRetired } from "./finalize.js";
import { withRunHistory } from "./history.js";
import { planCandidates, refuseTaggedCandidates, resolveInterrupted } from "./plan.js";
import type { CleanupPolicy } from "./policy.js";
import { cancelReplacedBeforeReads, type LateCommits, protectLateCommits } from "./protect.js";
import { gatherReasons } from "./reasons.js";
import { fullRecord, Retirer, retiredManifestCount } from "./retire.js";
import { createRunState, type Mode, type RunInternals, type RunState } from "./run-state.js";
import { SpilledRecord } from "./sealed.js";
import type { HeldLock } from "./start.js";
import { sweepOrphans } from "./sweep.js";
import {
  CleanupInterruptedError,
  type CleanupOptions,
  type CleanupStats,
  type RetainedVersion,
} from "./types.js";

export type {
  CleanupOptions,
  CleanupPhase,
  CleanupProgress,
  CleanupStats,
  RetainedVersion,
} from "./types.js";
export { CLEANUP_INTERRUPTED, CleanupInterruptedError, TAGGED_OLD_VERSIONS } from "./types.js";

/**
 * Retires and deletes old versions safely (docs/protocol.md): recovers interrupted work
 * first, selects candidates by policy (latest of every branch always kept), then drain →
 * lease census → seal → lease census → reference census → commit, deletes data files no
 * retained version names and the retired manifests, finalizes (no metadata left, L3), and
 * sweeps orphan data files older than the grace. A version with an active lease, a tag, a
 * branch depending on it or a reference intent is never deleted (invariants 1, 2).
 */
export function cleanup(
  ctx: ProtocolContext,
  policy: CleanupPolicy,
  options: CleanupOptions,
): Promise<CleanupStats> {
  const mode = policy.dryRun === true ? "plan" : "cleanup";
  return withRunHistory(ctx, mode, options?.history, () => run(ctx, policy, options, mode));
}

/** The same decisions as {@link cleanup} with zero writes: what would be retired, kept and deleted. */
export function planCleanup(
  ctx: ProtocolContext,
  policy: CleanupPolicy,
  options: CleanupOptions,
): Promise<CleanupStats> {
  return run(ctx, { ...policy, dryRun: true }, options, "plan");
}

/**
 * Recovery only (the CLI's `recover`): resolves every retirement record (stale drains
 * cancelled, sealed ones censused, committed ones deleted and finalized); retires nothing new.
 */
export function recover(ctx: ProtocolContext, options: CleanupOptions): Promise<CleanupStats> {
  return recoverWith(ctx, options, {});
}

/** {@link recover} with the run's internal overrides (recover-all.ts); not exported by the package. */
export function recoverWith(
  ctx: ProtocolContext,
  options: CleanupOptions,
  internals: RunInternals,
): Promise<CleanupStats> {
  // The policy is unused: in "recover" mode every listed version is kept.
  return withRunHistory(ctx, "recover", options?.history, () =>
    run(ctx, { retainVersions: 1 }, options, "recover", internals),
  );
}

/**
 * One run, as the steps of docs/protocol.md §6: Cleanup 1 lock → 2 recover → 3 plan →
 * (4 tag check) → 5 retire → 6 last look → 7 floor → per record 8 mark → 9 delete →
 * 10 finalize → 11 sweep. A heartbeat renews the lock and the pre-commit record in flight; an
 * abort of `options.signal` ends the run at the next safe point with
 * {@link CleanupInterruptedError}.
 */
async function run(
  baseCtx: ProtocolContext,
  policy: CleanupPolicy,
  options: CleanupOptions,
  mode: Mode,
  internals: RunInternals = {},
): Promise<CleanupStats> {
  // docs/protocol.md §1.1: first, before the policy or any request.
  requireFormat((options as Partial<CleanupOptions> | undefined)?.format, mode);
  const startedAt = baseCtx.clock.now();
  // Cleanup 1 lock: the cleanup lock (not for a plan or a concurrent run) and the run's "now".
  const state = await createRunState(baseCtx, policy, options, mode, internals);
  const lock = state.lock;
  const heartbeat = startRunHeartbeat(state, lock);
  let retirer: Retirer | undefined;
  try {
    const interrupted = await resolveInterrupted(state); // Cleanup 2 recover
    // Before any manifest is read: a refusal met by the plan must not keep a recovered
    // record's replaced version refused to leases (docs/protocol.md §6, Cleanup 2 recover).
    await cancelReplacedBeforeReads(state, interrupted.committed);
    state.checkpoint();
    // Cleanup 4 tag check, then Cleanup 3 plan. Tags must fail the run before any
    // retirement write: a first pass over the plan checks them (only when asked), then the
    // plan streams each record's candidates to the reads that validate them.
    if (state.policy.errorIfTaggedOldVersions) {
      await planCandidates(state, interrupted, {
        checkOnly: true,
        sink: (batch) => refuseTaggedCandidates(state, batch),
      });
    }
    const retiring = new Retirer(state, new Set<string>(), interrupted);
    retirer = retiring;
    const plan = await planCandidates(state, interrupted, {
      retainedFiles: retiring.retainedFiles,
      sink: (batch) => retiring.read(batch),
    });
    // Cleanup 5 retire. Every manifest the run keeps or retires is read and validated: only
    // now is the first record drained, so a refusal writes no retirement record
    // (docs/protocol.md §6.1). Each record goes up to its seal, then all commit.
    await retiring.retireAll();
    await retiring.finish();
    // Cleanup 6 last look, after every commit of this run and before any deletion. A dry run
    // looks too (reads only), so its plan keeps what the run would keep.
    const late: LateCommits =
      mode === "recover" && interrupted.committed.length === 0
        ? { expiredIntents: [] }
        : await protectLateCommits(state, plan, interrupted.committed);
    // Every reason each kept version is kept (reads only; decides nothing).
    await gatherReasons(state);
    const plannedData: PlannedDeletions = new Set();
    await deleteAndFinalize(
      state,
      interrupted.committed,
      plan.retainedFiles,
      plannedData,
      late.present,
    );
    state.checkpoint();
    // Cleanup 11 sweep.
    await sweepOrphans(state, plan.retainedFiles, plannedData, late.expiredIntents);
    return summarize(state, baseCtx.clock.now() - startedAt);
  } catch (error) {
    // Stopped on request: say what was done. An unknown outcome stays what it is.
    if (state.stopping() && !isHoldfastError(error, "unresolved", "ambiguous")) {
      throw new CleanupInterruptedError(summarize(state, baseCtx.clock.now() - startedAt), error);
    }
    throw error;
  } finally {
    await heartbeat.stop();
    // Records sealed but not committed when the run failed or stopped: given up, so a
    // refusal or an interrupt before the commits blocks nothing (L5).
    await retirer?.abandonSealed();
    // The manifests spilled before the first drain: nothing a later run reads.
    await state.spill.remove();
    if (lock.current) await releaseCleanupLock(state.ctx, lock.current).catch(() => {});
  }
}

/** Renews the lock and the pre-commit record in flight every third of the ownership bound. */
function startRunHeartbeat(state: RunState, lock: HeldLock) {
  const boundMs = state.options.ownershipBoundMs ?? DEFAULT_OWNERSHIP_BOUND_MS;
  return startHeartbeat({
    everyMs: Math.max(1, Math.floor(boundMs / 3)),
    sleep: state.options.heartbeatSleep,
    beat: async () => {
      if (lock.current) {
        try {
          lock.current = await renewCleanupLock(state.ctx, lock.current);
        } catch (error) {
          if (!isCleanupLockLost(error)) throw error;
          lock.current = undefined;
          state.stats.warnings.push("the cleanup lock was taken over by another cleanup");
        }
      }
      // A fenced record makes the run's next transition fail and give it up. Records
      // waiting in the spill folder are renewed one at a time: one body in memory.
      const held = [...state.held];
      const spilled = held.filter((record) => record instanceof SpilledRecord);
      await Promise.allSettled([
        ...held.filter((record) => !(record instanceof SpilledRecord)).map((r) => r.renew()),
        (async () => {
          for (const record of spilled) await record.renew().catch(() => {});
        })(),
      ]);
    },
  });
}

/** Cleanup 7 floor, then per committed record Cleanup 8 mark → 9 delete → 10 finalize. */
async function deleteAndFinalize(
  state: RunState,
  committed: readonly RetirementHandle[],
  retainedFiles: Set<string>,
  plannedData: PlannedDeletions,
  present: LateCommits["present"],
): Promise<void> {
  // The phase's total before its first delete: every retired manifest (a record of this run
  // is held with its count only) and the distinct files, none retained, named by the
  // manifests this run read before its drain (what the deletion will send); each step
  // corrects it once its manifests are taken (the last look kept a version, an earlier run's
  // record adds its data files as they are read, manifests already gone are taken off).
  const foreseen = new Map<string, number>();
  for (const h of committed) {
    const files = await state.retiredManifests.get(h.key)?.filesToDelete(retainedFiles);
    if (files !== undefined) foreseen.set(h.key, files);
  }
  const planned = (h: RetirementHandle) => retiredManifestCount(h) + (foreseen.get(h.key) ?? 0);
  state.deleteProgress.start(committed.reduce((n, h) => n + planned(h), 0));
  await retireVersionNumbers(state, committed); // Cleanup 7 floor
  for (const held of committed) {
    state.checkpoint();
    const handle = await fullRecord(state, held);
    if (!handle) {
      // Finished by another cleaner meanwhile: its manifests leave the phase's total.
      state.deleteProgress.planned(-planned(held));
      continue;
    }
    // Cleanup 8 mark, before its first delete: from here a rewritten manifest rescues nothing
    // (docs/protocol.md §5.5).
    const marked = state.dryRun
      ? handle
      : await startDeletion(state.ctx, handle, { at: state.now });
    if (marked?.record.state !== "committed") {
      state.deleteProgress.planned(-planned(held));
      continue;
    }
    // Cleanup 9 delete, then Cleanup 10 finalize once the record's deletion is complete.
    const { complete } = await deleteRetired(
      state,
      marked,
      retainedFiles,
      plannedData,
      foreseen.get(held.key) ?? 0,
      present,
    );
    if (!state.dryRun && complete) await finalizeRetired(state, marked);
  }
}

function summarize(state: RunState, elapsedMs: number): CleanupStats {
  const { stats, counting } = state;
  const deleted = stats.objectsDeleted;
  deleted.total =
    deleted.manifests +
    deleted.dataFiles +
    deleted.orphans +
    deleted.probes +
    deleted.expiredLeases +
    deleted.expiredCommitIntents;
  const { retired, finished, retained, ...rest } = stats;
  const summary = {
    dryRun: state.dryRun,
    ...rest,
    retained: retained.map(
      (kept): RetainedVersion => ({ ...kept, reasons: kept.reasons ?? [kept.reason] }),
    ),
    retiredRanges: retired.ranges(),
    finishedRanges: finished.ranges(),
    requests: { ...counting.requestCounts(), total: counting.totalRequests() },
    elapsedMs,
  };
  // The version lists are built on first read (and kept): a caller that only needs the
  // ranges or counts never holds one object per version.
  return Object.defineProperties(summary, {
    retired: lazyList(() => retired.toList()),
    finished: lazyList(() => finished.toList()),
  }) as typeof summary & Pick<CleanupStats, "retired" | "finished">;
}

function lazyList<T>(build: () => T[]): PropertyDescriptor {
  let list: T[] | undefined;
  return {
    enumerable: true,
    get: () => {
      list ??= build();
      return list;
    },
  };
}
