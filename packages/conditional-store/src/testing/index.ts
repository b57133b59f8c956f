/**
 * Test support for holdfast stores: a scripted fault store and deterministic time.
 * Import from `@holdfast/conditional-store/testing`; not for production paths.
 */
export {
  type Fault,
  type FaultMatch,
  type FaultRequestRecord,
  type FaultRule,
  FaultStore,
  type FaultStoreOptions,
} from "./fault-store.js";
export { FakeTime, type RecordingSleep, recordingSleep } from "./time.js";
