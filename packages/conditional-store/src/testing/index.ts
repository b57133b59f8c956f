/**
 * Test support for holdfast stores: a scripted fault store and deterministic time.
 * Import from `@holdfast/conditional-store/testing`; not for production paths.
 */
export * from "./fault-store.js";
export * from "./time.js";
