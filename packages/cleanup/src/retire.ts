import type { FormatManifest, ProtocolContext, VersionEntry } from "@holdfast/dataset";
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
import type { BranchCandidates, Interrupted } from "./plan.js";
import { merge, type RunState } from "./run-state.js";

/** A sealed record of this run waiting for the run's commits, with what its censuses kept. */
interface Sealed {
  readonly branch: string;
  readonly held: HeldRecord;
  /** Versions census 2 and the reference census kept (cancelled in the commit write). */
  readonly late: Map<number, string>;
  /** Manifests of the versions the commit will retire, read before it. */
  readonly manifests: Map<number, FormatManifest | null>;
}

/** One record's candidates, read and validated, waiting for the plan to complete. */
interface Queued {
  readonly branch: string;
  readonly entries: VersionEntry[];
  /** Every candidate's manifest as read before any retirement write (`null`: absent). */
  readonly manifests: Map<number, FormatManifest | null>;
}

/**
 * Step 4, retire: the retirement protocol (docs/protocol.md) per record, all before any
 * deletion. While the plan streams, every candidate's manifest is read and validated
 * ({@link Retirer.read}); only once the plan is complete, so every manifest the run keeps
 * or retires has been read, is the first record drained ({@link Retirer.retireAll}): a
 * manifest the format refuses stops the run before any retirement write (docs/protocol.md,
 * Cleanup "Refuse before the commit"). Then per record: drain → lease census → seal →
 * lease census → reference census, and the record waits sealed; {@link Retirer.finish}
 * commits them. Committed records are appended to `interrupted.committed` without their
 * version list (re-read at deletion); kept versions' files join the retained set. A plan
 * runs the censuses only and writes nothing.
 */
export class Retirer {
  #retiredCount = 0;
  #planRecords = 0;
  readonly #queued: Queued[] = [];
  readonly #sealed: Sealed[] = [];

  constructor(
    private readonly state: RunState,
    readonly retainedFiles: Set<string>,
    private readonly interrupted: Interrupted,
  ) {
    state.progress({ phase: "retire", done: 0 });
  }

  /**
   * Reads, through the read pool, the manifest of every candidate of one record (the plan's
   * sink): the format validates each, so a refusal fails the pool, and so the plan, before
   * anything is written. The record waits, unwritten, for {@link retireAll}; the deletion
   * uses these reads (each retired manifest is read once).
   */
  async read({ branch, entries }: BranchCandidates): Promise<void> {
    const { state } = this;
    state.checkpoint();
    const manifests = new Map<number, FormatManifest | null>();
    this.#queued.push({ branch, entries, manifests });
    for (const entry of entries) {
      await state.pool.run(async () => {
        manifests.set(
          entry.version,
          await state.format.readManifest(state.ctx, branch, entry.version),
        );
      });
    }
  }

