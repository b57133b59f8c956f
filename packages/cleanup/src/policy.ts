import { holdfastError } from "@holdfast/conditional-store";
import { validateVersion } from "@holdfast/dataset";
import { validateName } from "@holdfast/protocol";

/** Seven days: data files no manifest names are kept this long (storage time). */
export const DEFAULT_ORPHAN_GRACE_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * One hour: the smallest orphan grace accepted while a writer may be active. A commit
 * sends its manifest less than `FRESH_FILE_WINDOW_MS` (15 min, `@holdfast/dataset`, local
 * timer) after writing the fresh files it names (older files are covered by a commit
 * intent instead), and the manifest lands within the re-issue window (seconds). A file is
 * swept only when older than the grace at the run's start, by which time its manifest has
 * landed and the plan lists it. The margin (45 min) absorbs clock-rate error and slow
 * requests. Below it, `noWriterActive: true` must state that no commit can be in flight.
 */
export const MIN_ORPHAN_GRACE_MS = 60 * 60 * 1000;

/** Error code of an orphan grace below {@link MIN_ORPHAN_GRACE_MS} without `noWriterActive`. */
export const ORPHAN_GRACE_BELOW_FLOOR = "ORPHAN_GRACE_BELOW_FLOOR";

/**
 * Five minutes: a version younger than this (storage time) is never retired, whatever the
 * policy. A writer whose commit answer was lost re-issues the same create-only put for a
 * few seconds (resolver pauses 0.2–1.6 s plus request timeouts); if the version were
 * retired in that window, the late re-issue would land again on the now-absent key and
 * resurrect a manifest whose data files are gone. The age must exceed that window.
 */
export const DEFAULT_MIN_VERSION_AGE_MS = 5 * 60 * 1000;

/**
 * Which versions cleanup retires. Given criteria combine (a version must meet all of
 * them); the latest version of every branch is always kept.
 */
export interface CleanupPolicy {
  /** Retire versions whose manifest is older than this, in storage time (manifest Last-Modified vs the store's now). */
  readonly olderThanMs?: number | undefined;
  /** Retire versions numbered below this. */
  readonly beforeVersion?: number | undefined;
  /** Keep the newest N versions of every branch (N >= 1). */
  readonly retainVersions?: number | undefined;
  /** Fail with `refused` (code TaggedOldVersions) before writing anything if a tag names a version the policy would retire. */
  readonly errorIfTaggedOldVersions?: boolean | undefined;
  /**
   * Versions younger than this (storage time) are kept (reason `recent`): it must exceed
   * the longest time a writer may still re-issue a commit. Set 0 only when no writer can be
   * in flight. @default DEFAULT_MIN_VERSION_AGE_MS (5 min)
   */
  readonly minVersionAgeMs?: number | undefined;
  /**
   * Data files no manifest names are deleted only once older than this (storage time).
   * Below {@link MIN_ORPHAN_GRACE_MS} (1 h) only with `noWriterActive`. @default 7 days
   */
  readonly orphanGraceMs?: number | undefined;
  /**
   * The caller states that no writer can have a commit in flight on this dataset for the
   * whole run: allows an `orphanGraceMs` below {@link MIN_ORPHAN_GRACE_MS}.
   */
  readonly noWriterActive?: boolean | undefined;
  /** Plan only: the same decisions, no writes. */
  readonly dryRun?: boolean | undefined;
  /** Retire versions of these branches only (the others are still read: their files stay protected). @default every branch */
  readonly branches?: readonly string[] | undefined;
}

