// The public API of @holdfast/retirement. Every name here is covered by
// api/retirement.api.md: add or remove one deliberately (`pnpm api:update`).
export {
  type Admission,
  type AdmissionState,
  type ReadAdmissionOptions,
  readAdmission,
} from "./admission.js";
export {
  type AcquireCleanupLockOptions,
  acquireCleanupLock,
  CLEANUP_LOCK_KEY,
  CLEANUP_LOCK_LOST,
  CLEANUP_RUNNING,
  type CleanupLock,
  CleanupLockBody,
  DEFAULT_CLEANUP_LOCK_BOUND_MS,
  isCleanupLockLost,
  readCleanupLock,
  releaseCleanupLock,
  renewCleanupLock,
  stampCleanupLock,
} from "./cleanup-lock.js";
export type { RetirementContext } from "./context.js";
export {
  type DeleteLeases,
  type FinalizeOptions,
  type FinalizeResult,
  finalize,
  type PresentManifests,
} from "./finalize.js";
export { type Heartbeat, type HeartbeatOptions, HeldRecord, startHeartbeat } from "./heartbeat.js";
export {
  type CleanupLockHolder,
  describeLockHolder,
  inspectCleanupLock,
  lockHeldError,
} from "./lock-holder.js";
export {
  abandon,
  activeVersions,
  COMMIT_UNRESOLVED,
  cancelReplaced,
  cancelVersions,
  commit,
  confirmCommit,
  type DrainCandidate,
  type DrainOptions,
  drain,
  FENCED_CODE,
  fence,
  isFenced,
  isRetiredManifestRewritten,
  REPLACED_REASON,
  RETIRED_MANIFEST_REWRITTEN,
  type RetentionReasons,
  RetiredManifestRewrittenError,
  type RetirementHandle,
  readRecord,
  renewRetirement,
  seal,
  startDeletion,
  type TransitionOptions,
  UnresolvedTransitionError,
} from "./machine.js";
export { type AbandonResult, abandonRetirement, RETIREMENT_COMMITTED } from "./operator.js";
export {
  DEFAULT_OWNERSHIP_BOUND_MS,
  decodeRetirementRecord,
  parseRetirementKey,
  parseRetirementRecord,
  type RetirementKeyParts,
  RetirementRecord,
  RetiringVersion,
  retirementKey,
  retirementPrefix,
} from "./record.js";
export {
  type LeaseCensus,
  type RecoverOptions,
  type RecoveryReport,
  type ReferenceCensus,
  recoverRetirements,
} from "./recovery.js";
