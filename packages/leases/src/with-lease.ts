import { holdfastError } from "@holdfast/conditional-store";
import type { DatasetFormat, FormatManifest } from "@holdfast/dataset";
import { requireFormat } from "@holdfast/dataset/internal";
import type { ProtocolContext } from "@holdfast/protocol";
import { type KeepLeaseOptions, keepLease } from "./keeper.js";
import { type AcquireOptions, acquireLease, type Lease, releaseLease } from "./lease.js";

/** What `withLease` hands the reading function. */
export interface LeasedVersion<M = FormatManifest> {
  /** The lease as acquired; its `secret` is the capability to renew and release it. */
  readonly lease: Lease;
  /** Read after the lease was admitted, so the files it names stay until the lease ends. */
  readonly manifest: M;
  /** Aborts when protection may have ended (keeper fence or refused renewal): stop reading. */
  readonly signal: AbortSignal;
}

/**
 * Reads a version under a kept lease: acquire, read the manifest through the dataset's
 * `format` (after admission, so a version retired just before reads as `not-found`), keep
 * the lease renewed while `read` runs, then stop the keeper and release the lease whatever
 * `read` did. The format is required (docs/protocol.md §1.1). Invariant 1.
 */
export async function withLease<T>(
  ctx: ProtocolContext,
  options: AcquireOptions & { keep?: KeepLeaseOptions },
  read: (leased: LeasedVersion) => Promise<T>,
): Promise<T> {
  requireFormat((options as Partial<AcquireOptions> | undefined)?.format, "withLease");
  const { keep, ...acquire } = options;
  const lease = await acquireLease(ctx, acquire);
  const keeper = keepLease(ctx, lease, keep);
  try {
    const manifest = await readFormatManifest(ctx, options.format, lease);
    return await read({ lease, manifest, signal: keeper.signal });
  } finally {
    await keeper.stop();
    await releaseLease(ctx, keeper.lease).catch(() => {
      // A lease left behind only protects the version until its TTL; sweeps remove it.
    });
  }
}

// --- utils ---

async function readFormatManifest(
  ctx: ProtocolContext,
  format: DatasetFormat,
  lease: Lease,
): Promise<FormatManifest> {
  const manifest = await format.readManifest(ctx, lease.branch, lease.version);
  if (!manifest) {
    throw holdfastError(
      "not-found",
      "readManifest",
      `version ${lease.version} of branch ${lease.branch} does not exist`,
      { key: format.manifestKey(lease.branch, lease.version), code: "VERSION_NOT_FOUND" },
    );
  }
  return manifest;
}
