import type { Clock, Sleep } from "@holdfast/conditional-store";

/** Small seeded PRNG (mulberry32): the whole simulation is replayable from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Timer {
  at: number;
  seq: number;
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal?: AbortSignal | undefined;
  onAbort?: () => void;
}

interface Gate {
  actor: string;
  label: string;
  release: () => void;
}

/**
 * A deterministic scheduler: every store request of every actor waits at a gate, and the
 * scheduler lets exactly one gate through at a time, chosen by the seeded RNG. Sleeps wait
 * on a virtual clock that advances only when no request is pending, so the interleaving of
 * requests, pauses and timeouts is a function of the seed alone.
 */
export class Scheduler {
  readonly random: () => number;
  #now: number;
  #seq = 0;
  readonly #timers: Timer[] = [];
  readonly #gates: Gate[] = [];
  readonly #stepWaiters: { at: number; resolve: () => void }[] = [];
  steps = 0;
  /** Optional trace sink (HOLDFAST_SIM_TRACE): one line per released request and timer. */
  trace: ((line: string) => void) | undefined;

  constructor(seed: number, startMs = 1_800_000_000_000) {
    this.random = seededRandom(seed);
    this.#now = startMs;
  }

  readonly clock: Clock = { now: () => this.#now };

  readonly sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer: Timer = {
        at: this.#now + Math.max(0, ms),
        seq: this.#seq++,
        resolve,
        reject,
        signal,
      };
      if (signal) {
        timer.onAbort = () => {
          const i = this.#timers.indexOf(timer);
          if (i >= 0) this.#timers.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", timer.onAbort, { once: true });
      }
      this.#timers.push(timer);
    });

  /** Called by the gated store before each request: resolves when the scheduler picks it. */
  gate(actor: string, label: string): Promise<void> {
    return new Promise<void>((release) => this.#gates.push({ actor, label, release }));
  }

  /**
   * Resolves once `n` more steps have run (an actor that wants to act in the middle of
   * another actor's burst of requests, not before or after it).
   */
  waitSteps(n: number): Promise<void> {
    return new Promise<void>((resolve) => this.#stepWaiters.push({ at: this.steps + n, resolve }));
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  int(min: number, maxInclusive: number): number {
    return min + Math.floor(this.random() * (maxInclusive - min + 1));
  }

  /** Advances the virtual clock by `ms` (firing due timers in order). */
  advance(ms: number): void {
    this.#fireUntil(this.#now + ms);
  }

  /**
   * Runs until `done()` is true: repeatedly lets all microtasks settle, then releases one
   * randomly chosen gate; when none is pending, fires the next timer. `onStep` runs after
   * every step (invariant checks).
   */
  async run(
    done: () => boolean,
    onStep: () => void | Promise<void>,
    maxSteps = 200_000,
  ): Promise<void> {
    while (!done()) {
      await settle();
      if (done()) break;
      if (this.#gates.length > 0) {
        const i = Math.floor(this.random() * this.#gates.length);
        const [gate] = this.#gates.splice(i, 1);
        this.trace?.(`step ${this.steps + 1} t=${this.#now} ${gate!.actor}: ${gate!.label}`);
        gate!.release();
      } else if (this.#timers.length > 0) {
        this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
        this.#fireUntil(this.#timers[0]!.at);
      } else {
        await settle();
        if (
          this.#gates.length === 0 &&
          this.#timers.length === 0 &&
          this.#stepWaiters.length === 0 &&
          !done()
        ) {
          throw new Error("simulation deadlock: no pending request or timer, but actors not done");
        }
      }
      this.steps += 1;
      for (let i = this.#stepWaiters.length - 1; i >= 0; i -= 1) {
        const waiter = this.#stepWaiters[i]!;
        if (waiter.at > this.steps) continue;
        this.#stepWaiters.splice(i, 1);
        waiter.resolve();
      }
      if (this.steps > maxSteps) throw new Error(`simulation exceeded ${maxSteps} steps`);
      await onStep();
    }
  }

  #fireUntil(t: number): void {
    this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.#now = Math.max(this.#now, t);
    while (this.#timers.length > 0 && this.#timers[0]!.at <= this.#now) {
      const timer = this.#timers.shift()!;
      if (timer.signal && timer.onAbort) timer.signal.removeEventListener("abort", timer.onAbort);
      timer.resolve();
    }
  }
}

/** Lets every queued microtask and immediate run. */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
