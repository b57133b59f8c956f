import {
  CountingStore,
  holdfastError,
  listAll,
  type ObjectStore,
  type RequestCounts,
} from "@holdfast/conditional-store";
import {
  CLOCK_PREFIX,
  type DatasetFormat,
  defaultFormat,
  type ProtocolContext,
  storageNow as probeStorageNow,
  type VersionEntry,
} from "@holdfast/dataset";
import { censusLeases, deleteLeasesOf, sweepExpiredLeases } from "@holdfast/leases";
import { censusReferences } from "@holdfast/refs-lifecycle";
import {
  abandon,
  activeVersions,
  commit,
  confirmCommit,
  type DeleteLeases,
  drain,
  finalize,
  isFenced,
  type LeaseCensus,
  type PresentManifests,
  parseRetirementKey,
  RETIREMENT_ROOT,
  type ReferenceCensus,
  type RetirementHandle,
  readRecord,
  recoverRetirements,
  seal,
  UnresolvedTransitionError,
} from "@holdfast/retirement";
import {
  type CleanupPolicy,
  policyRetires,
  type RetainReason,
  tooRecent,
  validatePolicy,
} from "./policy.js";
import { TaskPool } from "./pool.js";

/** Phases cleanup reports progress for, in order. */
export type CleanupPhase = "recover" | "plan" | "retire" | "delete" | "orphans";

/** A progress event: `done` of `total` (when known) items of a phase. */
export interface CleanupProgress {
  readonly phase: CleanupPhase;
  readonly done: number;
  readonly total?: number | undefined;
}

export interface CleanupOptions {
  /** The dataset format. @default the holdfast format of `@holdfast/dataset` */
  readonly format?: DatasetFormat | undefined;
  readonly onProgress?: ((progress: CleanupProgress) => void) | undefined;
  /** @default censusLeases(ctx) from `@holdfast/leases` */
  readonly leaseCensus?: LeaseCensus | undefined;
  /** @default censusReferences(ctx) from `@holdfast/refs-lifecycle` (intents, canonical refs, lineage; fail-closed) */
  readonly referenceCensus?: ReferenceCensus | undefined;
  /** @default deleteLeasesOf(ctx, ...) from `@holdfast/leases` */
  readonly deleteLeases?: DeleteLeases | undefined;
  /** Requests in flight at once (manifest reads, batch deletes). @default 8 */
  readonly concurrency?: number | undefined;
  /** Storage "now" to use instead of a probe (tests; a dry run defaults to the local clock to stay write-free). */
  readonly storageNow?: Date | undefined;
  /** Drain ownership bound. @default 15 min */
  readonly ownershipBoundMs?: number | undefined;
  /**
   * Most versions one retirement record names; a branch with more candidates is retired
   * as several operations, so a record stays small (about 70 bytes per version).
   * @default 10000
   */
  readonly maxVersionsPerRecord?: number | undefined;
}

/** A version cleanup kept, and why. */
export interface RetainedVersion {
  readonly branch: string;
  readonly version: number;
  readonly reason: RetainReason;
}

/** What a cleanup did (or, for a plan, would do). */
export interface CleanupStats {
  readonly dryRun: boolean;
  /** Versions retired by this run, recovered ones included. */
  readonly retired: { branch: string; version: number }[];
  /** Every version kept, with the reason. */
  readonly retained: RetainedVersion[];
  readonly recovered: { committed: number; cancelled: number; retained: number };
  readonly objectsDeleted: {
    manifests: number;
    dataFiles: number;
    orphans: number;
    probes: number;
    /** Lease objects of crashed readers, removed an hour past their TTL. */
    expiredLeases: number;
    total: number;
  };
  readonly bytesDeleted: number;
  /** Requests this run sent, by type (a plan's are all reads). */
  readonly requests: RequestCounts & { total: number };
  /** Local-clock duration of the run. */
  readonly elapsedMs: number;
  /** Things left for a later run (e.g. a retirement whose deletion is incomplete). */
  readonly warnings: string[];
}

/** Error code of the typed error for `errorIfTaggedOldVersions`. */
export const TAGGED_OLD_VERSIONS = "TaggedOldVersions";

/** Storage-time probes older than this are leftovers of a crashed probe. */
const PROBE_LEFTOVER_MS = 60 * 60 * 1000;

