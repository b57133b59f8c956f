export * from "./admission.js";
export type { RetirementContext } from "./context.js";
export * from "./finalize.js";
export * from "./machine.js";
export * from "./record.js";
export * from "./recovery.js";
