export * from "./context.js";
export * from "./dataset.js";
export * from "./format.js";
export * from "./layout.js";
export * from "./manifest.js";
export * from "./names.js";
export * from "./storage-time.js";
export * from "./stored.js";
