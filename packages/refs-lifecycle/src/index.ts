export {
  type BranchInfo,
  createBranch,
  getBranch,
  listBranches,
  replaceBranchMetadata,
} from "./branches.js";
export {
  censusReferences,
  FOREIGN_REFERENCE_OBJECT,
  listReferencedVersions,
  REFS_ROOT,
  type ReferencedVersion,
  type ReferenceReason,
  referenceKindOf,
  referenceReasons,
  scanIntentTargets,
} from "./census.js";
export {
  type CanonicalDocument,
  type Carried,
  carriedOf,
  holdfastReferenceCodec,
  type ReferenceCodec,
  type ReferenceFormat,
  referenceCodecOf,
  type WrittenTarget,
} from "./codec.js";
export { type DeleteBranchOptions, type DeleteResult, deleteBranch, deleteTag } from "./delete.js";
export {
  type FormatEntry,
  FormatRegistry,
  holdfastFormat,
  holdfastFormatEntry,
  type OpenedDataset,
  type ResolvedFormat,
  UNKNOWN_FORMAT,
} from "./formats.js";
export {
  BRANCHES_PREFIX,
  canonicalKey,
  FENCES_PREFIX,
  fenceKey,
  INTENTS_PREFIX,
  intentKey,
  intentsOfPrefix,
  REFS_SIDECAR_PREFIX,
  TAGS_PREFIX,
} from "./layout.js";
export { DEFAULT_INTENT_BOUND_MS, type MutationOptions } from "./publish.js";
export { type ReferenceRecoveryReport, recoverReferences } from "./recovery.js";
export { type ReferenceRecoveryKeys, summarizeReferenceRecovery } from "./recovery-summary.js";
export type { ReadReferenceOptions } from "./references.js";
export {
  type BranchDocument,
  branchDocumentSchema,
  type Fence,
  FenceSchema,
  type Intent,
  IntentSchema,
  ReferenceKind,
  type ReleasedBranch,
  type ReleasedTag,
  releasedBranchSchema,
  releasedTagSchema,
  type TagDocument,
  tagDocumentSchema,
} from "./schema.js";
export {
  HELD_TABLE_PROBES,
  HOLDS_TABLE,
  INSIDE_TABLE,
  locateTable,
  refuseTableLocation,
  type StoreAt,
  TABLE_LAYOUT_FOLDERS,
  type TableLocation,
  tableFormatAt,
} from "./table-root.js";
export { createTag, getTag, listTags, type TagInfo, updateTag } from "./tags.js";
export { firstCommitParent, listVersionsWithTags, type TaggedVersion } from "./versions.js";
