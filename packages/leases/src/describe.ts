import { readJsonAs } from "@holdfast/conditional-store";
import { isActiveAt, leaseExpiresAt, type ProtocolContext, storageNow } from "@holdfast/protocol";
import { storePrecisionMs } from "@holdfast/protocol/internal";
import type { Lease } from "./lease.js";
import { type LeaseEntry, listLeases } from "./list.js";
import { StoredLeaseBodySchema } from "./schema.js";

/**
 * A lease as people and programs are shown it: the CLI's `lease list` and `status`, and the
 * HTTP API's lease answers (the `LeaseShape` of `@holdfast/api-shapes`). Times are the
 * store's (Last-Modified stamps), never a host's.
 */
export interface LeaseView {
  leaseId: string;
  branch: string;
  version: number;
  key: string;
  /** The holder label from the lease body (`AcquireOptions.holder`); null when it has none or could not be read. */
  holder: string | null;
  /** Read from the lease body; null when the body could not be read. */
  ttlMs: number | null;
  lastModified: string;
  expiresAt: string | null;
  active: boolean;
  /**
   * Storage time left before the lease expires, as of the listing's own probe of the store's
   * clock (0 once expired); null when the TTL could not be read or no probe was made.
   */
  timeLeftMs: number | null;
}

/**
 * Lists leases with their TTL (read from each body) and whether each is active, judged
 * against the store's own clock (a probe object's Last-Modified), never this host's.
 * A lease whose body cannot be read counts as active: showing a lease as expired must
 * never be a guess. A `version` without a `branch` is on `defaultBranch` (the CLI's
 * `lease list` and the HTTP API's listing both read it so).
 */
export async function describeLeases(
  ctx: ProtocolContext,
  filter: {
    branch?: string | undefined;
    version?: number | undefined;
    defaultBranch?: string;
  } = {},
): Promise<LeaseView[]> {
  const { version } = filter;
  const branch = filter.branch ?? (version === undefined ? undefined : filter.defaultBranch);
  const entries: LeaseEntry[] = [];
  for await (const entry of listLeases(ctx, {
    ...(branch === undefined ? {} : { branch }),
    ...(version === undefined ? {} : { version }),
  })) {
    entries.push(entry);
  }
  if (entries.length === 0) return [];
  const now = await storageNow(ctx);
  const precision = storePrecisionMs(ctx);
  const views: LeaseView[] = [];
  for (const entry of entries) {
    const body = await readJsonAs(ctx.store, entry.key, StoredLeaseBodySchema);
    const ttlMs = body?.ttlMs ?? null;
    const expiresAt = ttlMs === null ? null : leaseExpiresAt(entry.lastModified, ttlMs, precision);
    views.push({
      leaseId: entry.leaseId,
      branch: entry.branch,
      version: entry.version,
      key: entry.key,
      holder: body?.schema === 2 ? (body.holder ?? null) : null,
      ttlMs,
      lastModified: entry.lastModified.toISOString(),
      expiresAt: expiresAt === null ? null : expiresAt.toISOString(),
      active: ttlMs === null ? true : isActiveAt(entry.lastModified, ttlMs, precision, now),
      timeLeftMs: expiresAt === null ? null : Math.max(0, expiresAt.getTime() - now.getTime()),
    });
  }
  return views;
}

/**
 * The view of a lease this process just acquired: its expiry from the lease object's
 * Last-Modified stamp (one HEAD). A lease object already gone is shown inactive.
 */
export async function describeLease(ctx: ProtocolContext, lease: Lease): Promise<LeaseView> {
  const meta = await ctx.store.head(lease.key);
  const precision = storePrecisionMs(ctx);
  return {
    leaseId: lease.leaseId,
    branch: lease.branch,
    version: lease.version,
    key: lease.key,
    holder: lease.holder ?? null,
    ttlMs: lease.ttlMs,
    lastModified: meta ? meta.lastModified.toISOString() : "",
    expiresAt: meta
      ? leaseExpiresAt(meta.lastModified, lease.ttlMs, precision).toISOString()
      : null,
    active: meta !== null,
    timeLeftMs: null,
  };
}
