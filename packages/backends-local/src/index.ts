export {
  LOCAL_BACKEND,
  LOCAL_LOCK_DIR,
  LOCAL_OBJECT_SUFFIX,
  LocalStore,
  type LocalStoreOptions,
  createLocalStore,
  decodeSegment,
  encodeSegment,
  toHoldfastError,
} from "./local.js";
