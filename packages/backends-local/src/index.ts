export type { LocalSync } from "./disk.js";
export { toHoldfastError } from "./errors.js";
export { LOCAL_INTERNAL_PREFIX, LOCAL_SELF_NAME } from "./layout.js";
export { LOCAL_UNMAPPABLE_NAME } from "./listing.js";
export {
  createLocalStore,
  LOCAL_BACKEND,
  LocalStore,
  type LocalStoreOptions,
} from "./local.js";
