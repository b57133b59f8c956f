import type { ProtocolContext } from "@holdfast/dataset";
import {
  abandon,
  activeVersions,
  commit,
  confirmCommit,
  drain,
  HeldRecord,
  isFenced,
  type RetirementHandle,
  readRecord,
  seal,
  UnresolvedTransitionError,
} from "@holdfast/retirement";
import { type BranchCandidates, type Interrupted, keepFilesOf } from "./plan.js";
import { merge, type RunState } from "./run-state.js";

/**
 * Step 4, retire: the retirement protocol (docs/protocol.md) per record, all before any
 * deletion: drain → lease census → seal → lease census → reference census → commit. The
 * plan streams one record's candidates at a time into {@link Retirer.retire}; committed
 * records are appended to `interrupted.committed` (this run's own without their version
 * list, re-read at deletion, so the run never holds every record at once); kept versions'
 * files join the retained set. A plan runs the censuses only and writes nothing.
 */
export class Retirer {
  #retiredCount = 0;

  constructor(
    private readonly state: RunState,
    readonly retainedFiles: Set<string>,
    private readonly interrupted: Interrupted,
  ) {
    state.progress({ phase: "retire", done: 0 });
  }

  /** Retires one record's candidates (every one of them before any deletion of the run). */
  async retire({ branch, entries }: BranchCandidates): Promise<void> {
    const { state } = this;
    const { ctx, stats } = state;
    const { committed } = this.interrupted;
    // The record this run is moving and has not carried to commit yet (one at a time);
    // the run's heartbeat renews it through `state.held`.
    let current: HeldRecord | undefined;
    try {
      state.checkpoint();
      const versions = entries.map((e) => e.version);
      let kept: Map<number, string>;
      if (state.dryRun) {
        kept = await state.leaseCensus(branch, versions, state.now);
        const rest = versions.filter((v) => !kept.has(v));
        merge(kept, rest.length > 0 ? await state.referenceCensus(branch, rest) : new Map());
        const etags = new Map(entries.map((e) => [e.version, e.etag]));
        const planRecord = planHandle(branch, state.owner, versions, etags, kept);
        state.ownRecords.add(planRecord.key);
        if (activeVersions(planRecord.record).length > 0) committed.push(planRecord);
      } else {
        kept = new Map();
        try {
          // 1. drain: new acquisitions refused, admitted leases still renew.
          const drained = await drain(ctx, {
            branch,
            versions: entries.map((e) => ({ version: e.version, manifestEtag: e.etag })),
            owner: state.owner,
            ownershipBoundMs: state.options.ownershipBoundMs,
          });
          current = new HeldRecord(ctx, drained);
          state.held.current = current;
          state.ownRecords.add(drained.key);
          // 2. lease census after the drain is durable: active leases win.
          merge(kept, await state.leaseCensus(branch, versions, state.now));
          state.checkpoint();
          // 3. seal (renewal cutoff), cancelling the census-1 versions in the same write.
          let handle = await current.update((h) => seal(ctx, h, { cancel: kept }));
          let rest = activeVersions(handle.record);
          if (rest.length > 0) {
            const late = new Map<number, string>();
            // census 2: leases renewed or admitted before the seal win.
            merge(late, await state.leaseCensus(branch, rest, state.now));
            rest = rest.filter((v) => !late.has(v));
            // 4. reference census: intents, canonical refs, lineage; throws on read errors.
            if (rest.length > 0) merge(late, await state.referenceCensus(branch, rest));
            // The last safe point before the irreversible boundary.
            state.checkpoint();
            // 5. commit: the irreversible boundary.
            handle = await current.update((h) => commitOrStop(ctx, h, late));
            merge(kept, late);
          }
          if (handle.record.state === "committed") committed.push(withoutVersions(handle));
          else await ctx.store.delete(handle.key); // every version kept: cancelled
          current = undefined;
          state.held.current = undefined;
        } catch (error) {
          if (!isFenced(error)) throw error;
          // A recovering cleaner (or an operator's abandon) took the record over: what it
          // commits it deletes itself, what it cancels must stay, so keep every candidate's files.
          current = undefined;
          state.held.current = undefined;
          stats.warnings.push(`${branch}: retirement taken over by another cleaner`);
          kept = new Map(versions.map((v) => [v, "retiring"]));
        }
      }
      for (const [version, reason] of kept) {
        stats.retained.push({ branch, version, reason });
        await keepFilesOf(state, this.retainedFiles, branch, version);
      }
      this.#retiredCount += versions.length - kept.size;
      state.progress({ phase: "retire", done: this.#retiredCount });
    } finally {
      // A drain or seal this run could not carry to commit (an error, an interrupt) is given
      // up at once, in-process (L5): nothing it named stays blocked.
      state.held.current = undefined;
      if (current)
        await current
          .update(async (h) => {
            await abandon(ctx, h);
            return h;
          })
          .catch(() => {});
    }
  }

  /** Waits for the kept versions' manifest reads. */
  async finish(): Promise<void> {
    await this.state.pool.drain();
  }
}

/**
 * A committed record of this run, without its version list: the deletion step re-reads
 * it (one GET per record), so the run does not hold every record until then.
 */
function withoutVersions(handle: RetirementHandle): RetirementHandle {
  const held = { ...handle, record: { ...handle.record, versions: [] } };
  activeCounts.set(held, activeVersions(handle.record).length);
  return held;
}

/** How many versions a handle held without its version list retires (progress totals). */
const activeCounts = new WeakMap<RetirementHandle, number>();

/** Manifests a committed record retires: its active versions, also for a handle held without them. */
export function retiredManifestCount(handle: RetirementHandle): number {
  return handle.record.versions.length > 0
    ? activeVersions(handle.record).length
    : (activeCounts.get(handle) ?? 0);
}

/** The full record of a handle held without its versions (see {@link withoutVersions}); `null` when gone. */
export async function fullRecord(
  state: RunState,
  handle: RetirementHandle,
): Promise<RetirementHandle | null> {
  if (handle.record.versions.length > 0) return handle;
  const fresh = await readRecord(state.ctx, handle.key);
  if (!fresh) return null;
  if (fresh.record.state !== "committed") {
    state.stats.warnings.push(
      `${handle.key}: no longer committed (${fresh.record.state}); skipped`,
    );
    return null;
  }
  return fresh;
}

/** Commit; an unknown outcome stops the run unless one read shows the commit landed as ours. */
async function commitOrStop(
  ctx: ProtocolContext,
  handle: RetirementHandle,
  cancel: Map<number, string>,
): Promise<RetirementHandle> {
  try {
    return await commit(ctx, handle, { cancel });
  } catch (error) {
    if (!(error instanceof UnresolvedTransitionError)) throw error;
    // Throws `unresolved` (or `conflict`) unless the stored record is our commit.
    return await confirmCommit(ctx, error);
  }
}

/** A committed-looking handle for a plan: nothing is written. */
function planHandle(
  branch: string,
  owner: string,
  versions: number[],
  etags: Map<number, string>,
  kept: Map<number, string>,
): RetirementHandle {
  return {
    key: `(plan)/${branch}`,
    etag: "",
    record: {
      schema: 1,
      opId: "plan",
      writerId: "plan",
      owner,
      branch,
      state: "committed",
      ownershipBoundMs: 1,
      versions: versions.map((version) => {
        const reason = kept.get(version);
        return {
          version,
          manifestEtag: etags.get(version) ?? "",
          cancelled: reason !== undefined,
          ...(reason === undefined ? {} : { reason }),
        };
      }),
    },
  };
}