  /**
   * After the plan is complete (every read of the run done, the read pool drained): the
   * queued records in order, each up to its seal. Nothing of the run was written before.
   */
  async retireAll(): Promise<void> {
    await this.state.pool.drain();
    while (this.#queued.length > 0) await this.#retire(this.#queued.shift()!);
  }

  /** Retires one record's candidates up to its seal; their manifests were read before. */
  async #retire({ branch, entries: listed, manifests }: Queued): Promise<void> {
    const { state } = this;
    const { ctx, stats } = state;
    const { committed } = this.interrupted;
    // The record this run is moving, until it is sealed and queued for commit (or given up).
    let current: HeldRecord | undefined;
    try {
      state.checkpoint();
      // A manifest replaced between the listing and the read is not the one the plan
      // judged: kept (reason `changed`), never drained. The record names the ETag read.
      const changed = new Map<number, string>();
      const entries = listed.filter((e) => {
        const manifest = manifests.get(e.version);
        if (!manifest || manifest.etag === e.etag) return true;
        changed.set(e.version, "changed");
        return false;
      });
      const versions = entries.map((e) => e.version);
      let kept: Map<number, string>;
      if (versions.length === 0) {
        kept = new Map();
      } else if (state.dryRun) {
        kept = await state.leaseCensus(branch, versions, state.now);
        const rest = versions.filter((v) => !kept.has(v));
        merge(kept, rest.length > 0 ? await state.referenceCensus(branch, rest) : new Map());
        const etags = new Map(entries.map((e) => [e.version, e.etag]));
        this.#planRecords += 1;
        const planRecord = planHandle(
          `(plan)/${branch}/${this.#planRecords}`,
          branch,
          state.owner,
          versions,
          etags,
          kept,
        );
        state.ownRecords.add(planRecord.key);
        if (activeVersions(planRecord.record).length > 0) {
          committed.push(planRecord);
          state.retiredManifests.set(
            planRecord.key,
            new Map(activeVersions(planRecord.record).map((v) => [v, manifests.get(v) ?? null])),
          );
        }
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
          state.held.add(current);
          state.ownRecords.add(drained.key);
          // 2. lease census after the drain is durable: active leases win.
          merge(kept, await state.leaseCensus(branch, versions, state.now));
          state.checkpoint();
          // 3. seal (renewal cutoff), cancelling the census-1 versions in the same write.
          const handle = await current.update((h) => seal(ctx, h, { cancel: kept }));
          let rest = activeVersions(handle.record);
          if (rest.length === 0) {
            await ctx.store.delete(handle.key); // every version kept: cancelled
            state.held.delete(current);
            current = undefined;
          } else {
            const late = new Map<number, string>();
            // census 2: leases renewed or admitted before the seal win.
            merge(late, await state.leaseCensus(branch, rest, state.now));
            rest = rest.filter((v) => !late.has(v));
            // 4. reference census: intents, canonical refs, lineage; throws on read errors.
            if (rest.length > 0) merge(late, await state.referenceCensus(branch, rest));
            const inRecord = new Map<number, FormatManifest | null>();
            for (const v of activeVersions(handle.record))
              inRecord.set(v, manifests.get(v) ?? null);
            this.#sealed.push({ branch, held: current, late, manifests: inRecord });
            current = undefined; // committed or given up by finish / abandonSealed
          }
        } catch (error) {
          if (!isFenced(error)) throw error;
          // A recovering cleaner (or an operator's abandon) took the record over: what it
          // commits it deletes itself, what it cancels must stay, so keep every candidate's files.
          if (current) state.held.delete(current);
          current = undefined;
          stats.warnings.push(`${branch}: retirement taken over by another cleaner`);
          kept = new Map(versions.map((v) => [v, "retiring"]));
        }
      }
      merge(kept, changed);
      for (const [version, reason] of kept) {
        stats.retained.push({ branch, version, reason });
        for (const file of manifests.get(version)?.files ?? []) this.retainedFiles.add(file.key);
      }
      this.#retiredCount += listed.length - kept.size;
      state.progress({ phase: "retire", done: this.#retiredCount });
    } finally {
      // A drain or seal this run could not carry to its seal (an error, an interrupt) is
      // given up at once, in-process (L5): nothing it named stays blocked.
      if (current) {
        state.held.delete(current);
        await giveUp(ctx, current);
      }
    }
  }

  /**
   * Waits for every manifest read of the plan (kept versions and sealed records), then
   * commits the sealed records in order: the irreversible boundary of each, after every
   * read of the run that could refuse. Kept versions of a commit join the retained set.
   */
  async finish(): Promise<void> {
    const { state } = this;
    const { ctx, stats } = state;
    await state.pool.drain();
    while (this.#sealed.length > 0) {
      const sealed = this.#sealed[0]!;
      const { branch, held, late, manifests } = sealed;
      // The last safe point before the irreversible boundary.
      state.checkpoint();
      // 5. commit: the irreversible boundary.
      let kept: Map<number, string> = late;
      try {
        const handle = await held.update((h) => commitOrStop(ctx, h, late));
        if (handle.record.state === "committed") {
          this.interrupted.committed.push(withoutVersions(handle));
          const retiring = new Map(manifests);
          for (const version of late.keys()) retiring.delete(version);
          state.retiredManifests.set(handle.key, retiring);
        } else await ctx.store.delete(handle.key); // every version kept: cancelled
      } catch (error) {
        // Any other failure leaves the record queued: abandonSealed gives it up.
        if (!isFenced(error)) throw error;
        // Taken over by a recovering cleaner: what it commits it deletes itself, what it
        // cancels must stay, so every version of the record keeps its files.
        stats.warnings.push(`${branch}: retirement taken over by another cleaner`);
        kept = new Map([...manifests.keys()].map((v) => [v, late.get(v) ?? "retiring"]));
      }
      state.held.delete(held);
      this.#sealed.shift();
      for (const [version, reason] of kept) {
        stats.retained.push({ branch, version, reason });
        for (const file of manifests.get(version)?.files ?? []) this.retainedFiles.add(file.key);
      }
      this.#retiredCount -= kept.size;
      state.progress({ phase: "retire", done: this.#retiredCount });
    }
  }

  /**
   * Gives up every record still sealed and not committed (the run failed or was
   * interrupted before its commits): cancelled and deleted in-process, so nothing they
   * name stays blocked (L5). A commit whose outcome is unknown is left as it is: the
   * if-match of the give-up conflicts when the commit landed.
   */
  async abandonSealed(): Promise<void> {
    const sealed = this.#sealed.splice(0);
    for (const { held } of sealed) {
      this.state.held.delete(held);
      await giveUp(this.state.ctx, held);
    }
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

/** Cancels and deletes a record this run gives up (in-process, L5); a failure leaves it to recovery. */
async function giveUp(ctx: ProtocolContext, held: HeldRecord): Promise<void> {
  await held
    .update(async (h) => {
      await abandon(ctx, h);
      return h;
    })
    .catch(() => {});
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
  key: string,
  branch: string,
  owner: string,
  versions: number[],
  etags: Map<number, string>,
  kept: Map<number, string>,
): RetirementHandle {
  return {
    key,
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
