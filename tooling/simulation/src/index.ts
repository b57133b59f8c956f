export * from "./gated-store.js";
export * from "./scheduler.js";
export * from "./simulation.js";
