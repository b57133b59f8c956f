import { type ManifestRecord, type ProtocolContext, readManifest } from "@holdfast/dataset";
import { type KeepLeaseOptions, keepLease } from "./keeper.js";
import { type AcquireOptions, acquireLease, type Lease, releaseLease } from "./lease.js";

/** What `withLease` hands the reading function. */
export interface LeasedVersion {
  readonly lease: Lease;
  /** Read after the lease was admitted, so the files it names stay until the lease ends. */
  readonly manifest: ManifestRecord;
  /** Aborts when protection may have ended (keeper fence or refused renewal): stop reading. */
  readonly signal: AbortSignal;
}

/**
 * Reads a version under a kept lease: acquire, read the manifest (after admission, so a
 * version retired just before reads as `not-found`), keep the lease renewed while `read`
 * runs, then stop the keeper and release the lease whatever `read` did. Invariant 1.
 */
export async function withLease<T>(
  ctx: ProtocolContext,
  options: AcquireOptions & { keep?: KeepLeaseOptions },
  read: (leased: LeasedVersion) => Promise<T>,
): Promise<T> {
  const { keep, ...acquire } = options;
  const lease = await acquireLease(ctx, acquire);
  const keeper = keepLease(ctx, lease, keep);
  try {
    const manifest = await readManifest(ctx, lease.branch, lease.version);
    return await read({ lease, manifest, signal: keeper.signal });
  } finally {
    await keeper.stop();
    await releaseLease(ctx, keeper.lease).catch(() => {
      // A lease left behind only protects the version until its TTL; sweeps remove it.
    });
  }
}
