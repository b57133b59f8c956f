export { type BranchView, describeBranches, resolveForkPoint } from "./branch-list.js";
export { FORMAT_READ_ONLY, lanceFormatEntry, requireWritableFormat } from "./dataset-format.js";
export {
  autoCleanupOf,
  describeLanceDataset,
  LANCE_AUTO_CLEANUP_GUARANTEE,
  type LanceAutoCleanup,
  type LanceDatasetReport,
  type LanceDoctorCheck,
  lanceAutoCleanupWarning,
  lanceDoctorCheck,
} from "./describe.js";
export {
  type DoctorCheck,
  diagnoseStore,
  type RefusedStoreDiagnosis,
  refusedStoreDiagnosis,
  type StoreDiagnosis,
} from "./doctor.js";
export {
  isUnsupportedLance,
  LANCE_MALFORMED_MANIFEST,
  LANCE_MALFORMED_REFERENCE,
  LANCE_UNSUPPORTED,
  type LanceFeature,
  UnsupportedLanceDatasetError,
} from "./errors.js";
export {
  checkFeatureFlags,
  featureFlagName,
  IMPLEMENTED_FEATURE_FLAGS,
  LANCE_FEATURE_FLAGS,
  type LanceFeatureFlagName,
} from "./flags.js";
export {
  LANCE_FORMAT,
  LANCE_NAMING_MISMATCH,
  type LanceFormat,
  lanceFormat,
  latestLanceBranchVersion,
  openLanceFormat,
} from "./format.js";
export {
  LANCE_MALFORMED_HINT,
  LANCE_VERSION_HINT,
  lanceVersionHintKey,
  readLanceVersionHint,
} from "./hint.js";
export { LANCE_MAGIC, type ManifestFile, readManifestFile } from "./manifest-file.js";
export {
  classifyVersionsKey,
  LANCE_VERSIONS_PREFIX,
  type LanceNaming,
  lanceManifestKey,
  type VersionsEntryKind,
} from "./naming.js";
export {
  formatUuid,
  isLanceFileKey,
  LANCE_DATA_PREFIX,
  LANCE_DELETIONS_PREFIX,
  LANCE_INDICES_PREFIX,
  LANCE_SWEPT_PREFIXES,
  LANCE_TRANSACTIONS_PREFIX,
  type NeededObject,
  type VersionNeeds,
  versionNeeds,
} from "./needs.js";
export type { LanceIndexSection, LanceManifest } from "./proto.js";
export {
  censusLanceReferences,
  LANCE_BRANCHES_PREFIX,
  LANCE_MAIN_BRANCH,
  LANCE_TAGS_PREFIX,
  LANCE_TREE_PREFIX,
  type LanceBranch,
  LanceBranchSchema,
  type LanceReference,
  type LanceTag,
  LanceTagSchema,
  listLanceReferences,
  parseLanceReference,
} from "./refs.js";
export { lanceReferenceCodec } from "./tags.js";
