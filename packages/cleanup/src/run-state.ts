import { CountingStore } from "@holdfast/conditional-store";
import { type DatasetFormat, type ObjectKind, requireHoldfastDataset } from "@holdfast/dataset";
import {
  holdfastDatasetKnown,
  holdfastMarkerUnchecked,
  markHoldfastDataset,
} from "@holdfast/dataset/internal";
import { censusLeases, deleteLeasesOf } from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import { censusReferences } from "@holdfast/refs-lifecycle";
import type { DeleteLeases, LeaseCensus, ReferenceCensus } from "@holdfast/retirement";
import { validateOptions } from "./options.js";
import { type CleanupPolicy, validatePolicy } from "./policy.js";
import { TaskPool } from "./pool.js";
import { RetiredLog } from "./ranges.js";
import { DeleteRate } from "./rate.js";
import type { Holding } from "./sealed.js";
import { type DeletedByKind, emptyByKind, ListedSizes } from "./sizes.js";
import { ManifestSpill, type RetiredManifests } from "./spill.js";
import { type HeldLock, lockAndClock } from "./start.js";
import type { CleanupOptions, CleanupProgress, KeptVersion } from "./types.js";

export type Mode = "cleanup" | "plan" | "recover";

/** Counters a run fills in as it goes; `run` turns them into {@link CleanupStats}. */
export interface MutableStats {
  /** Ranges, not a list: memory stays flat in the number of versions retired. */
  retired: RetiredLog;
  finished: RetiredLog;
  retained: KeptVersion[];
  recovered: { committed: number; cancelled: number; retained: number };
  objectsDeleted: {
    manifests: number;
    dataFiles: number;
    orphans: number;
    probes: number;
    expiredLeases: number;
    expiredCommitIntents: number;
    total: number;
  };
  bytesDeleted: number;
  /** The dataset's files deleted (or, in a plan, to be), per kind: objects and bytes. */
  deletedByKind: DeletedByKind;
  lastLook: { intents: number; lateManifests: number; filesKept: number };
  warnings: string[];
}

/** Everything the steps of one run share: context, collaborators, pools, clock, counters. */
export interface RunState {
  readonly mode: Mode;
  readonly dryRun: boolean;
  readonly policy: ReturnType<typeof validatePolicy>;
  readonly options: CleanupOptions;
  readonly counting: CountingStore;
  /** The caller's context with the store wrapped in `counting`. */
  readonly ctx: ProtocolContext;
  readonly format: DatasetFormat;
  readonly leaseCensus: LeaseCensus;
  readonly referenceCensus: ReferenceCensus;
  readonly deleteLeases: DeleteLeases;
  readonly progress: (progress: CleanupProgress) => void;
  /** The `delete` phase's counts in objects: `planned` raises its total, `deleted` its done. */
  readonly deleteProgress: DeleteProgress;
  /** The `plan` phase's counts in versions: `listed` raises its total, `decided` its done. */
  readonly planProgress: PhaseCounter;
  /** Manifest reads. Reads and deletes get separate pools: a read task queues deletes, and a task waiting for a slot in its own pool could deadlock it. */
  readonly pool: TaskPool;
  readonly deletePool: TaskPool;
  /** Sizes the manifests did not record, from one listing per folder. */
  readonly sizes: ListedSizes;
  /** The run's delete rate (`maxDeletesPerSecond`), shared by every batch delete. */
  readonly deleteRate: DeleteRate;
  readonly batchSize: number;
  /** Storage "now" of the run: its cleanup lock's Last-Modified, else one probe, or injected. */
  readonly now: Date;
  /** The run's cleanup lock (none for a plan or a `concurrent` run); released at the end. */
  readonly lock: HeldLock;
  /** This run's owner id in retirement records. */
  readonly owner: string;
  /** Keys of the records this run drained itself: their versions count as `retired`, others' as `finished`. */
  readonly ownRecords: Set<string>;
  readonly stats: MutableStats;
  /** The pre-commit records of this run (sealed ones wait for the run's commits); the heartbeat renews each. */
  readonly held: Set<Holding>;
  /**
   * Manifests of the versions this run's committed records retire, read and validated
   * before the run's first commit (docs/protocol.md §6.1),
   * by record key: deletion uses them instead of reading each manifest again. Their file
   * lists wait in {@link spill}: in memory up to `spillAboveVersions` versions, on disk beyond.
   */
  readonly retiredManifests: Map<string, RetiredManifests>;
  /** The run's temp files of manifests read before the first drain; removed when the run ends. */
  readonly spill: ManifestSpill;
  /** Throws the signal's reason when the run was asked to stop; called only at safe points. */
  checkpoint(): void;
  /** True once the run was asked to stop. */
  readonly stopping: () => boolean;
}

/**
 * What a run takes beyond its public options, from inside this package only: a reference
 * census other than the format's (recover-all.ts's refusing one, after a failed reference
 * recovery).
 */
export interface RunInternals {
  readonly referenceCensus?: ReferenceCensus | undefined;
}