/**
 * Retires and deletes old versions safely (SPEC §4, §6): recovers interrupted work first,
 * selects candidates by policy (latest of every branch always kept), then drain → lease
 * census → seal → lease census → reference census → commit, deletes data files no retained
 * version names and the retired manifests, finalizes (no metadata left, L3), and sweeps
 * orphan data files older than the grace. A version with an active lease, a tag, a branch
 * depending on it or a reference intent is never deleted (invariants 1, 2).
 */
export function cleanup(
  ctx: ProtocolContext,
  policy: CleanupPolicy,
  options: CleanupOptions = {},
): Promise<CleanupStats> {
  return run(ctx, policy, options, policy.dryRun === true ? "plan" : "cleanup");
}

/** The same decisions as {@link cleanup} with zero writes: what would be retired, kept and deleted. */
export function planCleanup(
  ctx: ProtocolContext,
  policy: CleanupPolicy,
  options: CleanupOptions = {},
): Promise<CleanupStats> {
  return run(ctx, { ...policy, dryRun: true }, options, "plan");
}

/**
 * Recovery only (the CLI's `recover`): resolves every retirement record (stale drains
 * cancelled, sealed ones censused, committed ones deleted and finalized); retires nothing new.
 */
export function recover(ctx: ProtocolContext, options: CleanupOptions = {}): Promise<CleanupStats> {
  // The policy is unused: in "recover" mode every listed version is kept.
  return run(ctx, { retainVersions: 1 }, options, "recover");
}

type Mode = "cleanup" | "plan" | "recover";

interface BranchCandidates {
  readonly branch: string;
  readonly entries: VersionEntry[];
}

