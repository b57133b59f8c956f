import type { RequestCounts } from "@holdfast/conditional-store";
import type { DatasetFormat } from "@holdfast/dataset";
import type { DeleteLeases, LeaseCensus, ReferenceCensus } from "@holdfast/retirement";
import type { RetainReason } from "./policy.js";

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
