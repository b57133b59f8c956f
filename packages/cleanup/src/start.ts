import { isHoldfastError } from "@holdfast/conditional-store";
import { type ProtocolContext, storageNow as probeStorageNow } from "@holdfast/protocol";
import {
  acquireCleanupLock,
  type CleanupLock,
  releaseCleanupLock,
  stampCleanupLock,
} from "@holdfast/retirement";
import type { CleanupOptions } from "./types.js";

/** The cleanup lock a run holds (the heartbeat swaps in each renewal), if it took one. */
export interface HeldLock {
  current: CleanupLock | undefined;
}

/**
 * Cleanup 1 lock (Retirement 1 lock): the run's cleanup lock and its storage "now", before any
 * other request of the run.
 *
 * A run that takes the lock reads "now" as the Last-Modified of its own lock write (one HEAD)
 * instead of a separate probe (PUT, HEAD, DELETE of `_holdfast/clock/`): both are stamps the store
 * put on a write of this run that completed before the run's first read of the dataset (recovery,
 * plan, censuses, the intents of the last look), which is all docs/protocol.md asks of the run's
 * "now" (§3; §6, Cleanup 1 lock: no later than the drain's and seal's stamps, and before the orphan
 * sweep's R(intents)). A plan and a `concurrent` run take no lock and probe; an injected
 * `storageNow` (tests) replaces both.
 */
export async function lockAndClock(
  ctx: ProtocolContext,
  options: CleanupOptions,
  run: { dryRun: boolean; owner: string; warnings: string[] },
): Promise<{ now: Date; lock: HeldLock }> {
  if (run.dryRun || options.concurrent) {
    const now = options.storageNow ?? (await runStorageNow(ctx, run.dryRun, run.warnings));
    return { now, lock: { current: undefined } };
  }
  const taken = await acquireCleanupLock(ctx, {
    owner: run.owner,
    boundMs: options.ownershipBoundMs,
    storageNow: options.storageNow,
    wait: options.waitForLock ? (options.signal ?? new AbortController().signal) : undefined,
  });
  if (options.storageNow) return { now: options.storageNow, lock: { current: taken } };
  try {
    const stamped = await stampCleanupLock(ctx, taken);
    if (stamped) return { now: stamped.storageNow, lock: { current: stamped.lock } };
    // The lock no longer shows our write (cannot happen within its bound): probe instead.
    return { now: await probeStorageNow(ctx), lock: { current: taken } };
  } catch (error) {
    await releaseCleanupLock(ctx, taken).catch(() => {});
    throw error;
  }
}

/**
 * The storage "now" of a run without a lock: one probe (PUT, HEAD, DELETE of a
 * `_holdfast/clock/` object), for a dry run too. No read-only request returns the store's
 * clock (Last-Modified exists only on objects the store stamped, and the newest of those
 * is just a lower bound), and a plan judged by the host clock disagrees with the run
 * whenever the host is skewed. A dry run on credentials that may not write falls back to
 * the host clock, with a warning.
 */
async function runStorageNow(
  ctx: ProtocolContext,
  dryRun: boolean,
  warnings: string[],
): Promise<Date> {
  try {
    return await probeStorageNow(ctx);
  } catch (error) {
    if (!dryRun || !isHoldfastError(error, "refused", "auth", "unsupported")) throw error;
    warnings.push(
      `storage-time probe refused (${error.code ?? error.kind}): the plan judges leases and ages by this host's clock, which may differ from the store's`,
    );
    return new Date(ctx.clock.now());
  }
}
