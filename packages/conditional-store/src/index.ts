export * from "./clock.js";
export * from "./errors.js";
export * from "./keys.js";
export * from "./list.js";
export * from "./memory.js";
export * from "./types.js";
