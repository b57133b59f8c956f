import type { Clock, Sleep } from "../clock.js";

/** A {@link Sleep} that records each pause and returns at once; see {@link recordingSleep}. */
export interface RecordingSleep extends Sleep {
  /** Every pause requested, in ms, in order (aborted ones included). */
  readonly pauses: number[];
}

/**
 * A Sleep for resolver tests: records the pauses, waits for none, and rejects with the
 * signal's reason when the signal is (or becomes, inside `onPause`) aborted.
 * `onPause(ms, index)` runs at each pause, e.g. to fire a fence mid-pause.
 */
export function recordingSleep(onPause?: (ms: number, index: number) => void): RecordingSleep {
  const pauses: number[] = [];
  const sleep = async (ms: number, signal?: AbortSignal): Promise<void> => {
    pauses.push(ms);
    if (signal?.aborted) throw signal.reason;
    onPause?.(ms, pauses.length - 1);
    await Promise.resolve();
    if (signal?.aborted) throw signal.reason;
  };
  return Object.assign(sleep, { pauses });
}

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly resolve: () => void;
}

/**
 * Deterministic time for tests: a `Clock` that only moves on `advance`, and a `sleep`
 * whose timers fire in order as time passes them. Abortable like `realSleep`.
 */
export class FakeTime implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers: Timer[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  /** Number of sleeps waiting for time to pass. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** A Sleep bound to this time. */
  readonly sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.#timers.indexOf(timer);
        if (i >= 0) this.#timers.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#timers.push(timer);
    });

  /**
   * Moves time forward by `ms`, firing due timers in order and letting the code they
   * wake run (a few macrotask turns) before the next fires.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      const due = this.#timers
        .filter((t) => t.at <= end)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.#timers.splice(this.#timers.indexOf(due), 1);
      this.#now = Math.max(this.#now, due.at);
      due.resolve();
    }
    this.#now = end;
    await settle();
  }

  /** Sets the clock (forward or back) without firing timers, e.g. to model clock skew. */
  set(ms: number): void {
    this.#now = ms;
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise<void>((r) => setImmediate(r));
}
