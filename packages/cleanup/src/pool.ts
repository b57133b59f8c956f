/**
 * A small semaphore: at most `limit` tasks run at once; `run` waits for a free slot, so a
 * producer that awaits it cannot queue unbounded work (memory stays flat).
 */
export class TaskPool {
  readonly #limit: number;
  #running = 0;
  #waiters: (() => void)[] = [];
  #pending = new Set<Promise<void>>();
  #error: unknown;
  #failed = false;

  constructor(limit: number) {
    this.#limit = Math.max(1, Math.floor(limit));
  }

  /** Starts `task` once a slot is free; rethrows the first failure of any earlier task. */
  async run(task: () => Promise<void>): Promise<void> {
    this.#throwIfFailed();
    while (this.#running >= this.#limit) {
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
      this.#throwIfFailed();
    }
    this.#running += 1;
    const done = task()
      .catch((error: unknown) => {
        if (!this.#failed) {
          this.#failed = true;
          this.#error = error;
        }
      })
      .finally(() => {
        this.#running -= 1;
        this.#pending.delete(done);
        this.#waiters.shift()?.();
      });
    this.#pending.add(done);
  }

  /** Waits for every started task; rethrows the first failure. */
  async drain(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
    this.#throwIfFailed();
  }

  #throwIfFailed(): void {
    if (this.#failed) throw this.#error;
  }
}
