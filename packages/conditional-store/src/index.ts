// The public API of @holdfast/conditional-store. Every name here is covered by
// api/conditional-store.api.md: add or remove one deliberately (`pnpm api:update`).
export {
  type Clock,
  cryptoRandomBytes,
  type IdSource,
  type RandomBytes,
  realSleep,
  type Sleep,
  seededIds,
  seededRandomBytes,
  systemClock,
  ulidIds,
} from "./clock.js";
export { CountingStore, type RequestCounts, type RequestType } from "./counting.js";
export {
  connectFailureCode,
  HOLDFAST_ERROR_KINDS,
  HoldfastError,
  type HoldfastErrorFields,
  type HoldfastErrorKind,
  holdfastError,
  isHoldfastError,
  markNothingSent,
  type StorageErrorContext,
  type StorageOperation,
  UNREACHABLE_HINT,
  wasNothingSent,
} from "./errors.js";
export { type IdempotentReissueOptions, reissueIdempotent } from "./idempotent.js";
export { joinKey, MAX_KEY_BYTES, validateKey, validatePrefix } from "./keys.js";
export { batches, deleteAllUnder, listAll, listPages } from "./list.js";
export { compareKeys, MEMORY_BACKEND, MemoryStore, type MemoryStoreOptions } from "./memory.js";
export {
  decodeJson,
  encodeJson,
  type JsonSchema,
  parseJsonAs,
  readJsonAs,
  writerPayload,
} from "./payload.js";
export {
  type AnswerClass,
  classifyFailure,
  DEFAULT_REISSUE_POLICY,
  type ReissuePolicy,
} from "./policy.js";
export {
  assertStoreSupported,
  PROBE_PREFIX,
  type ProbeOptions,
  type ProbeVerdict,
  probeStore,
  type StoreProbeReport,
} from "./probe.js";
export {
  bytesEqual,
  type ConditionalDeleteOutcome,
  type ConditionalPutOutcome,
  deleteIfMatch,
  isUnresolved,
  putIfAbsent,
  putIfMatch,
  type ResolveOptions,
  resolveConditionalPut,
} from "./resolve.js";
export { StorageScope, type UnsettledPrecondition } from "./scope.js";
export type {
  DeleteManyOptions,
  DeleteManyResult,
  DeleteOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  Precondition,
  PutOptions,
  PutResult,
  RequestMode,
  StoreCapabilities,
} from "./types.js";
