// @holdfast/dataset/internal: names other holdfast packages share and users never call.
// Not a stable API: it changes with the packages that use it. Covered by
// api/dataset-internal.api.md (`pnpm api:update`).

export { type CommitIntent, CommitIntentSchema, commitIntentKey } from "./commit-intent.js";
export { HEADS_PREFIX, headHintKey } from "./heads.js";
export {
  holdfastDatasetKnown,
  holdfastMarkerUnchecked,
  markHoldfastDataset,
  requireFormat,
} from "./marker.js";