/** Validates the policy, wires the collaborators, takes the cleanup lock and the run's storage time (start.ts). */
export async function createRunState(
  baseCtx: ProtocolContext,
  policyIn: CleanupPolicy,
  options: CleanupOptions,
  mode: Mode,
  internals: RunInternals = {},
): Promise<RunState> {
  const policy = validatePolicy(policyIn);
  validateOptions(options);
  const dryRun = mode === "plan";
  const counting = new CountingStore(baseCtx.store);
  const ctx: ProtocolContext = { ...baseCtx, store: counting };
  const warnings: string[] = [];
  const owner = ctx.ids.next();
  const signal = options.signal;
  const progress = options.onProgress ?? (() => {});
  const leaseCensus = options.leaseCensus ?? censusLeases(ctx);
  const { format } = options;
  // The census the caller's format gives (a Lance table's: its tags and branches).
  const referenceCensus = internals.referenceCensus ?? censusReferences(ctx, { format });
  // holdfast's layout: the store must be a holdfast dataset (one HEAD of its marker,
  // counted, before any write, unless the caller's store showed it before; a Lance table
  // is refused, never cleaned as if its files were orphans). docs/protocol.md §1.1.
  if (holdfastMarkerUnchecked(baseCtx.store, format)) {
    await requireHoldfastDataset(baseCtx, mode, { via: counting });
  }
  // Another format confirms a format object named without detection (a Lance table's
  // manifests are there, in that naming, at a table's root): before the lock, so a store
  // of no such dataset, or a folder inside one, gets no write at all.
  if (format.confirm) await format.confirm(baseCtx);
  // The run's counter is a view of the caller's store: a marker that store showed holds for
  // it, so the run's reference census never asks again (at most one HEAD per run, §1).
  if (holdfastDatasetKnown(baseCtx.store)) markHoldfastDataset(counting);
  // Last: nothing after the lock is taken may throw before the run's finally releases it.
  const { now, lock } = await lockAndClock(ctx, options, { dryRun, owner, warnings });
  return {
    mode,
    dryRun,
    policy,
    options,
    counting,
    ctx,
    format,
    leaseCensus,
    referenceCensus,
    deleteLeases:
      options.deleteLeases ?? ((branch, versions, o) => deleteLeasesOf(ctx, branch, versions, o)),
    progress,
    deleteProgress: new DeleteProgress(progress),
    planProgress: new PhaseCounter("plan", progress),
    pool: new TaskPool(options.concurrency ?? 8),
    deletePool: new TaskPool(options.deleteConcurrency ?? options.concurrency ?? 8),
    sizes: new ListedSizes(ctx),
    deleteRate: new DeleteRate(options.maxDeletesPerSecond, ctx.clock, ctx.sleep),
    batchSize: Math.max(1, ctx.store.capabilities.maxBatchDelete),
    now,
    lock,
    owner,
    ownRecords: new Set(),
    held: new Set(),
    retiredManifests: new Map(),
    spill: new ManifestSpill(options.spillDir, options.spillAboveVersions),
    checkpoint: () => signal?.throwIfAborted(),
    stopping: () => signal?.aborted === true,
    stats: {
      retired: new RetiredLog(),
      finished: new RetiredLog(),
      retained: [],
      recovered: { committed: 0, cancelled: 0, retained: 0 },
      objectsDeleted: {
        manifests: 0,
        dataFiles: 0,
        orphans: 0,
        probes: 0,
        expiredLeases: 0,
        expiredCommitIntents: 0,
        total: 0,
      },
      bytesDeleted: 0,
      deletedByKind: emptyByKind(),
      lastLook: { intents: 0, lateManifests: 0, filesKept: 0 },
      warnings,
    },
  };
}

/**
 * Counts one of the dataset's files the run deletes (or would): its kind as the format says
 * (else `fallback`), its size as recorded or listed; `bytesDeleted` is their sum.
 */
export function countDeletion(
  state: RunState,
  key: string,
  size: number,
  fallback: ObjectKind,
): void {
  const kind = state.format.objectKind?.(key) ?? fallback;
  const entry = state.stats.deletedByKind[kind];
  entry.objects += 1;
  entry.bytes += size;
  state.stats.bytesDeleted += size;
}

export function addAll(map: Map<string, Set<number>>, branch: string, versions: number[]): void {
  const set = map.get(branch) ?? new Set<number>();
  map.set(branch, set);
  for (const v of versions) set.add(v);
}

export function merge(into: Map<number, string>, from: ReadonlyMap<number, string>): void {
  for (const [version, reason] of from) if (!into.has(version)) into.set(version, reason);
}

export function truncSec(d: Date): number {
  return Math.floor(d.getTime() / 1000) * 1000;
}

/** Objects of the `delete` phase: done of a total known before the first delete (types.ts). */
export class DeleteProgress {
  #done = 0;
  #total = 0;

  constructor(private readonly emit: (progress: CleanupProgress) => void) {}

  /** Starts the phase with the objects known so far (the retired manifests). */
  start(total: number): void {
    this.#total = total;
    this.#report();
  }

  /** Corrects the total once a record is read: its data files added, manifests already gone taken off. */
  planned(change: number): void {
    this.#total += change;
    if (change !== 0) this.#report();
  }

  deleted(count: number): void {
    this.#done += count;
    this.#report();
  }

  #report(): void {
    this.emit({ phase: "delete", done: this.#done, total: this.#total });
  }
}

/**
 * Items of a phase found by a listing that streams (`plan`: versions listed, each done once
 * it is decided and its manifest read): the total is reported once the listing ended (then
 * exact, never below `done`); until then the events have none (a bar would otherwise
 * show the listing's lead, a few versions, as the whole).
 */
export class PhaseCounter {
  #done = 0;
  #found = 0;
  #complete = false;

  constructor(
    private readonly phase: "plan",
    private readonly emit: (progress: CleanupProgress) => void,
  ) {}

  /** The phase's first event: nothing found yet. */
  start(): void {
    this.#report();
  }

  found(count: number): void {
    this.#found += count;
  }

  /** The listing ended: every later event carries the total. */
  listed(): void {
    this.#complete = true;
    this.#report();
  }

  done(count: number): void {
    this.#done += count;
    this.#report();
  }

  #report(): void {
    this.emit({
      phase: this.phase,
      done: this.#done,
      ...(this.#complete ? { total: this.#found } : {}),
    });
  }
}
