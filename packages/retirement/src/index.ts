export * from "./admission.js";
export type { RetirementContext } from "./context.js";
export * from "./record.js";
export { PRECISION_FLOOR_MS, boundHolds, probeStorageNow } from "./storage-time.js";
