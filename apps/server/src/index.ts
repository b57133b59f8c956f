export type { ZodApp } from "./app.js";
export {
  createToken,
  hashToken,
  loadTokens,
  matchToken,
  parseTokens,
  ROLES,
  type Role,
  roleAllows,
  type TokenEntry,
  TokenEntrySchema,
  TokensFileSchema,
} from "./auth.js";
export type { DatasetSource } from "./datasets.js";
export { MeteredStore, ServerMetrics } from "./metrics.js";
export { problemFor, statusForKind } from "./problem.js";
export {
  type ScheduleEntry,
  ScheduleEntrySchema,
  ServerConfigFileSchema,
} from "./schedule.js";
export { buildServer, type ServerConfig } from "./server.js";
