import {
  deleteIfMatch,
  holdfastError,
  isHoldfastError,
  putIfAbsent,
  putIfMatch,
  writerPayload,
} from "@holdfast/conditional-store";
import { isActiveAt, storageNow as probeStorageNow } from "@holdfast/protocol";
import { parseStored, resolverOptions } from "@holdfast/protocol/internal";
import { z } from "zod";
import type { RetirementContext } from "./context.js";

/** The one cleanup lock of a dataset (docs/protocol.md §5.9). */
export const CLEANUP_LOCK_KEY = "_holdfast/cleanup/lock.json";

/** Default storage-time bound of the cleanup lock: stale one minute after its last renewal. */
export const DEFAULT_CLEANUP_LOCK_BOUND_MS = 60 * 1000;

/** Error code when another cleanup holds the lock (kind `conflict`). */
export const CLEANUP_RUNNING = "CLEANUP_RUNNING";

/** Error code when this holder's lock was taken over or removed (kind `conflict`). */
export const CLEANUP_LOCK_LOST = "CLEANUP_LOCK_LOST";

/**
 * The lock body, schema 1. `writerId` is fresh on every write (renewals change the bytes
 * and a content-MD5 ETag); `since` is the storage time the holder started, for people.
 */
export const CleanupLockBody = z.object({
  schema: z.literal(1),
  owner: z.string().min(1),
  writerId: z.string().min(1),
  boundMs: z.number().int().positive(),
  since: z.string().optional(),
});
export type CleanupLockBody = z.infer<typeof CleanupLockBody>;

/** A cleanup lock this process holds; renew it at least every `boundMs / 3`, release it at the end. */
export interface CleanupLock {
  readonly key: string;
  readonly etag: string;
  readonly body: CleanupLockBody;
}

export interface AcquireCleanupLockOptions {
  /** ULID of the cleanup run taking the lock. */
  readonly owner: string;
  /** Storage-time bound after the last renewal. @default DEFAULT_CLEANUP_LOCK_BOUND_MS */
  readonly boundMs?: number | undefined;
  /** Storage time the run started (recorded as `since`), and to judge a held lock against. @default a probe when needed */
  readonly storageNow?: Date | undefined;
  /** Wait for the holder instead of failing with CLEANUP_RUNNING, until this signal aborts. */
  readonly wait?: AbortSignal | undefined;
  /** Pause between attempts while waiting. @default boundMs / 4 */
  readonly pollMs?: number | undefined;
}

/**
 * Retirement 1 lock (docs/protocol.md §5.9): takes the dataset's cleanup lock, a create-only write;
 * if another cleanup holds it and renewed it within its bound (storage time), `conflict`
 * CLEANUP_RUNNING naming that owner and since when (or, with `wait`, poll until it is free); a lock
 * whose owner stopped renewing is taken over by an if-match rewrite, so two takers cannot both win.
 * The lock keeps statistics and work single-run; the safety of concurrent cleanups does not rest on
 * it (every retirement step stays fenced on its own).
 */
export async function acquireCleanupLock(
  ctx: RetirementContext,
  options: AcquireCleanupLockOptions,
): Promise<CleanupLock> {
  const boundMs = options.boundMs ?? DEFAULT_CLEANUP_LOCK_BOUND_MS;
  if (!Number.isSafeInteger(boundMs) || boundMs < 1) {
    throw holdfastError("invalid-input", "acquireCleanupLock", `invalid lock bound ${boundMs}`, {
      code: "INVALID_OPTION",
    });
  }
  const fields: Omit<CleanupLockBody, "writerId"> = {
    schema: 1,
    owner: options.owner,
    boundMs,
    ...(options.storageNow ? { since: options.storageNow.toISOString() } : {}),
  };
  for (;;) {
    const { writerId, bytes } = writerPayload(fields, ctx.ids);
    const created = await putIfAbsent(ctx.store, CLEANUP_LOCK_KEY, bytes, lockWriteOptions(ctx));
    if (created.status !== "conflict") {
      return { key: CLEANUP_LOCK_KEY, etag: created.etag, body: { ...fields, writerId } };
    }
    const held = await ctx.store.get(CLEANUP_LOCK_KEY);
    if (!held) continue; // released between our write and our read
    const holder = readHolder(held.body);
    const now = options.storageNow ?? (await probeStorageNow(ctx));
    const precision = ctx.store.capabilities.timestampPrecisionMs;
    if (!isActiveAt(held.lastModified, holder.boundMs, precision, now)) {
      // The holder stopped renewing: take over, if-match so only one taker wins.
      const next = writerPayload(fields, ctx.ids);
      const taken = await putIfMatch(
        ctx.store,
        CLEANUP_LOCK_KEY,
        next.bytes,
        held.etag,
        lockWriteOptions(ctx),
      );
      if (taken.status === "conflict") continue;
      return {
        key: CLEANUP_LOCK_KEY,
        etag: taken.etag,
        body: { ...fields, writerId: next.writerId },
      };
    }
    const since = holder.since ?? held.lastModified.toISOString();
    if (!options.wait) {
      throw holdfastError(
        "conflict",
        "acquireCleanupLock",
        `another cleanup is running (owner ${holder.owner}, since ${since})`,
        {
          key: CLEANUP_LOCK_KEY,
          code: CLEANUP_RUNNING,
          hint: "wait for it (--wait), or run concurrently (--concurrent); a crashed holder's lock goes stale after its bound",
        },
      );
    }
    await ctx.sleep(options.pollMs ?? Math.max(1, Math.floor(boundMs / 4)), options.wait);
  }
}

