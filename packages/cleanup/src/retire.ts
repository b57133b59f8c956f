import type { FormatManifest } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
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
import type { TaskPool } from "./pool.js";
import { merge, type RunState } from "./run-state.js";
import { type Holding, holdSealed } from "./sealed.js";
import type { RetiredManifests } from "./spill.js";

/** A sealed record of this run waiting for the run's commits, with what its censuses kept. */
interface Sealed {
  readonly branch: string;
  /** In memory, or past `spillAboveVersions` sealed versions in the run's spill folder. */
  readonly held: Holding;
  /** Versions census 2 and the reference census kept (cancelled in the commit write). */
  readonly late: Map<number, string>;
  /** Manifests of the versions the commit will retire, read before it (spilled). */
  readonly manifests: RetiredManifests;
}

/** One record's candidates, read and validated, waiting for the plan to complete. */
interface Queued {
  readonly branch: string;
  /** How many candidates the plan gave. */
  readonly count: number;
  /**
   * Every candidate's listed ETag and manifest as read before any retirement write
   * (`null`: absent), spilled once the record's last read answered.
   */
  manifests?: RetiredManifests;
}

/**
 * Cleanup 5 retire: Retirement 2–6 (docs/protocol.md §5) per record, all before any deletion. While
 * the plan streams, every candidate's manifest is read and validated ({@link Retirer.read}); only
 * once the plan is complete, so every manifest the run keeps or retires has been read, is the first
 * record drained ({@link Retirer.retireAll}): a manifest the format refuses stops the run before
 * any retirement write (docs/protocol.md §6.1). Then per record: drain → census 1 → seal → census 2
 * (leases, then references), and the record waits sealed; {@link Retirer.finish} commits them.
 * Committed records are appended to `interrupted.committed` without their version list (re-read at
 * deletion); kept versions' files join the retained set. A plan runs the censuses only and writes
 * nothing.
 */
export class Retirer {
  /** Candidates the retire phase has decided (retired, or kept by a census): its `done`. */
  #decided = 0;
  /** Candidates the plan handed over: the retire phase's total. */
  #candidates = 0;
  #planRecords = 0;
  readonly #queued: Queued[] = [];
  readonly #sealed: Sealed[] = [];

  constructor(
    private readonly state: RunState,
    readonly retainedFiles: Set<string>,
    private readonly interrupted: Interrupted,
  ) {}

  /**
   * Reads, through the read pool, the manifest of every candidate of one record (the plan's
   * sink): the format validates each, so a refusal fails the pool, and so the plan, before
   * anything is written. The record waits, unwritten, for {@link retireAll}; the deletion
   * uses these reads (each retired manifest is read once). The record's manifests are in
   * memory only until its last read answers: then they go to the run's spill (one file per
   * record, in the plan's order), so the heap does not grow with the versions retired.
   */
  async read({ branch, entries }: BranchCandidates): Promise<void> {
    const { state } = this;
    state.checkpoint();
    const queued: Queued = { branch, count: entries.length };
    this.#queued.push(queued);
    this.#candidates += entries.length;
    // The reads' closures hold the candidates' numbers and listed ETags, not their entries
    // (keys, dates), and the record's reads only until the spill has serialized them.
    const versions = entries.map((entry) => entry.version);
    const listedEtags = entries.map((entry) => entry.etag);
    const read: (FormatManifest | null)[] = new Array(entries.length).fill(null);
    let pending = entries.length;
    // The task of the record's last read writes the spill: the pool's drain waits for it.
    const spill = () => {
      const written = state.spill.write(
        versions.map((version, i) => ({
          version,
          listedEtag: listedEtags[i]!,
          manifest: read[i] ?? null,
        })),
      );
      read.fill(null);
      return written;
    };
    if (pending === 0) queued.manifests = await spill();
    const readOne = async (i: number) => {
      read[i] = await state.format.readManifest(state.ctx, branch, versions[i]!);
      state.planProgress.done(1);
      pending -= 1;
      if (pending === 0) queued.manifests = await spill();
    };
    await startEach(state.pool, entries.length, readOne);
  }

