export {
  createLocalStore,
  decodeSegment,
  encodeSegment,
  LOCAL_BACKEND,
  LOCAL_LOCK_DIR,
  LOCAL_OBJECT_SUFFIX,
  LocalStore,
  type LocalStoreOptions,
  toHoldfastError,
} from "./local.js";
