import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { type Lease, renewLease } from "./lease.js";

export interface KeepLeaseOptions {
  /** Pause between renewals. @default ttlMs / 3 */
  readonly renewEveryMs?: number;
  /**
   * The fence fires this long before the last successful write's protection ends
   * (`writtenAtLocalMs + ttlMs`), leaving the holder time to stop. @default min(1000, ttlMs / 4)
   */
  readonly safetyMarginMs?: number;
  /** Called after each successful renewal. */
  readonly onRenew?: (lease: Lease) => void;
  /** Called for each failed renewal (the keeper keeps trying until the fence, unless refused). */
  readonly onError?: (error: unknown) => void;
}

/** A running keeper. Stop it before releasing the lease. */
export interface LeaseKeeper {
  /** Aborted when protection may have ended; `reason` is a HoldfastError (code LEASE_FENCED, or the refusal). */
  readonly signal: AbortSignal;
  /** The lease as last renewed. */
  readonly lease: Lease;
  /** Local-clock time at which the fence fires unless a renewal succeeds first. */
  readonly deadlineMs: number;
  /** Stops renewing and the fence timer; resolves when the background loops have ended. */
  stop(): Promise<void>;
}

/**
 * The keeper's renewal period and safety margin for a lease of `ttlMs`, checked: a period
 * must be positive and end before the fence (`ttlMs - safetyMarginMs`), else `invalid-input`
 * (INVALID_KEEPER_TIMING). `keepLease` uses it; callers check their options with it before
 * acquiring, so a bad period writes nothing.
 */
export function keeperTiming(
  ttlMs: number,
  options: Pick<KeepLeaseOptions, "renewEveryMs" | "safetyMarginMs"> = {},
): { renewEveryMs: number; marginMs: number } {
  const renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(ttlMs / 3));
  const marginMs = options.safetyMarginMs ?? Math.min(1000, Math.floor(ttlMs / 4));
  if (
    !(renewEveryMs > 0) ||
    !(marginMs >= 0) ||
    marginMs >= ttlMs ||
    renewEveryMs >= ttlMs - marginMs
  ) {
    throw holdfastError(
      "invalid-input",
      "keepLease",
      `renewEveryMs (${renewEveryMs}) must be positive and shorter than ttlMs - safetyMarginMs (${ttlMs - marginMs})`,
      { code: "INVALID_KEEPER_TIMING" },
    );
  }
  return { renewEveryMs, marginMs };
}

/**
 * Renews `lease` in the background on the context's clock and sleep, and fences itself on
 * its own timer: when no renewal has succeeded by `writtenAtLocalMs + ttlMs − margin`,
 * `signal` aborts. The fence signal is handed to the resolver, so a re-issue in flight
 * cannot postpone the fence (docs/protocol.md §4, C10). A refused or lost renewal aborts at once,
 * lost including a lease removed or rewritten by anyone without its secret (LEASE_LOST,
 * docs/protocol.md §4.2). The keeper's `lease` carries the secret: keep it private.
 */
export function keepLease(
  ctx: ProtocolContext,
  lease: Lease,
  options: KeepLeaseOptions = {},
): LeaseKeeper {
  const { renewEveryMs, marginMs } = keeperTiming(lease.ttlMs, options);

  const fence = new AbortController();
  const stopper = new AbortController();
  let current = lease;
  let deadlineMs = lease.writtenAtLocalMs + lease.ttlMs - marginMs;

  const fenceWith = (reason: unknown) => {
    if (!fence.signal.aborted) fence.abort(reason);
  };

  const fenceLoop = async () => {
    while (!stopper.signal.aborted && !fence.signal.aborted) {
      const wait = deadlineMs - ctx.clock.now();
      if (wait <= 0) {
        fenceWith(
          holdfastError("aborted", "keepLease", `lease ${lease.leaseId} was not renewed in time`, {
            key: lease.key,
            code: "LEASE_FENCED",
            hint: "protection may have ended: stop reading this version",
          }),
        );
        return;
      }
      try {
        await ctx.sleep(wait, AbortSignal.any([stopper.signal, fence.signal]));
      } catch {
        return;
      }
    }
  };

  const renewLoop = async () => {
    const stopOrFence = AbortSignal.any([stopper.signal, fence.signal]);
    while (!stopOrFence.aborted) {
      try {
        await ctx.sleep(renewEveryMs, stopOrFence);
      } catch {
        return;
      }
      try {
        // The fence signal stops the resolver's re-issues; a renewal cannot outlive it.
        const renewed = await renewLease(ctx, current, { signal: stopOrFence });
        if (fence.signal.aborted || stopper.signal.aborted) return;
        current = renewed;
        deadlineMs = renewed.writtenAtLocalMs + renewed.ttlMs - marginMs;
        options.onRenew?.(renewed);
      } catch (error) {
        options.onError?.(error);
        // Refused (sealed/committed) or lost: no renewal can succeed any more.
        if (isHoldfastError(error, "refused", "not-found")) {
          fenceWith(error);
          return;
        }
        // Anything else (lost answers, unresolved): try again until the fence.
      }
    }
  };

  const loops = Promise.all([fenceLoop(), renewLoop()]);
  return {
    signal: fence.signal,
    get lease() {
      return current;
    },
    get deadlineMs() {
      return deadlineMs;
    },
    async stop() {
      stopper.abort();
      await loops;
    },
  };
}