/**
 * Renews the lock: an if-match rewrite with fresh bytes, so its Last-Modified shows the
 * holder alive. `conflict` CLEANUP_LOCK_LOST when someone took it over (this holder was
 * presumed gone) or it is gone.
 */
export async function renewCleanupLock(
  ctx: RetirementContext,
  lock: CleanupLock,
): Promise<CleanupLock> {
  const { writerId: _old, ...fields } = lock.body;
  const { writerId, bytes } = writerPayload(fields, ctx.ids);
  const outcome = await putIfMatch(ctx.store, lock.key, bytes, lock.etag, lockWriteOptions(ctx));
  if (outcome.status === "conflict") throw lockLost(lock);
  return { key: lock.key, etag: outcome.etag, body: { ...fields, writerId } };
}

/**
 * Releases the lock if it is still this holder's: conditional DELETE where the store has
 * one; elsewhere (RGW ignores If-Match on DELETE) a GET that shows our writerId, then a
 * DELETE. A takeover needs the lock stale, and a releasing holder renewed it within a third
 * of its bound, so that window cannot be taken over in practice. Never throws for a lock
 * that is already gone or someone else's.
 */
export async function releaseCleanupLock(ctx: RetirementContext, lock: CleanupLock): Promise<void> {
  if (ctx.store.capabilities.atomicConditionalDelete) {
    await deleteIfMatch(ctx.store, lock.key, lock.etag, lockWriteOptions(ctx));
    return;
  }
  const current = await ctx.store.get(lock.key);
  if (!current || current.etag !== lock.etag) return;
  await ctx.store.delete(lock.key, { durable: false });
}

/**
 * The storage time of the holder's own lock write, read by one HEAD: a Last-Modified the
 * store stamped on a write this run made, so it can serve as the run's storage "now"
 * instead of a separate probe (docs/protocol.md §5.9). The returned
 * lock records it as `since`, so renewals keep the start time. `undefined` when the lock
 * no longer shows this holder's write (then the caller probes).
 */
export async function stampCleanupLock(
  ctx: RetirementContext,
  lock: CleanupLock,
): Promise<{ lock: CleanupLock; storageNow: Date } | undefined> {
  const meta = await ctx.store.head(lock.key);
  if (!meta || meta.etag !== lock.etag) return undefined;
  const since = lock.body.since ?? meta.lastModified.toISOString();
  return { lock: { ...lock, body: { ...lock.body, since } }, storageNow: meta.lastModified };
}

/** Reads the current lock for `status`/`doctor`: `null` when no cleanup holds it. */
export async function readCleanupLock(
  ctx: RetirementContext,
): Promise<(CleanupLockBody & { lastModified: Date; etag: string }) | null> {
  const got = await ctx.store.get(CLEANUP_LOCK_KEY);
  if (!got) return null;
  const body = parseStored(CleanupLockBody, got.body, CLEANUP_LOCK_KEY, "readCleanupLock");
  return { ...body, lastModified: got.lastModified, etag: got.etag };
}

/** True when `error` says this holder lost its cleanup lock. */
export function isCleanupLockLost(error: unknown): boolean {
  return isHoldfastError(error, "conflict") && error.code === CLEANUP_LOCK_LOST;
}

// --- utils ---

/**
 * Every write of the lock (take, takeover, renewal, release) is `durable: false`: no
 * safety rests on the lock, and a power loss that undoes one looks like a crash before it
 * (docs/protocol.md §5.10: a lost take or renewal leaves the lock as it was, a lost
 * release leaves a lock that goes stale after its bound).
 */
function lockWriteOptions(ctx: RetirementContext) {
  return { ...resolverOptions(ctx), durable: false };
}

/** An unreadable lock still holds for the default bound after its last write, then goes stale. */
function readHolder(body: Uint8Array): Pick<CleanupLockBody, "owner" | "boundMs" | "since"> {
  try {
    return parseStored(CleanupLockBody, body, CLEANUP_LOCK_KEY, "acquireCleanupLock");
  } catch {
    return { owner: "(unreadable lock)", boundMs: DEFAULT_CLEANUP_LOCK_BOUND_MS };
  }
}

function lockLost(lock: CleanupLock) {
  return holdfastError(
    "conflict",
    "renewCleanupLock",
    `cleanup lock of owner ${lock.body.owner} was taken over`,
    {
      key: lock.key,
      code: CLEANUP_LOCK_LOST,
      hint: "another cleanup presumed this one gone; stop at the next safe point",
    },
  );
}
