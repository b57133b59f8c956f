import type { Clock, Sleep } from "@holdfast/conditional-store";

/**
 * The run's delete rate (`CleanupOptions.maxDeletesPerSecond`): every batch delete of the
 * run reserves its keys' share of time before it is sent, so the objects deleted per second
 * stay at or below the limit whatever the concurrency (S3 answers 503 SlowDown past about
 * 3,500 deletes per second and prefix). Reservations are taken in order, so a batch never
 * waits longer than the batches queued before it need. Local clock and injected sleep.
 */
export class DeleteRate {
  #next = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly perSecond: number | undefined,
    private readonly clock: Clock,
    private readonly sleep: Sleep,
  ) {}

  /** Waits until `count` more deletions fit the rate (at once when there is no limit). */
  async take(count: number, signal?: AbortSignal): Promise<void> {
    if (this.perSecond === undefined || count <= 0) return;
    const now = this.clock.now();
    const start = Math.max(now, this.#next);
    this.#next = start + (count * 1000) / this.perSecond;
    if (start > now) await this.sleep(start - now, signal);
  }
}
