import { HoldfastError, type RequestCounts, type Sleep } from "@holdfast/conditional-store";
import type { DatasetFormat, ObjectKind } from "@holdfast/dataset";
import type { DeleteLeases, LeaseCensus } from "@holdfast/retirement";
import type { RunHistoryOptions } from "./history.js";
import type { RetainReason } from "./policy.js";
import type { VersionRange } from "./ranges.js";

/** Phases cleanup reports progress for, in order. */
export type CleanupPhase = "recover" | "plan" | "retire" | "delete" | "orphans";

/**
 * A progress event: `done` of `total` (when known) items of a phase. Items are records
 * (`recover`), versions (`plan`: decided, its manifest read; `retire`: candidates retired or
 * kept by a census) and objects deleted (`delete`: manifests and data files; `orphans`:
 * orphan data files, clock probes, expired intents and leases). `plan` has a `total` once
 * the listing ended; `retire` from its first event (the plan's candidates). The `delete`
 * phase has a `total` from its first event on: the retired manifests of every committed
 * record and the distinct files, none retained, of the manifests this run read before its
 * drain; once a record's manifests are read (before any of its deletes) the total gains an
 * earlier run's data files and loses its manifests already gone, so it is exact when the
 * last record is read. The `orphans` phase has a `total` only in its last event (the sweep
 * streams a listing). Observation only: a run sends the same requests with or without `onProgress`.
 */
export interface CleanupProgress {
  readonly phase: CleanupPhase;
  readonly done: number;
  readonly total?: number | undefined;
}

export interface CleanupOptions {
  /**
   * The dataset's format, as opening it bound it (`OpenedDataset.resolved.format`, or
   * `holdfastFormat` of `@holdfast/refs-lifecycle`): its layout and, through its reference
   * codec, its reference census. Required; a call without one is refused before any request
   * (`invalid-input`, FORMAT_REQUIRED, docs/protocol.md §1.1).
   */
  readonly format: DatasetFormat;
  readonly onProgress?: ((progress: CleanupProgress) => void) | undefined;
  /** @default censusLeases(ctx) from `@holdfast/leases` */
  readonly leaseCensus?: LeaseCensus | undefined;
  /** @default deleteLeasesOf(ctx, ...) from `@holdfast/leases` */
  readonly deleteLeases?: DeleteLeases | undefined;
  /** Requests in flight at once (manifest reads, batch deletes). @default 8 */
  readonly concurrency?: number | undefined;
  /**
   * Storage "now" to use instead of a probe (tests). A dry run probes too (PUT, HEAD,
   * DELETE of one `_holdfast/clock/` object), so the plan judges leases and ages exactly as
   * the run will; on a store that refuses the probe it falls back to the host clock and
   * says so in `warnings`.
   */
  readonly storageNow?: Date | undefined;
  /** Ownership bound of this run's retirement records and of the cleanup lock; renewed every third of it. @default 60 s */
  readonly ownershipBoundMs?: number | undefined;
  /**
   * Stops the run at the next safe point: a pre-commit retirement in flight is given up
   * in-process (so nothing blocks leases afterwards), a committed one is left for the next
   * run or `recover`. The run then throws `aborted` (code CLEANUP_INTERRUPTED) whose
   * `stats` say what was done.
   */
  readonly signal?: AbortSignal | undefined;
  /** Skip the dataset's cleanup lock (concurrent cleanups stay safe, but each does its own work). @default false */
  readonly concurrent?: boolean | undefined;
  /** Wait for another cleanup holding the lock instead of failing with CLEANUP_RUNNING. @default false */
  readonly waitForLock?: boolean | undefined;
  /** Timer of the heartbeat that renews the lock and this run's pre-commit record. @default realSleep */
  readonly heartbeatSleep?: Sleep | undefined;
  /**
   * Most versions one retirement record names; a branch with more candidates is retired
   * as several operations, so a record stays small (about 70 bytes per version).
   * @default 10000
   */
  readonly maxVersionsPerRecord?: number | undefined;
  /** Batch deletes in flight at once. @default `concurrency` */
  readonly deleteConcurrency?: number | undefined;
  /**
   * Most objects deleted per second by the run's batch deletes, whatever their concurrency
   * (Amazon S3 answers 503 SlowDown past about 3,500 deletes per second per prefix). Paced
   * by the context's clock and sleep. @default no limit
   */
  readonly maxDeletesPerSecond?: number | undefined;
  /**
   * Local folder under which a large run keeps, in a temp folder of its own (unique name,
   * mode 0700) removed when the run ends (also on failure or abort), the file lists of the
   * manifests it read before its first drain beyond the first `spillAboveVersions`
   * versions, until it deletes them, so memory stays flat in the versions retired (about
   * 150 bytes of disk per version while the run lasts; nothing a later run needs).
   * @default `os.tmpdir()`
   */
  readonly spillDir?: string | undefined;
  /**
   * Most retired versions whose manifests (as read before the first drain) the run holds
   * in memory; a record that would pass it is kept in `spillDir` instead. A run retiring
   * fewer touches no disk; 0 spills every record.
   * @default 20000
   */
  readonly spillAboveVersions?: number | undefined;
  /**
   * Leave a summary of the run on the store when it ends (`_holdfast/history/`, history.ts):
   * what it retired and deleted, its outcome. A plan never writes one. @default none
   */
  readonly history?: RunHistoryOptions | false | undefined;
}

