import { holdfastError } from "@holdfast/conditional-store";
import { leaseExpiresAt, type ProtocolContext, storageNow, truncSec } from "@holdfast/protocol";
import { CLEANUP_LOCK_KEY, CLEANUP_RUNNING, readCleanupLock } from "./cleanup-lock.js";

/**
 * What the dataset's cleanup lock says about its holder, judged in storage time only: the
 * lock's Last-Modified is its holder's last heartbeat (every renewal rewrites it), and it
 * clears `boundMs` plus one precision interval after that (docs/protocol.md §5.9). No host clock is
 * compared with the store's.
 */
export interface CleanupLockHolder {
  readonly owner: string;
  /** Storage time the holder started, when it recorded one. */
  readonly since: string | undefined;
  /** Storage time of the holder's last write of the lock (its last heartbeat). */
  readonly lastHeartbeat: Date;
  /** Storage time after which the lock is taken over unless renewed. */
  readonly clearsAt: Date;
  /** How often a live holder renews: a third of its bound. */
  readonly renewsEveryMs: number;
  /** True when the holder missed a renewal: its last heartbeat is older than 1.5 renewal intervals plus the store's precision. */
  readonly stoppedRenewing: boolean;
  /** The storage "now" the judgement was made at. */
  readonly now: Date;
}

/**
 * Reads the cleanup lock and the store's clock: `null` when no lock is held or it has
 * already cleared (a cleanup or recover takes it over at once). An unreadable lock is left
 * to the cleanup package, which treats it by its own rule.
 */
export async function inspectCleanupLock(ctx: ProtocolContext): Promise<CleanupLockHolder | null> {
  const lock = await readCleanupLock(ctx).catch(() => null);
  if (!lock) return null;
  const now = await storageNow(ctx);
  const precision = ctx.store.capabilities.timestampPrecisionMs;
  const clearsAt = leaseExpiresAt(lock.lastModified, lock.boundMs, precision);
  if (clearsAt.getTime() <= truncSec(now)) return null;
  const renewsEveryMs = Math.max(1, Math.floor(lock.boundMs / 3));
  const age = now.getTime() - lock.lastModified.getTime();
  return {
    owner: lock.owner,
    since: lock.since,
    lastHeartbeat: lock.lastModified,
    clearsAt,
    renewsEveryMs,
    stoppedRenewing: age > renewsEveryMs * 1.5 + Math.max(precision, 1000),
    now,
  };
}

/** One sentence on the holder: who, since when, its last heartbeat and when the lock clears. */
export function describeLockHolder(holder: CleanupLockHolder): string {
  const ago = Math.max(
    0,
    Math.round((holder.now.getTime() - holder.lastHeartbeat.getTime()) / 1000),
  );
  const left = Math.max(0, Math.ceil((holder.clearsAt.getTime() - holder.now.getTime()) / 1000));
  const since = holder.since === undefined ? "" : `, since ${holder.since}`;
  const heartbeat = `last heartbeat ${holder.lastHeartbeat.toISOString()} (storage time, ${ago} s ago; a running cleanup renews every ${Math.round(holder.renewsEveryMs / 1000)} s)`;
  return holder.stoppedRenewing
    ? `the cleanup lock is held by owner ${holder.owner}${since}, which stopped renewing it: ${heartbeat}; the lock clears at ${holder.clearsAt.toISOString()} (in ${left} s)`
    : `another cleanup is running (owner ${holder.owner}${since}): ${heartbeat}; if it stops, the lock clears at ${holder.clearsAt.toISOString()} (in ${left} s)`;
}

/**
 * The refusal of a run that will not wait while the lock is held (the CLI's `recover
 * --no-wait`, before anything is written): kind `conflict`, code CLEANUP_RUNNING.
 */
export function lockHeldError(holder: CleanupLockHolder) {
  return holdfastError("conflict", "recover", describeLockHolder(holder), {
    key: CLEANUP_LOCK_KEY,
    code: CLEANUP_RUNNING,
    hint: holder.stoppedRenewing
      ? `run holdfast recover without --no-wait to wait until ${holder.clearsAt.toISOString()} and recover then`
      : "wait for it (holdfast recover without --no-wait), or recover --concurrent",
  });
}
