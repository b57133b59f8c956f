export * from "./cleanup.js";
export * from "./policy.js";