/** A version cleanup kept, and why. */
export interface RetainedVersion {
  readonly branch: string;
  readonly version: number;
  /** The reason that decided it. */
  readonly reason: RetainReason;
  /**
   * Every reason it is kept, `reason` first: a version the policy keeps may also be leased,
   * tagged or forked from (a lease census and a reference census of the kept versions).
   */
  readonly reasons: readonly RetainReason[];
}

/** A kept version as a run records it; its other reasons are gathered after the plan. */
export interface KeptVersion {
  readonly branch: string;
  readonly version: number;
  readonly reason: RetainReason;
  reasons?: RetainReason[];
}

/** What a cleanup did (or, for a plan, would do). */
export interface CleanupStats {
  readonly dryRun: boolean;
  /** Versions this run drained, committed and deleted itself (concurrent cleaners never count one twice). */
  readonly retired: { branch: string; version: number }[];
  /** Versions of earlier (crashed or interrupted) runs' committed retirements this run deleted. */
  readonly finished: { branch: string; version: number }[];
  /**
   * `retired` and `finished` as runs of consecutive versions: what a run holds while it
   * works (memory flat in the number of versions). The two lists above are built from
   * them only when read.
   */
  readonly retiredRanges: VersionRange[];
  readonly finishedRanges: VersionRange[];
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
    /** Commit intents of crashed writers, removed once past their bound. */
    expiredCommitIntents: number;
    total: number;
  };
  /** Bytes of the dataset's files deleted (or, in a plan, to be): the sum of `deletedByKind`. */
  readonly bytesDeleted: number;
  /**
   * The dataset's files deleted (or, in a plan, to be) per kind: manifests, data, deletion,
   * index, transaction files, other (as the format names a key; a format that does not
   * says manifests and data), objects and bytes. Sizes are the manifests' where they record
   * one, else the listing's. holdfast's own objects (clock probes, expired intents and
   * leases) are counted in `objectsDeleted` only.
   */
  readonly deletedByKind: Readonly<Record<ObjectKind, { objects: number; bytes: number }>>;
  /**
   * Cleanup's last look before deleting (docs/protocol.md §2.5):
   * live commit intents and manifests added since the plan that it read, and the data files
   * they name that it kept although the plan would have deleted them. A dry run looks too,
   * so its plan never lists a file a commit in flight names.
   */
  readonly lastLook: { intents: number; lateManifests: number; filesKept: number };
  /** Requests this run sent, by type (a plan's are all reads). */
  readonly requests: RequestCounts & { total: number };
  /** Local-clock duration of the run. */
  readonly elapsedMs: number;
  /** Things left for a later run (e.g. a retirement whose deletion is incomplete). */
  readonly warnings: string[];
}

/** Error code of an interrupted run (kind `aborted`). */
export const CLEANUP_INTERRUPTED = "CLEANUP_INTERRUPTED";

/** A run stopped by its `signal` at a safe point; `stats` say what it did before. */
export class CleanupInterruptedError extends HoldfastError {
  readonly stats: CleanupStats;

  constructor(stats: CleanupStats, cause: unknown) {
    super("cleanup interrupted at a safe point", {
      kind: "aborted",
      operation: "cleanup",
      code: CLEANUP_INTERRUPTED,
      hint: "nothing blocks leases; committed retirements left behind finish on the next cleanup or recover",
      cause,
    });
    this.stats = stats;
  }
}

/** Error code of the typed error for `errorIfTaggedOldVersions`. */
export const TAGGED_OLD_VERSIONS = "TaggedOldVersions";