/** Checks a policy; throws `invalid-input` before anything is written (invariant 6). */
export function validatePolicy(
  policy: CleanupPolicy,
): CleanupPolicy & { orphanGraceMs: number; minVersionAgeMs: number } {
  const bad = (why: string) =>
    holdfastError("invalid-input", "cleanup", `invalid cleanup policy: ${why}`);
  if (policy === null || typeof policy !== "object") throw bad("not an object");
  const { olderThanMs, beforeVersion, retainVersions, orphanGraceMs } = policy;
  if (olderThanMs !== undefined && !(Number.isSafeInteger(olderThanMs) && olderThanMs >= 0)) {
    throw bad(`olderThanMs ${olderThanMs} is not a non-negative integer`);
  }
  if (beforeVersion !== undefined) validateVersion(beforeVersion);
  if (
    retainVersions !== undefined &&
    !(Number.isSafeInteger(retainVersions) && retainVersions >= 1)
  ) {
    throw bad(`retainVersions ${retainVersions} is not an integer >= 1`);
  }
  if (orphanGraceMs !== undefined && !(Number.isSafeInteger(orphanGraceMs) && orphanGraceMs >= 0)) {
    throw bad(`orphanGraceMs ${orphanGraceMs} is not a non-negative integer`);
  }
  for (const flag of ["noWriterActive", "errorIfTaggedOldVersions", "dryRun"] as const) {
    if (policy[flag] !== undefined && typeof policy[flag] !== "boolean") {
      throw bad(`${flag} is not a boolean`);
    }
  }
  if (
    orphanGraceMs !== undefined &&
    orphanGraceMs < MIN_ORPHAN_GRACE_MS &&
    policy.noWriterActive !== true
  ) {
    throw holdfastError(
      "invalid-input",
      "cleanup",
      `orphanGraceMs ${orphanGraceMs} is below the ${MIN_ORPHAN_GRACE_MS} ms floor: with a writer running, the sweep could delete data files of a commit in flight whose manifest has not landed yet`,
      {
        code: ORPHAN_GRACE_BELOW_FLOOR,
        hint: "use a grace of at least 1 hour, or state noWriterActive (CLI: --no-writer-active) when no commit can be in flight",
      },
    );
  }
  const { minVersionAgeMs } = policy;
  if (
    minVersionAgeMs !== undefined &&
    !(Number.isSafeInteger(minVersionAgeMs) && minVersionAgeMs >= 0)
  ) {
    throw bad(`minVersionAgeMs ${minVersionAgeMs} is not a non-negative integer`);
  }
  if (olderThanMs === undefined && beforeVersion === undefined && retainVersions === undefined) {
    throw bad("name at least one of olderThanMs, beforeVersion, retainVersions");
  }
  if (policy.branches !== undefined && !Array.isArray(policy.branches)) {
    throw bad("branches is not an array of branch names");
  }
  for (const branch of policy.branches ?? []) validateName(branch, "branch");
  return {
    ...policy,
    orphanGraceMs: orphanGraceMs ?? DEFAULT_ORPHAN_GRACE_MS,
    minVersionAgeMs: minVersionAgeMs ?? DEFAULT_MIN_VERSION_AGE_MS,
  };
}

/** Why a version is kept. */
export type RetainReason =
  | "lease"
  | "tag"
  | "branch-lineage"
  | "intent"
  | "policy"
  | "latest"
  | "recent"
  | "changed"
  | (string & {});

/** True when a version is too young to retire (see {@link DEFAULT_MIN_VERSION_AGE_MS}). Storage time only. */
export function tooRecent(
  minVersionAgeMs: number,
  entry: { lastModified: Date },
  storageNow: Date,
): boolean {
  if (minVersionAgeMs === 0) return false;
  // Both are store stamps at whole-second precision: one extra second covers truncation.
  return truncSec(storageNow) - truncSec(entry.lastModified) <= minVersionAgeMs + 1000;
}

/**
 * Whether the policy (alone) retires a version that has at least `retainVersions` newer
 * versions after it on its branch and is not the latest. Storage time only.
 */
export function policyRetires(
  policy: CleanupPolicy,
  entry: { version: number; lastModified: Date },
  storageNow: Date,
): boolean {
  if (policy.beforeVersion !== undefined && entry.version >= policy.beforeVersion) return false;
  if (policy.olderThanMs !== undefined) {
    // Both sides are store stamps; a manifest stamped in the same second is never "older".
    const age = truncSec(storageNow) - truncSec(entry.lastModified);
    if (age <= policy.olderThanMs) return false;
  }
  return true;
}

function truncSec(d: Date): number {
  return Math.floor(d.getTime() / 1000) * 1000;
}
