// The public API of @holdfast/dataset. Every name here is covered by api/dataset.api.md:
// add or remove one deliberately (`pnpm api:update`). Names only other holdfast packages
// need are in `./internal.ts` (`@holdfast/dataset/internal`).

export {
  type CommitOptions,
  type CommitResult,
  checkCommit,
  commitVersion,
  UnresolvedCommitError,
} from "./commit.js";
export {
  COMMIT_INTENT_BOUND_MS,
  COMMIT_INTENT_EXPIRED,
  COMMIT_INTENT_PREFIX,
  COMMIT_RETIREMENT_IN_PROGRESS,
  COMMIT_SOURCE_MISSING,
  COMMIT_SOURCES_REQUIRED,
  FRESH_FILE_WINDOW_MS,
  MAX_RETIREMENT_WAIT_MS,
  RetirementInProgressError,
  UNDECLARED_REUSE_MAX_AGE_MS,
} from "./commit-intent.js";
export {
  initDataset,
  listBranchesWithVersions,
  listVersions,
  type ManifestRecord,
  openDataset,
  readManifest,
  tryReadManifest,
  type VersionEntry,
  type WrittenDataFile,
  writeDataFile,
} from "./dataset.js";
export { raiseRetiredFloor } from "./floor.js";
export {
  type DatasetFormat,
  type FormatManifest,
  holdfastLayout,
  OBJECT_KINDS,
  type ObjectKind,
  type VersionBounds,
} from "./format.js";
export { latestVersion } from "./latest.js";
export {
  DATASET_KEY,
  dataKey,
  formatVersion,
  isDataKey,
  manifestKey,
  parseManifestKey,
  VERSIONS_PREFIX,
  validateVersion,
  versionsPrefix,
} from "./layout.js";
export {
  type DataFile,
  DataFileSchema,
  type DatasetInfo,
  DatasetInfoSchema,
  type Manifest,
  ManifestSchema,
} from "./manifest.js";
export {
  FORMAT_REQUIRED,
  type FoundLayout,
  NOT_A_HOLDFAST_DATASET,
  NotAHoldfastDatasetError,
  requireHoldfastDataset,
} from "./marker.js";