async function run(
  baseCtx: ProtocolContext,
  policyIn: CleanupPolicy,
  options: CleanupOptions,
  mode: Mode,
): Promise<CleanupStats> {
  const policy = validatePolicy(policyIn);
  const dryRun = mode === "plan";
  const counting = new CountingStore(baseCtx.store);
  const ctx: ProtocolContext = { ...baseCtx, store: counting };
  const startedAt = baseCtx.clock.now();
  const format = options.format ?? defaultFormat;
  const leaseCensus = options.leaseCensus ?? censusLeases(ctx);
  const referenceCensus = options.referenceCensus ?? censusReferences(ctx);
  const deleteLeases: DeleteLeases =
    options.deleteLeases ?? ((branch, versions) => deleteLeasesOf(ctx, branch, versions));
  const progress = options.onProgress ?? (() => {});
  // Reads and deletes get separate pools: a read task queues deletes, and a task waiting
  // for a slot in its own pool could deadlock it.
  const pool = new TaskPool(options.concurrency ?? 8);
  const deletePool = new TaskPool(options.concurrency ?? 8);
  const batchSize = Math.max(1, ctx.store.capabilities.maxBatchDelete);

  const stats = {
    retired: [] as { branch: string; version: number }[],
    retained: [] as RetainedVersion[],
    recovered: { committed: 0, cancelled: 0, retained: 0 },
    objectsDeleted: {
      manifests: 0,
      dataFiles: 0,
      orphans: 0,
      probes: 0,
      expiredLeases: 0,
      total: 0,
    },
    bytesDeleted: 0,
    warnings: [] as string[],
  };

  const now =
    options.storageNow ?? (dryRun ? new Date(ctx.clock.now()) : await probeStorageNow(ctx));
  const owner = ctx.ids.next();

  // --- 1. recovery: resolve what earlier runs left (committed work always completes) ---
  progress({ phase: "recover", done: 0 });
  const committed: RetirementHandle[] = [];
  const busy = new Map<string, Set<number>>();
  if (dryRun) {
    for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
      if (!parseRetirementKey(meta.key)) continue;
      const handle = await readRecord(ctx, meta.key);
      if (!handle || handle.record.state === "cancelled") continue;
      if (handle.record.state === "committed") committed.push(handle);
      else addAll(busy, handle.record.branch, activeVersions(handle.record));
    }
  } else {
    const report = await recoverRetirements(ctx, {
      leaseCensus,
      referenceCensus,
      owner,
      storageNow: now,
    });
    committed.push(...report.committed);
    for (const live of report.live) addAll(busy, live.record.branch, activeVersions(live.record));
    stats.recovered = {
      committed: report.committed.length,
      cancelled: report.cancelled.length,
      retained: report.retained.length,
    };
  }
  const beingDeleted = new Map<string, Set<number>>();
  for (const h of committed) addAll(beingDeleted, h.record.branch, activeVersions(h.record));
  progress({ phase: "recover", done: committed.length });

  // --- 2. plan: keep the latest / newest N / non-matching; read retained manifests only ---
  // The one set that grows with the dataset: data files of retained versions. Candidates
  // are held as (version, ETag, Last-Modified); their manifests are read once, at deletion.
  const retainedFiles = new Set<string>();
  const candidates: BranchCandidates[] = [];
  const branches = await format.listBranches(ctx);
  const selected = new Set(policy.branches ?? branches);
  const window = Math.max(1, policy.retainVersions ?? 1);
  let planned = 0;
  const keepFilesOf = (branch: string, version: number) =>
    pool.run(async () => {
      const manifest = await format.readManifest(ctx, branch, version);
      for (const file of manifest?.files ?? []) retainedFiles.add(file.key);
    });
  const retain = async (entry: VersionEntry, reason: RetainReason) => {
    stats.retained.push({ branch: entry.branch, version: entry.version, reason });
    await keepFilesOf(entry.branch, entry.version);
  };
  // `recover` reads manifests only when committed work needs the retained-file set.
  const planBranches = mode === "recover" && committed.length === 0 ? [] : branches;
  for (const branch of planBranches) {
    const mine: VersionEntry[] = [];
    const skip = beingDeleted.get(branch);
    const recent: VersionEntry[] = [];
    const classify = async (entry: VersionEntry) => {
      if (mode !== "recover" && selected.has(branch) && !busy.get(branch)?.has(entry.version)) {
        if (policyRetires(policy, entry, now)) {
          if (tooRecent(policy.minVersionAgeMs, entry, now)) await retain(entry, "recent");
          else mine.push(entry);
          return;
        }
        await retain(entry, "policy");
      } else {
        await retain(entry, busy.get(branch)?.has(entry.version) ? "retiring" : "policy");
      }
    };
    for await (const entry of format.listVersions(ctx, branch)) {
      planned += 1;
      if (skip?.has(entry.version)) continue;
      recent.push(entry);
      // Only a version with `window` newer ones after it can be a candidate.
      if (recent.length > window) await classify(recent.shift()!);
    }
    for (const [i, entry] of recent.entries()) {
      await retain(entry, i === recent.length - 1 ? "latest" : "policy");
    }
    const perRecord = Math.max(1, options.maxVersionsPerRecord ?? 10_000);
    for (let i = 0; i < mine.length; i += perRecord) {
      candidates.push({ branch, entries: mine.slice(i, i + perRecord) });
    }
    progress({ phase: "plan", done: planned });
  }
  await pool.drain();

  // --- 3. policy checks that must fail before any new retirement write ---
  if (policy.errorIfTaggedOldVersions) {
    for (const { branch, entries } of candidates) {
      const refs = await referenceCensus(
        branch,
        entries.map((e) => e.version),
      );
      const tagged = [...refs].filter(([, reason]) => reason === "tag").map(([v]) => v);
      if (tagged.length > 0) {
        throw holdfastError(
          "refused",
          "cleanup",
          `policy would retire tagged version(s) ${tagged.join(", ")} of ${branch}`,
          {
            code: TAGGED_OLD_VERSIONS,
            hint: "delete the tags or turn off errorIfTaggedOldVersions",
          },
        );
      }
    }
  }

  // --- 4. retire: SPEC §4 steps 1-5 per branch, all before any deletion ---
  // The record this run is moving and has not carried to commit yet (one at a time).
  let current: RetirementHandle | undefined;
  let retiredCount = 0;
  const totalCandidates = candidates.reduce((n, c) => n + c.entries.length, 0);
  progress({ phase: "retire", done: 0, total: totalCandidates });
  try {
    for (const { branch, entries } of candidates) {
      const versions = entries.map((e) => e.version);
      let kept: Map<number, string>;
      if (dryRun) {
        kept = await leaseCensus(branch, versions, now);
        const rest = versions.filter((v) => !kept.has(v));
        merge(kept, rest.length > 0 ? await referenceCensus(branch, rest) : new Map());
        const etags = new Map(entries.map((e) => [e.version, e.etag]));
        const planRecord: RetirementHandle = planHandle(branch, owner, versions, etags, kept);
        if (activeVersions(planRecord.record).length > 0) committed.push(planRecord);
      } else {
        kept = new Map();
        try {
          // 1. drain: new acquisitions refused, admitted leases still renew.
          current = await drain(ctx, {
            branch,
            versions: entries.map((e) => ({ version: e.version, manifestEtag: e.etag })),
            owner,
            ownershipBoundMs: options.ownershipBoundMs,
          });
          // 2. lease census after the drain is durable: active leases win.
          merge(kept, await leaseCensus(branch, versions, now));
          // 3. seal (renewal cutoff), cancelling the census-1 versions in the same write.
          current = await seal(ctx, current, { cancel: kept });
          let rest = activeVersions(current.record);
          if (rest.length > 0) {
            const late = new Map<number, string>();
            // census 2: leases renewed or admitted before the seal win.
            merge(late, await leaseCensus(branch, rest, now));
            rest = rest.filter((v) => !late.has(v));
            // 4. reference census: intents, canonical refs, lineage; throws on read errors.
            if (rest.length > 0) merge(late, await referenceCensus(branch, rest));
            // 5. commit: the irreversible boundary.
            current = await commitOrStop(ctx, current, late);
            merge(kept, late);
          }
          if (current.record.state === "committed") committed.push(current);
          else await ctx.store.delete(current.key); // every version kept: cancelled
          current = undefined;
        } catch (error) {
          if (!isFenced(error)) throw error;
          // A recovering cleaner took the record over and carries it on: what it commits
          // it deletes itself, what it cancels must stay, so keep every candidate's files.
          current = undefined;
          stats.warnings.push(`${branch}: retirement taken over by another cleaner`);
          kept = new Map(versions.map((v) => [v, "retiring"]));
        }
      }
      for (const [version, reason] of kept) {
        stats.retained.push({ branch, version, reason });
        await keepFilesOf(branch, version);
      }
      retiredCount += versions.length - kept.size;
      progress({ phase: "retire", done: retiredCount, total: totalCandidates });
    }
    await pool.drain();
  } finally {
    // A drain or seal this run could not carry to commit is given up at once (L5).
    if (current) await abandon(ctx, current).catch(() => {});
  }

  // --- 5. delete (data files no retained version names, then manifests) and finalize ---
  progress({ phase: "delete", done: 0, total: committed.length });
  const plannedData = new Set<string>();
  let recordsDone = 0;
  for (const handle of committed) {
    const { branch } = handle.record;
    const queuedData = new Set<string>();
    const dataBatch = new DeleteBatcher(ctx.store, deletePool, batchSize, dryRun);
    // Manifests go only after every data file of the record is gone: until then they
    // tell a resumed run what to delete.
    const manifestKeys: string[] = [];
    let complete = true;
    for (const entry of handle.record.versions) {
      if (entry.cancelled) continue;
      stats.retired.push({ branch, version: entry.version });
      await pool.run(async () => {
        const manifest = await format.readManifest(ctx, branch, entry.version);
        if (!manifest) return; // deleted by an earlier, interrupted run
        if (manifest.etag !== entry.manifestEtag) {
          // Not the manifest that was retired: keep it and everything it names.
          for (const file of manifest.files) retainedFiles.add(file.key);
          complete = false;
          stats.warnings.push(
            `${branch}@${entry.version}: manifest changed since it was drained; kept`,
          );
          return;
        }
        for (const file of manifest.files) {
          if (retainedFiles.has(file.key) || queuedData.has(file.key)) continue;
          queuedData.add(file.key);
          // A plan deletes nothing, so the orphan sweep below would see these again.
          if (dryRun) plannedData.add(file.key);
          stats.bytesDeleted += file.size;
          await dataBatch.add(file.key);
        }
        manifestKeys.push(format.manifestKey(branch, entry.version));
      });
    }
    await pool.drain();
    stats.objectsDeleted.dataFiles += await dataBatch.flush();
    const manifestBatch = new DeleteBatcher(ctx.store, deletePool, batchSize, dryRun);
    for (const key of manifestKeys) await manifestBatch.add(key);
    stats.objectsDeleted.manifests += await manifestBatch.flush();
    if (!dryRun && complete) {
      try {
        await finalize(ctx, handle, {
          deleteLeases,
          presentManifests: formatPresentManifests(ctx, format),
        });
      } catch (error) {
        stats.warnings.push(`${handle.key}: finalize failed (${String(error)}); recovery retries`);
      }
    }
    recordsDone += 1;
    progress({ phase: "delete", done: recordsDone, total: committed.length });
  }

  // --- 6. orphans: data files no manifest names, older than the grace (storage time) ---
  progress({ phase: "orphans", done: 0 });
  if (mode !== "recover") {
    const orphans = new DeleteBatcher(ctx.store, deletePool, batchSize, dryRun);
    const cutoff = truncSec(now) - policy.orphanGraceMs;
    for await (const meta of listAll(ctx.store, format.dataPrefix)) {
      if (!format.isDataKey(meta.key) || retainedFiles.has(meta.key)) continue;
      if (truncSec(meta.lastModified) >= cutoff) continue;
      if (plannedData.has(meta.key)) continue;
      stats.bytesDeleted += meta.size;
      await orphans.add(meta.key);
    }
    stats.objectsDeleted.orphans += await orphans.flush();
    const probes = new DeleteBatcher(ctx.store, deletePool, batchSize, dryRun);
    for await (const meta of listAll(ctx.store, CLOCK_PREFIX)) {
      if (truncSec(meta.lastModified) < truncSec(now) - PROBE_LEFTOVER_MS)
        await probes.add(meta.key);
    }
    stats.objectsDeleted.probes += await probes.flush();
    // Leases left by readers that crashed without releasing: gone an hour (storage time)
    // past their TTL, so no holder can still rely on them (invariant 5).
    // Every branch folder, not only branches that still have versions: a reader whose
    // acquire on a deleted branch lost its own cleanup delete leaves a lease there.
    if (!dryRun) {
      stats.objectsDeleted.expiredLeases += (await sweepExpiredLeases(ctx, undefined, now)).deleted;
    }
    progress({ phase: "orphans", done: stats.objectsDeleted.orphans });
  }

  const deleted = stats.objectsDeleted;
  deleted.total =
    deleted.manifests +
    deleted.dataFiles +
    deleted.orphans +
    deleted.probes +
    deleted.expiredLeases;
  const requests = counting.requestCounts();
  return {
    dryRun,
    ...stats,
    requests: { ...requests, total: counting.totalRequests() },
    elapsedMs: baseCtx.clock.now() - startedAt,
  };
}

