export { toHoldfastError } from "./errors.js";
export {
  createGcsStore,
  GCS_BACKEND,
  GCS_MAX_BATCH_DELETE,
  type GcsAuthClient,
  type GcsRetryOptions,
  type GcsStoreOptions,
} from "./gcs.js";
export { type OpenGcsStoreOptions, openGcsStore } from "./open.js";
