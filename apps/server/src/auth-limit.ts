import type { Clock } from "@holdfast/conditional-store";

/** How many failed authentications a client address may make per window. */
export interface FailedAuthLimit {
  /** Failed authentications (an unknown or malformed bearer token) allowed per window. @default 10 */
  readonly maxFailures: number;
  /** Length of the window, in milliseconds of the injected clock. @default 60000 */
  readonly windowMs: number;
}

/** The default: 10 failed authentications per address per minute. */
export const DEFAULT_FAILED_AUTH_LIMIT: FailedAuthLimit = { maxFailures: 10, windowMs: 60_000 };

/** Addresses tracked at most; past it the entries whose window ended are dropped, then the oldest. */
const MAX_TRACKED = 100_000;

/**
 * Counts failed authentications per client address in fixed windows of the injected clock
 * (a local timer: never compared with the store's clock). Once an address reaches the limit
 * in its window, every authenticated request from it is refused until the window ends,
 * valid token or not, so a guesser learns nothing from the answers while blocked. A success
 * does not reset the count (else a guesser could interleave a token it holds).
 */
export class FailedAuthLimiter {
  readonly #windows = new Map<string, { startedAt: number; failures: number }>();

  constructor(
    private readonly limit: FailedAuthLimit,
    private readonly clock: Clock,
  ) {}

  /** Milliseconds until `address` may authenticate again; 0 when it may now. */
  blockedFor(address: string): number {
    const window = this.#current(address);
    if (!window || window.failures < this.limit.maxFailures) return 0;
    return Math.max(1, window.startedAt + this.limit.windowMs - this.clock.now());
  }

  /** Counts one failed authentication of `address`. */
  recordFailure(address: string): void {
    const window = this.#current(address);
    if (window) {
      window.failures += 1;
      return;
    }
    if (this.#windows.size >= MAX_TRACKED) this.#prune();
    this.#windows.set(address, { startedAt: this.clock.now(), failures: 1 });
  }

  // --- utils ---

  /** The address's window if it has not ended yet. */
  #current(address: string) {
    const window = this.#windows.get(address);
    if (!window) return undefined;
    if (this.clock.now() >= window.startedAt + this.limit.windowMs) {
      this.#windows.delete(address);
      return undefined;
    }
    return window;
  }

  #prune(): void {
    const now = this.clock.now();
    for (const [address, window] of this.#windows) {
      if (now >= window.startedAt + this.limit.windowMs) this.#windows.delete(address);
    }
    // Still full: drop the oldest (Map order is insertion order).
    for (const address of this.#windows.keys()) {
      if (this.#windows.size < MAX_TRACKED) break;
      this.#windows.delete(address);
    }
  }
}