// --- utils ---

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

/** Collects keys and deletes them in backend-sized batches through the pool. */
class DeleteBatcher {
  #keys: string[] = [];
  #deleted = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly pool: TaskPool,
    private readonly size: number,
    private readonly dryRun: boolean,
  ) {}

  async add(key: string): Promise<void> {
    this.#keys.push(key);
    if (this.#keys.length >= this.size) await this.#send();
  }

  /** Sends what is queued; resolves to the number deleted once the pool has drained. */
  async flush(): Promise<number> {
    if (this.#keys.length > 0) await this.#send();
    await this.pool.drain();
    return this.#deleted;
  }

  async #send(): Promise<void> {
    const batch = this.#keys;
    this.#keys = [];
    if (this.dryRun) {
      this.#deleted += batch.length;
      return;
    }
    await this.pool.run(async () => {
      const result = await this.store.deleteMany(batch);
      this.#deleted += result.deleted.length;
      if (result.failed.length > 0) {
        const first = result.failed[0]!;
        throw holdfastError("ambiguous", "deleteMany", `${result.failed.length} deletions failed`, {
          key: first.key,
          cause: first.error,
          hint: "re-run cleanup: committed retirement resumes where it stopped",
        });
      }
    });
  }
}

/** Present-manifest check through the format: one listing of the branch from the record's first version. */
function formatPresentManifests(ctx: ProtocolContext, format: DatasetFormat): PresentManifests {
  return async (branch, versions) => {
    const wanted = new Set(versions);
    const max = Math.max(...versions);
    const present = new Set<number>();
    for await (const entry of format.listVersions(ctx, branch)) {
      if (entry.version > max) break;
      if (wanted.has(entry.version)) present.add(entry.version);
    }
    return present;
  };
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

function addAll(map: Map<string, Set<number>>, branch: string, versions: number[]): void {
  const set = map.get(branch) ?? new Set<number>();
  map.set(branch, set);
  for (const v of versions) set.add(v);
}

function merge(into: Map<number, string>, from: ReadonlyMap<number, string>): void {
  for (const [version, reason] of from) if (!into.has(version)) into.set(version, reason);
}

function truncSec(d: Date): number {
  return Math.floor(d.getTime() / 1000) * 1000;
}
