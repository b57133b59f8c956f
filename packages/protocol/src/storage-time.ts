import { holdfastError, writerPayload } from "@holdfast/conditional-store";
import type { ProtocolContext } from "./context.js";
import { clockProbeKey } from "./keys.js";

/**
 * The coarsest timestamp precision holdfast assumes of any store: HTTP Last-Modified is
 * whole seconds, and HEAD and LIST of one object may disagree (RGW: s vs ms). Every
 * storage timestamp is truncated to whole seconds and every expiry gets at least this
 * much slack, so truncation can never shorten an accepted TTL (docs/protocol.md §3, L4).
 */
export const PRECISION_FLOOR_MS = 1000;

/** Milliseconds since the epoch of a Date or number. */
function ms(time: Date | number): number {
  const value = typeof time === "number" ? time : time.getTime();
  if (!Number.isFinite(value)) {
    throw holdfastError("invalid-input", "validate", `invalid storage timestamp ${String(time)}`);
  }
  return value;
}

/** Truncates a storage timestamp to the whole second (in ms). */
export function truncSec(time: Date | number): number {
  return Math.floor(ms(time) / PRECISION_FLOOR_MS) * PRECISION_FLOOR_MS;
}

/**
 * The slack added to every expiry for a store of precision `precisionMs`:
 * `max(precisionMs, 1000)` for every precision that is at most a second or a whole
 * number of seconds (all known stores). A precision that is not a whole number of
 * seconds gets one more second, because truncating its timestamps to the second can
 * move them back by up to a second on top of their own precision.
 */
export function precisionIntervalMs(precisionMs: number): number {
  if (!Number.isFinite(precisionMs) || precisionMs < 0) {
    throw holdfastError("invalid-input", "validate", `invalid timestamp precision ${precisionMs}`);
  }
  if (precisionMs <= PRECISION_FLOOR_MS) return PRECISION_FLOOR_MS;
  if (precisionMs % PRECISION_FLOOR_MS === 0) return precisionMs;
  return Math.ceil(precisionMs / PRECISION_FLOOR_MS) * PRECISION_FLOOR_MS + PRECISION_FLOOR_MS;
}

/**
 * Storage time after which a lease whose object the store stamped `lastModified` may be
 * treated as expired: `truncSec(lastModified) + ttlMs + max(precisionMs, 1000)`.
 * Because stamp <= real write time < truncSec(stamp) + precision interval, the TTL has
 * passed in real time by then (docs/protocol.md §3). Invariant 1.
 */
export function leaseExpiresAt(
  lastModified: Date | number,
  ttlMs: number,
  precisionMs: number,
): Date {
  if (!Number.isFinite(ttlMs) || ttlMs < 0) {
    throw holdfastError("invalid-input", "validate", `invalid TTL ${ttlMs}`);
  }
  return new Date(truncSec(lastModified) + ttlMs + precisionIntervalMs(precisionMs));
}

/**
 * True while a lease stamped `lastModified` still protects its version at storage time
 * `referenceTime` (the Last-Modified of an object the cleaner wrote, e.g. its seal):
 * `leaseExpiresAt(...) > truncSec(referenceTime)`. Host clocks never appear (L2).
 */
export function isActiveAt(
  lastModified: Date | number,
  ttlMs: number,
  precisionMs: number,
  referenceTime: Date | number,
): boolean {
  return leaseExpiresAt(lastModified, ttlMs, precisionMs).getTime() > truncSec(referenceTime);
}

/** The timestamp precision of the context's store, never below the 1 s floor. */
export function storePrecisionMs(ctx: ProtocolContext): number {
  return Math.max(ctx.store.capabilities.timestampPrecisionMs, PRECISION_FLOOR_MS);
}

/**
 * The store's "now": writes a probe `_holdfast/clock/{ulid}`, heads it, deletes it, and
 * returns the Last-Modified the store gave it (at the store's precision). Costs 3
 * requests. A probe left behind by a crash is harmless and swept by cleanup. Neither write
 * needs to survive a power loss (docs/protocol.md §5.10): `durable: false`.
 */
export async function storageNow(
  ctx: ProtocolContext,
  options: { signal?: AbortSignal } = {},
): Promise<Date> {
  const { writerId, bytes } = writerPayload({ schema: 1, purpose: "storage-time probe" }, ctx.ids);
  const key = clockProbeKey(writerId);
  // Unconditional: the probe key is fresh, and only its timestamp matters.
  await ctx.store.put(key, bytes, { signal: options.signal, durable: false });
  const meta = await ctx.store.head(key, { signal: options.signal });
  try {
    await ctx.store.delete(key, { signal: options.signal, durable: false });
  } catch {
    // A leftover probe costs nothing but a key; cleanup removes old probes.
  }
  if (!meta) {
    throw holdfastError(
      "unsupported",
      "head",
      `storage-time probe ${key} vanished before it could be read`,
      {
        key,
        hint: "the store did not show its own write: it lacks read-after-write consistency",
      },
    );
  }
  return meta.lastModified;
}
