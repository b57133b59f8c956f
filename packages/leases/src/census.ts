import {
  batches,
  deleteIfMatch,
  type HoldfastError,
  holdfastError,
} from "@holdfast/conditional-store";
import { isActiveAt, type ProtocolContext, validateName } from "@holdfast/protocol";
import { parseStored, resolverOptions } from "@holdfast/protocol/internal";
import type { LeaseCensus } from "@holdfast/retirement";
import { type LeaseEntry, listLeases } from "./list.js";
import { MAX_TTL_MS, MIN_TTL_MS, StoredLeaseBodySchema } from "./schema.js";

/** What retirement calls to find versions with active leases: version → reason (defined by retirement). */
export type { LeaseCensus };

/** The reason a census gives for a version retained by a lease. */
export const LEASE_REASON = "lease";

/**
 * Builds the lease census cleanup injects into retirement. One LIST of the branch's
 * leases; a lease is active iff `isActiveAt(lastModified, ttl, precision, referenceTime)`
 * where `referenceTime` is the Last-Modified of the cleaner's own write (drain or seal):
 * storage time only, never a host clock (L2, L4). A lease object is read only when its age
 * lies between MIN_TTL_MS and MAX_TTL_MS; an unreadable one counts as active (fail closed).
 */
export function censusLeases(ctx: ProtocolContext): LeaseCensus {
  return async (branch, versions, referenceTime) => {
    validateName(branch, "branch");
    const wanted = new Set(versions);
    const active = new Map<number, string>();
    const precision = ctx.store.capabilities.timestampPrecisionMs;
    for await (const lease of listLeases(ctx, { branch })) {
      if (!wanted.has(lease.version) || active.has(lease.version)) continue;
      if (await leaseIsActive(ctx, lease, precision, referenceTime)) {
        active.set(lease.version, LEASE_REASON);
      }
    }
    return active;
  };
}

async function leaseIsActive(
  ctx: ProtocolContext,
  lease: LeaseEntry,
  precision: number,
  referenceTime: Date,
): Promise<boolean> {
  // Every valid lease has MIN_TTL_MS <= ttl <= MAX_TTL_MS, so most leases are decided by
  // their listing alone.
  if (isActiveAt(lease.lastModified, MIN_TTL_MS, precision, referenceTime)) return true;
  if (!isActiveAt(lease.lastModified, MAX_TTL_MS, precision, referenceTime)) return false;
  const got = await ctx.store.get(lease.key);
  if (!got) return false; // released since the listing
  let ttlMs: number;
  try {
    ttlMs = parseStored(StoredLeaseBodySchema, got.body, lease.key, "censusLeases").ttlMs;
  } catch {
    return true; // unreadable: retain, and MAX_TTL_MS bounds how long
  }
  // A renewal since the listing only moves Last-Modified later.
  const lastModified = Math.max(got.lastModified.getTime(), lease.lastModified.getTime());
  return isActiveAt(lastModified, ttlMs, precision, referenceTime);
}

/**
 * Deletes the lease objects of `versions` on `branch` (or of the whole branch with
 * `"all"`), in backend-sized batches. Throws if any deletion failed, so retirement keeps
 * its record (the retry anchor) until every lease it deletes is gone (L8).
 *
 * With `writtenBefore` (finalize, docs/protocol.md §5.4), only leases
 * whose listed write lies a whole precision interval before that storage time are deleted:
 * `truncSec(lastModified) + interval(p) <= truncSec(writtenBefore)`, which proves the
 * write happened before the one stamped `writtenBefore` (§3). Any later lease (one
 * admitted after a cancellation the caller has not seen, or in the same precision interval)
 * is kept; `sweepExpiredLeases` removes it after it expires.
 */
