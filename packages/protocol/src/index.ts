// The public API of @holdfast/protocol: what users call. Every name here is covered by
// api/protocol.api.md: add or remove one deliberately (`pnpm api:update`). Names only other
// holdfast packages need are in `./internal.ts` (`@holdfast/protocol/internal`).

export { createContext, type ProtocolContext } from "./context.js";
export { DEFAULT_BRANCH, validateName } from "./names.js";
export { RETIREMENT_ROOT, RetirementState } from "./retirement-record.js";
export { type VersionRef, VersionRefSchema } from "./schemas.js";
export {
  isActiveAt,
  leaseExpiresAt,
  PRECISION_FLOOR_MS,
  precisionIntervalMs,
  storageNow,
  truncSec,
} from "./storage-time.js";
