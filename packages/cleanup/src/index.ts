// The public API of @holdfast/cleanup. Every name here is covered by api/cleanup.api.md:
// add or remove one deliberately (`pnpm api:update`).
export {
  CLEANUP_INTERRUPTED,
  CleanupInterruptedError,
  type CleanupOptions,
  type CleanupPhase,
  type CleanupProgress,
  type CleanupStats,
  cleanup,
  planCleanup,
  type RetainedVersion,
  recover,
  TAGGED_OLD_VERSIONS,
} from "./cleanup.js";
export {
  type ProgressEstimate,
  ProgressTracker,
  progressEstimate,
  type TimedProgress,
} from "./estimate.js";
export {
  DEFAULT_HISTORY_KEEP,
  HISTORY_PREFIX,
  historyKey,
  listRunHistory,
  MAX_HISTORY_RANGES,
  type RunHistoryEntry,
  type RunHistoryOptions,
  type RunSummary,
  RunSummaryShape,
  runSummary,
  writeRunSummary,
} from "./history.js";
export {
  type CleanupPolicy,
  DEFAULT_MIN_VERSION_AGE_MS,
  DEFAULT_ORPHAN_GRACE_MS,
  MIN_ORPHAN_GRACE_MS,
  ORPHAN_GRACE_BELOW_FLOOR,
  type RetainReason,
  validatePolicy,
} from "./policy.js";
export type { VersionRange } from "./ranges.js";
export { type RecoveredRun, recoverAll, recoverAndCleanup } from "./recover-all.js";
export { collectStatus, type DatasetStatus } from "./status.js";
