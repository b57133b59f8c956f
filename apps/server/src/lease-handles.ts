import type { LeaseHandle } from "@holdfast/api-shapes";
import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import {
  type DatasetFormat,
  isActiveAt,
  leaseExpiresAt,
  type ProtocolContext,
  storePrecisionMs,
} from "@holdfast/dataset";
import {
  acquireLease,
  describeLease,
  type Lease,
  type LeaseView,
  releaseLease,
  renewLease,
  validateLeaseHandle,
} from "@holdfast/leases";

/**
 * Leases over HTTP. The server keeps nothing: the client holds a handle (the library's
 * `Lease` without its local timestamp, its secret included) and any replica can renew or
 * release it. A lease is not bound to the token that took it: the secret is the
 * capability, so whoever holds the handle may renew or release it, and nobody else can. Expiry is
 * judged only by the store's clock (the Last-Modified stamps of the lease object), never
 * by a replica's, so a lease taken through one host and renewed through another with a
 * different clock keeps exactly the term the store gave it (docs/protocol.md, leases).
 */

/** Acquires a lease and returns the handle plus the lease as the CLI shows it. */
export async function acquireHandle(
  ctx: ProtocolContext,
  request: { branch: string; version: number; ttlMs: number; format: DatasetFormat },
): Promise<{ handle: LeaseHandle; lease: LeaseView }> {
  const lease = await acquireLease(ctx, request);
  return { handle: toHandle(lease), lease: await describeLease(ctx, lease) };
}

/**
 * Renews a lease from its handle (its version's manifest named by `format`). Reads the lease object's stamp first: if the store's
 * clock says its term ran out before the renewal landed, protection has already lapsed
 * (a cleaner may have counted it expired), so the lease is removed and the call is
 * refused with LEASE_EXPIRED, as the library refuses a late renewal. Otherwise the
 * library's renewal runs (if-match rewrite, then retirement admission).
 */
export async function renewHandle(
  ctx: ProtocolContext,
  handle: LeaseHandle,
  format: DatasetFormat,
): Promise<{ handle: LeaseHandle; lease: LeaseView }> {
  checkHandle(handle);
  // The renewal checks the version's manifest at the key the dataset's format names.
  const manifestKey = format.manifestKey(handle.branch, handle.version);
  const before = await ctx.store.head(handle.key);
  if (!before) {
    throw holdfastError("not-found", "renewLease", `lease ${handle.leaseId} is gone`, {
      key: handle.key,
      code: "LEASE_LOST",
      hint: "it expired and was swept, was released, or its version was retired; acquire a new lease",
    });
  }
  // The replica's clock never saw the last write: hand the library "now" so its local
  // check passes, and judge the term below by the store's stamps instead.
  const renewed = await renewLease(ctx, {
    ...handle,
    manifestKey,
    writtenAtLocalMs: ctx.clock.now(),
  });
  const after = await ctx.store.head(handle.key);
  const precision = storePrecisionMs(ctx);
  if (!after || !isActiveAt(before.lastModified, handle.ttlMs, precision, after.lastModified)) {
    await releaseLease(ctx, renewed).catch(() => undefined);
    throw holdfastError(
      "refused",
      "renewLease",
      `lease ${handle.leaseId} expired (storage time) before it was renewed`,
      {
        key: handle.key,
        code: "LEASE_EXPIRED",
        hint: "renew well within the TTL; acquire a new lease, then re-read the manifest",
      },
    );
  }
  return {
    handle: toHandle(renewed),
    lease: {
      leaseId: renewed.leaseId,
      branch: renewed.branch,
      version: renewed.version,
      key: renewed.key,
      ttlMs: renewed.ttlMs,
      lastModified: after.lastModified.toISOString(),
      expiresAt: leaseExpiresAt(after.lastModified, renewed.ttlMs, precision).toISOString(),
      active: true,
    },
  };
}

/** Releases a lease by its handle: deletes its object (idempotent). */
export async function releaseHandle(ctx: ProtocolContext, handle: LeaseHandle): Promise<void> {
  checkHandle(handle);
  await releaseLease(ctx, { ...handle, writtenAtLocalMs: 0 });
}

/**
 * A handle's key must be the key its fields and secret name (the library's
 * `validateLeaseHandle`): a forged handle, one built from the lease listing with a made-up
 * secret included, must not let a client rewrite or delete any object of the dataset.
 */
export function checkHandle(handle: LeaseHandle): void {
  try {
    validateLeaseHandle({ ...handle, writtenAtLocalMs: 0 }, "validate");
  } catch (error) {
    if (!isHoldfastError(error, "invalid-input")) throw error;
    throw holdfastError("invalid-input", "validate", error.message, {
      code: "BAD_HANDLE",
      key: handle.key,
      hint: "send back the handle exactly as acquire or renew returned it",
      cause: error,
    });
  }
}

// --- utils ---

function toHandle(lease: Lease): LeaseHandle {
  return {
    leaseId: lease.leaseId,
    branch: lease.branch,
    version: lease.version,
    ttlMs: lease.ttlMs,
    secret: lease.secret,
    key: lease.key,
    etag: lease.etag,
    renewal: lease.renewal,
    writerId: lease.writerId,
  };
}
