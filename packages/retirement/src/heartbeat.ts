import { realSleep, type Sleep } from "@holdfast/conditional-store";
import type { RetirementContext } from "./context.js";
import { type RetirementHandle, renewRetirement } from "./machine.js";

/**
 * A record this process owns, shared by the main flow and its heartbeat: every move
 * (transition or renewal) is serialized on the latest handle, so the two never race
 * each other's if-match.
 */
export class HeldRecord {
  #handle: RetirementHandle;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly ctx: RetirementContext,
    handle: RetirementHandle,
  ) {
    this.#handle = handle;
  }

  /** The record as this process last wrote it. */
  get handle(): RetirementHandle {
    return this.#handle;
  }

  /** Runs `move` on the latest handle after any renewal in flight; the result becomes the handle. */
  update(move: (handle: RetirementHandle) => Promise<RetirementHandle>): Promise<RetirementHandle> {
    const next = this.#chain.then(async () => {
      this.#handle = await move(this.#handle);
      return this.#handle;
    });
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Proves the owner alive: an if-match rewrite with fresh bytes (same state), so the
   * record's Last-Modified moves and acquirers and recovery keep treating it as owned.
   * Only pre-commit records are renewed. A fenced record throws `RetirementFenced`.
   */
  renew(): Promise<RetirementHandle> {
    return this.update(async (handle) => {
      const { state } = handle.record;
      if (state !== "draining" && state !== "sealed") return handle;
      return renewRetirement(this.ctx, handle);
    });
  }
}

export interface HeartbeatOptions {
  /** Pause between beats; a third of the shortest bound it keeps alive. */
  readonly everyMs: number;
  /** What one beat renews. Its errors go to `onError`; the beat goes on. */
  readonly beat: () => Promise<void>;
  readonly onError?: ((error: unknown) => void) | undefined;
  /** @default realSleep (host timers: a beat is a local timer, never compared across hosts) */
  readonly sleep?: Sleep | undefined;
}

/** A running heartbeat; `stop` ends it and waits for a beat in flight. */
export interface Heartbeat {
  stop(): Promise<void>;
}

/**
 * Calls `beat` every `everyMs` until stopped: a cleanup renews its lock and its pre-commit
 * record with it, so a crashed cleaner's record blocks acquisitions for at most one
 * ownership bound (docs/protocol.md §5.2).
 */
export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const stopper = new AbortController();
  const sleep = options.sleep ?? realSleep;
  const loop = (async () => {
    while (!stopper.signal.aborted) {
      try {
        await sleep(options.everyMs, stopper.signal);
      } catch {
        return; // stopped
      }
      if (stopper.signal.aborted) return;
      try {
        await options.beat();
      } catch (error) {
        options.onError?.(error);
      }
    }
  })();
  return {
    async stop() {
      stopper.abort();
      await loop;
    },
  };
}
