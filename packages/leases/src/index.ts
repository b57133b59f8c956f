export * from "./census.js";
export * from "./keeper.js";
export * from "./layout.js";
export {
  type AcquireOptions,
  acquireLease,
  type Lease,
  type LeaseEntry,
  listLeases,
  releaseLease,
  renewLease,
} from "./lease.js";
export * from "./schema.js";
export * from "./with-lease.js";
