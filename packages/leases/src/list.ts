import { holdfastError, listAll, type ObjectMeta } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { branchLeasesPrefix, LEASES_PREFIX, parseLeaseKey, versionLeasesPrefix } from "./layout.js";

/** One listed lease object (from the listing only: its TTL is in the body). */
export interface LeaseEntry {
  readonly branch: string;
  readonly version: number;
  readonly leaseId: string;
  readonly key: string;
  readonly etag: string;
  /** The store's stamp of the last write (storage time). */
  readonly lastModified: Date;
  readonly size: number;
}

/** Streams lease objects: all, one branch's, or one version's, in key order. Foreign keys are skipped. */
export async function* listLeases(
  ctx: ProtocolContext,
  filter: { branch?: string; version?: number; signal?: AbortSignal } = {},
): AsyncGenerator<LeaseEntry> {
  if (filter.version !== undefined && filter.branch === undefined) {
    throw holdfastError("invalid-input", "listLeases", "a version filter needs a branch");
  }
  const prefix =
    filter.branch === undefined
      ? LEASES_PREFIX
      : filter.version === undefined
        ? branchLeasesPrefix(filter.branch)
        : versionLeasesPrefix(filter.branch, filter.version);
  for await (const meta of listAll(ctx.store, prefix, { signal: filter.signal })) {
    const entry = toLeaseEntry(meta);
    if (entry) yield entry;
  }
}

export function toLeaseEntry(meta: ObjectMeta): LeaseEntry | null {
  const parsed = parseLeaseKey(meta.key);
  if (!parsed) return null;
  return {
    ...parsed,
    key: meta.key,
    etag: meta.etag,
    lastModified: meta.lastModified,
    size: meta.size,
  };
}
