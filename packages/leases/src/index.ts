// The public API of @holdfast/leases. Every name here is covered by api/leases.api.md:
// add or remove one deliberately (`pnpm api:update`).
export {
  censusLeases,
  DEFAULT_SWEEP_GRACE_MS,
  deleteLeasesOf,
  LEASE_REASON,
  sweepExpiredLeases,
} from "./census.js";
export { describeLease, describeLeases, type LeaseView } from "./describe.js";
export { forceReleaseLease } from "./force.js";
export { INVALID_LEASE_HANDLE, validateLeaseHandle } from "./handle.js";
export {
  checkLeaseHandle,
  type LeaseHandle,
  releaseLeaseHandle,
  renewLeaseHandle,
  toLeaseHandle,
} from "./held.js";
export { type KeepLeaseOptions, keeperTiming, keepLease, type LeaseKeeper } from "./keeper.js";
export { branchFenceKey, branchLeasesPrefix, leaseKey, parseLeaseKey } from "./layout.js";
export {
  type AcquireOptions,
  acquireLease,
  checkLeaseHolder,
  checkLeaseTtl,
  encodeLeaseBody,
  type Lease,
  releaseLease,
  renewLease,
} from "./lease.js";
export { type LeaseEntry, listLeases } from "./list.js";
export {
  type LeaseBody,
  LeaseBodySchema,
  LeaseHolderSchema,
  MAX_HOLDER_LENGTH,
  MAX_TTL_MS,
  MIN_TTL_MS,
  StoredLeaseBodySchema,
} from "./schema.js";
export { LEASE_SECRET_BYTES, leaseProof, leaseTag } from "./secret.js";
export { type LeasedVersion, withLease } from "./with-lease.js";