export async function deleteLeasesOf(
  ctx: ProtocolContext,
  branch: string,
  versions: readonly number[] | "all",
  options: { readonly writtenBefore?: Date | undefined } = {},
): Promise<{ deleted: number }> {
  validateName(branch, "branch");
  const { writtenBefore } = options;
  if (writtenBefore !== undefined && !isValidDate(writtenBefore)) {
    throw holdfastError("invalid-input", "deleteLeasesOf", "writtenBefore is not a valid date");
  }
  const wanted = versions === "all" ? null : new Set(versions);
  const precision = ctx.store.capabilities.timestampPrecisionMs;
  const keys: string[] = [];
  for await (const lease of listLeases(ctx, { branch })) {
    if (wanted !== null && !wanted.has(lease.version)) continue;
    // Written within or after the precision interval of `writtenBefore`: keep.
    if (writtenBefore && isActiveAt(lease.lastModified, 0, precision, writtenBefore)) continue;
    keys.push(lease.key);
  }
  let deleted = 0;
  const failed: { key: string; error: HoldfastError }[] = [];
  for (const batch of batches(keys, ctx.store.capabilities.maxBatchDelete)) {
    const result = await ctx.store.deleteMany(batch);
    deleted += result.deleted.length;
    failed.push(...result.failed);
  }
  if (failed.length > 0) {
    const first = failed[0]!;
    throw holdfastError(
      "ambiguous",
      "deleteLeasesOf",
      `${failed.length} lease deletions failed on ${branch}`,
      {
        key: first.key,
        cause: first.error,
        hint: "retry; the retirement record stays until every lease is gone",
      },
    );
  }
  return { deleted };
}

/** Extra storage time past expiry before a sweep deletes a lease object. @default 1 hour */
export const DEFAULT_SWEEP_GRACE_MS = 60 * 60 * 1000;

/**
 * Deletes lease objects on `branch` (`undefined`: every branch, including ones whose
 * versions or reference are gone) that expired more than `graceMs` before
 * `referenceTime` (storage time), so crashed readers leave nothing behind (invariant 5).
 * A holder never renews a lease its own clock sees as expired (LEASE_EXPIRED), and the
 * grace dwarfs any in-flight renewal; on stores with atomic conditional delete the
 * deletion is also if-match on the ETag that was judged expired.
 */
export async function sweepExpiredLeases(
  ctx: ProtocolContext,
  branch: string | undefined,
  referenceTime: Date,
  options: { graceMs?: number } = {},
): Promise<{ deleted: number }> {
  if (branch !== undefined) validateName(branch, "branch");
  const graceMs = options.graceMs ?? DEFAULT_SWEEP_GRACE_MS;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0) {
    throw holdfastError("invalid-input", "sweepExpiredLeases", `invalid grace ${graceMs}`);
  }
  const precision = ctx.store.capabilities.timestampPrecisionMs;
  let deleted = 0;
  for await (const lease of listLeases(ctx, branch === undefined ? {} : { branch })) {
    if (isActiveAt(lease.lastModified, MIN_TTL_MS + graceMs, precision, referenceTime)) continue;
    let etag = lease.etag;
    if (isActiveAt(lease.lastModified, MAX_TTL_MS + graceMs, precision, referenceTime)) {
      const got = await ctx.store.get(lease.key);
      if (!got) continue;
      let ttlMs: number;
      try {
        ttlMs = parseStored(StoredLeaseBodySchema, got.body, lease.key, "sweepExpiredLeases").ttlMs;
      } catch {
        continue; // unreadable: only past the maximum TTL
      }
      if (isActiveAt(got.lastModified, ttlMs + graceMs, precision, referenceTime)) continue;
      etag = got.etag;
    }
    if (ctx.store.capabilities.atomicConditionalDelete) {
      const outcome = await deleteIfMatch(ctx.store, lease.key, etag, resolverOptions(ctx));
      if (outcome.status === "applied") deleted += 1;
    } else {
      await ctx.store.delete(lease.key);
      deleted += 1;
    }
  }
  return { deleted };
}

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && Number.isFinite(value.getTime());
}
