export type { ZodApp } from "./app.js";
export {
  createToken,
  hashToken,
  loadTokens,
  matchToken,
  parseTokens,
  ROLES,
  type Role,
  removeToken,
  roleAllows,
  TOKENS_FILE_WRITABLE,
  type TokenEntry,
  TokenEntrySchema,
  TokensFileSchema,
} from "./auth.js";
export { DEFAULT_FAILED_AUTH_LIMIT, type FailedAuthLimit } from "./auth-limit.js";
export type { DatasetSource } from "./datasets.js";
export { MeteredStore, ServerMetrics } from "./metrics.js";
export { problemFor, statusForKind } from "./problem.js";
export { REVOKED_TOKENS_PREFIX, RevokedTokenRecord, revokeToken } from "./revocations.js";
export {
  type ScheduleEntry,
  ScheduleEntrySchema,
  ServerConfigFileSchema,
} from "./schedule.js";
export { buildServer, type ServerConfig } from "./server.js";
