export { bareEtag, toHoldfastError } from "./errors.js";
export {
  type OpenS3StoreOptions,
  openS3Store,
  probeS3Store,
  S3_PROBE_FOLDER,
  type S3ProbeReport,
} from "./open.js";
export {
  createS3Store,
  S3_BACKEND,
  S3_MAX_BATCH_DELETE,
  type S3Credentials,
  type S3StoreOptions,
} from "./s3.js";
