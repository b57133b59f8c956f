import type { Clock } from "@holdfast/conditional-store";
import type { CleanupPhase, CleanupProgress } from "./types.js";

/** A progress event and when it was seen (milliseconds of the caller's injected clock). */
export interface TimedProgress {
  readonly at: number;
  readonly progress: CleanupProgress;
}

/** What an operator reads: phase, done, left, rate and ETA of the current phase. */
export interface ProgressEstimate {
  readonly phase: CleanupPhase;
  readonly done: number;
  /** Unknown (`undefined`) until the phase knows its total. */
  readonly total: number | undefined;
  readonly left: number | undefined;
  /** Items per second since the phase's first event; unknown until time has passed. */
  readonly ratePerSec: number | undefined;
  /** Milliseconds until `left` reaches 0 at `ratePerSec`; 0 when nothing is left; else unknown. */
  readonly etaMs: number | undefined;
  /** Milliseconds since the phase's first event. */
  readonly elapsedMs: number;
}

/**
 * The one estimate of the CLI and the server (pure: the clock is the caller's). Uses the
 * first and the last of `events` that belong to the last event's phase: the rate is the
 * items done between the phase's first event and its last, over the time from the first
 * event to `now`; `left` and the ETA need a total. `undefined` for no events.
 */
export function progressEstimate(
  events: readonly TimedProgress[],
  now: number,
): ProgressEstimate | undefined {
  const last = events.at(-1);
  if (!last) return undefined;
  const { phase, done, total } = last.progress;
  let first = last;
  for (let i = events.length - 1; i >= 0 && events[i]!.progress.phase === phase; i--) {
    first = events[i]!;
  }
  const elapsedMs = Math.max(0, now - first.at);
  const progressed = done - first.progress.done;
  const ratePerSec = elapsedMs > 0 && progressed > 0 ? (progressed * 1000) / elapsedMs : undefined;
  const left = total === undefined ? undefined : Math.max(0, total - done);
  const etaMs =
    left === undefined
      ? undefined
      : left === 0
        ? 0
        : ratePerSec === undefined
          ? undefined
          : Math.ceil((left * 1000) / ratePerSec);
  return { phase, done, total, left, ratePerSec, etaMs, elapsedMs };
}

/**
 * Keeps what {@link progressEstimate} needs of a run's events (its phase's first event and
 * the latest: memory flat however long the run), stamped with an injected clock.
 */
export class ProgressTracker {
  #first: TimedProgress | undefined;
  #last: TimedProgress | undefined;

  constructor(private readonly clock: Clock) {}

  /** Records one event; returns the estimate as of now. */
  record(progress: CleanupProgress): ProgressEstimate {
    const event = { at: this.clock.now(), progress };
    if (this.#first?.progress.phase !== progress.phase) this.#first = event;
    this.#last = event;
    return this.estimate()!;
  }

  /** The tracker's clock reading. */
  now(): number {
    return this.clock.now();
  }

  /** The estimate as of the clock's now; `undefined` before the first event. */
  estimate(): ProgressEstimate | undefined {
    if (!this.#first || !this.#last) return undefined;
    const events = this.#first === this.#last ? [this.#last] : [this.#first, this.#last];
    return progressEstimate(events, this.clock.now());
  }
}