  /**
   * After the plan is complete (every read of the run done, the read pool drained): the
   * queued records in order, each up to its seal. Nothing of the run was written before.
   */
  async retireAll(): Promise<void> {
    await this.state.pool.drain();
    // The phase's total is every candidate of the plan, known before its first write.
    this.#report();
    while (this.#queued.length > 0) await this.#retire(this.#queued.shift()!);
  }

  /** Retires one record's candidates up to its seal; their manifests were read before. */
  async #retire({ branch, count, manifests: spilled }: Queued): Promise<void> {
    const { state } = this;
    const { ctx, stats } = state;
    const { committed } = this.interrupted;
    if (!spilled) throw new Error("a queued record's manifests were not spilled"); // retireAll drained the reads
    const manifests = spilled;
    // The record this run is moving, until it is sealed and queued for commit (or given up).
    let current: HeldRecord | undefined;
    // Whether a committed record (or a plan's) goes on with the spilled manifests.
    let used = false;
    try {
      state.checkpoint();
      // A manifest replaced between the listing and the read is not the one the plan
      // judged: kept (reason `changed`), never drained. The record names the ETag read.
      // One record's candidates in memory (the record holds them anyway).
      const { entries, changed } = await splitChanged(manifests);
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
          // Kept and changed versions leave it below, once their files are retained.
          state.retiredManifests.set(planRecord.key, manifests);
          used = true;
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
            // What the seal cancelled and the changed versions leave it below. The record
            // waits for the commits in memory or, past `spillAboveVersions`, in the spill
            // folder (docs/protocol.md §6.2); the heartbeat renews it either way.
            state.held.delete(current);
            const held = await holdSealed(ctx, state.spill, current);
            state.held.add(held);
            this.#sealed.push({ branch, held, late, manifests });
            used = true;
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
      for (const [version, reason] of kept) stats.retained.push({ branch, version, reason });
      await this.#retainFiles(manifests, kept);
      // The record retires the rest: what the deletion and the last look see of it.
      manifests.except(kept.keys());
      this.#decided += count;
      this.#report();
    } finally {
      if (!used) await manifests.discard();
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
      let retiring = false;
      try {
        const handle = await held.update((h) => commitOrStop(ctx, h, late));
        if (handle.record.state === "committed") {
          this.interrupted.committed.push(withoutVersions(handle));
          state.retiredManifests.set(handle.key, manifests);
          retiring = true;
        } else await ctx.store.delete(handle.key); // every version kept: cancelled
      } catch (error) {
        // Any other failure leaves the record queued: abandonSealed gives it up.
        if (!isFenced(error)) throw error;
        // Taken over by a recovering cleaner: what it commits it deletes itself, what it
        // cancels must stay, so every version of the record keeps its files.
        stats.warnings.push(`${branch}: retirement taken over by another cleaner`);
        kept = new Map();
        for await (const { version } of manifests.versions()) {
          kept.set(version, late.get(version) ?? "retiring");
        }
      }
      state.held.delete(held);
      this.#sealed.shift();
      for (const [version, reason] of kept) stats.retained.push({ branch, version, reason });
      await this.#retainFiles(manifests, kept);
      // The late versions are cancelled in the commit: not the deletion's.
      manifests.except(kept.keys());
      if (!retiring) await manifests.discard();
    }
    // Every record committed or cancelled: the phase ends (its last event).
    this.#report();
  }

  /** The retire phase's progress: candidates decided (retired or kept) of every candidate. */
  #report(): void {
    this.state.progress({ phase: "retire", done: this.#decided, total: this.#candidates });
  }

  /** Adds the files of the kept versions' manifests (as read before the drain) to the retained set: one pass over the spill. */
  async #retainFiles(
    manifests: RetiredManifests,
    kept: ReadonlyMap<number, string>,
  ): Promise<void> {
    if (kept.size === 0) return;
    for await (const { version, manifest } of manifests.versions()) {
      if (!kept.has(version)) continue;
      for (const file of manifest?.files ?? []) this.retainedFiles.add(file.key);
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
async function giveUp(ctx: ProtocolContext, held: Holding): Promise<void> {
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

/**
 * Starts `task(0)` to `task(count - 1)` in the pool, in order, each once a slot is free.
 * The loop is its own small function: it is resumed once per task, which makes it hot for
 * the optimizing compiler, and a long caller would be compiled whole.
 */
async function startEach(
  pool: TaskPool,
  count: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  for (let i = 0; i < count; i += 1) await pool.run(() => task(i));
}

/**
 * A record's spilled candidates, in order: those whose manifest is the one listed (or gone),
 * named by the listed ETag, and those whose manifest was replaced between the listing and
 * the read (kept as `changed`).
 */
async function splitChanged(manifests: RetiredManifests): Promise<{
  entries: { version: number; etag: string }[];
  changed: Map<number, string>;
}> {
  const changed = new Map<number, string>();
  const entries: { version: number; etag: string }[] = [];
  for await (const { version, listedEtag, manifest } of manifests.versions()) {
    if (!manifest || manifest.etag === listedEtag) entries.push({ version, etag: listedEtag });
    else changed.set(version, "changed");
  }
  return { entries, changed };
}
