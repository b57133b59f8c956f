import { holdfastError } from "@holdfast/conditional-store";
import { isActiveAt, leaseExpiresAt, type ProtocolContext } from "@holdfast/protocol";
import { storePrecisionMs } from "@holdfast/protocol/internal";
import type { LeaseView } from "./describe.js";
import { INVALID_LEASE_HANDLE, validateLeaseHandle } from "./handle.js";
import { type Lease, releaseLease, rewriteLease } from "./lease.js";

/**
 * A lease as its holder carries it between processes (the CLI's `--handle`, the HTTP API's
 * `handle`): the `Lease` without its local timestamp, so any host can renew or release it.
 * Its `secret` is the capability (docs/protocol.md §4.2): keep it private. `holder`, when
 * the lease has one, is written again by every renewal.
 */
export type LeaseHandle = Pick<
  Lease,
  | "leaseId"
  | "branch"
  | "version"
  | "ttlMs"
  | "secret"
  | "key"
  | "etag"
  | "renewal"
  | "writerId"
  | "holder"
>;

/** The handle of a lease this process holds (its fields, without the local timestamp). */
export function toLeaseHandle(lease: LeaseHandle): LeaseHandle {
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
    ...(lease.holder === undefined ? {} : { holder: lease.holder }),
  };
}

/**
 * Checks a handle before any request (`validateLeaseHandle`): its key must be the lease key
 * its fields and secret name, so a forged handle cannot touch another object (invariant 1).
 * With `leaseId`, the handle must also be that lease's (the id a caller named beside it).
 * Anything else is `invalid-input` with code INVALID_LEASE_HANDLE. Returns the handle's
 * fields only.
 */
export function checkLeaseHandle(
  handle: unknown,
  operation: string,
  leaseId?: string,
): LeaseHandle {
  const candidate = typeof handle === "object" && handle !== null ? handle : {};
  validateLeaseHandle({ ...candidate, writtenAtLocalMs: 0 }, operation);
  const checked = toLeaseHandle(handle as LeaseHandle);
  if (leaseId !== undefined && leaseId.toUpperCase() !== checked.leaseId.toUpperCase()) {
    throw holdfastError(
      "invalid-input",
      operation,
      `the handle is for lease ${checked.leaseId}, not ${leaseId}`,
      {
        code: INVALID_LEASE_HANDLE,
        key: checked.key,
        hint: "send back the handle exactly as acquire or renew returned it",
      },
    );
  }
  return checked;
}

/**
 * Renews a lease from its handle, judging its term by the store's clock alone (a handle
 * carries no local timestamp, and the renewing host may not be the one that acquired it):
 * the lease object's Last-Modified before the renewal and the stamp of the renewal itself.
 * A renewal that landed after the previous term ran out (a cleaner may have counted the
 * lease expired) removes the lease and is refused (LEASE_EXPIRED); a lease already gone is
 * `not-found` (LEASE_LOST). Otherwise as `renewLease` (if-match rewrite, then admission:
 * refused from sealed on). 4 requests when no cleanup is in flight.
 */
export async function renewLeaseHandle(
  ctx: ProtocolContext,
  handle: LeaseHandle,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<{ handle: LeaseHandle; lease: LeaseView }> {
  const checked = checkLeaseHandle(handle, "renewLease");
  const before = await ctx.store.head(checked.key, { signal: options.signal });
  if (!before) {
    throw holdfastError("not-found", "renewLease", `lease ${checked.leaseId} is gone`, {
      key: checked.key,
      code: "LEASE_LOST",
      hint: "it expired and was swept, was released, or its version was retired; acquire a new lease",
    });
  }
  const written = await rewriteLease(ctx, checked, options.signal);
  const renewed: LeaseHandle = { ...checked, ...written };
  const after = await ctx.store.head(checked.key, { signal: options.signal });
  const precision = storePrecisionMs(ctx);
  if (!after || !isActiveAt(before.lastModified, checked.ttlMs, precision, after.lastModified)) {
    await releaseLease(ctx, leaseOf(renewed)).catch(() => undefined);
    throw holdfastError(
      "refused",
      "renewLease",
      `lease ${checked.leaseId} expired (storage time) before it was renewed`,
      {
        key: checked.key,
        code: "LEASE_EXPIRED",
        hint: "renew well within the TTL; acquire a new lease, then re-read the manifest",
      },
    );
  }
  return {
    handle: renewed,
    lease: {
      leaseId: renewed.leaseId,
      branch: renewed.branch,
      version: renewed.version,
      key: renewed.key,
      holder: renewed.holder ?? null,
      ttlMs: renewed.ttlMs,
      lastModified: after.lastModified.toISOString(),
      expiresAt: leaseExpiresAt(after.lastModified, renewed.ttlMs, precision).toISOString(),
      active: true,
      // The renewal's own stamp is storage "now": a whole term is left.
      timeLeftMs:
        leaseExpiresAt(after.lastModified, renewed.ttlMs, precision).getTime() -
        after.lastModified.getTime(),
    },
  };
}

/** Releases a lease from its handle (checked first; idempotent, as `releaseLease`). */
export async function releaseLeaseHandle(ctx: ProtocolContext, handle: LeaseHandle): Promise<void> {
  await releaseLease(ctx, leaseOf(checkLeaseHandle(handle, "releaseLease")));
}

// --- utils ---

/** The library's `Lease` of a handle, for `releaseLease` (which reads no local time). */
function leaseOf(handle: LeaseHandle): Lease {
  return { ...handle, writtenAtLocalMs: 0 };
}
