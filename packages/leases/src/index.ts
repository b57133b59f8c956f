export * from "./census.js";
export * from "./keeper.js";
export {
  type AcquireOptions,
  type Lease,
  type LeaseEntry,
  acquireLease,
  listLeases,
  releaseLease,
  renewLease,
} from "./lease.js";
export * from "./layout.js";
export * from "./schema.js";
export * from "./with-lease.js";
