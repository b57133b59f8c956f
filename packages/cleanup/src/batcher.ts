import {
  type HoldfastErrorKind,
  holdfastError,
  isHoldfastError,
  type ObjectStore,
} from "@holdfast/conditional-store";
import type { TaskPool } from "./pool.js";
import type { DeleteRate } from "./rate.js";

export interface BatcherOptions {
  /**
   * Every key is a create-only object nobody compare-and-swaps (data files, manifests,
   * docs/protocol.md §1): the store may delete without its per-key locks
   * (`DeleteManyOptions.createOnly`). Never for leases, records, hints or intents.
   */
  readonly createOnly?: boolean | undefined;
  /** The run's delete rate: each batch reserves its keys' share before it is sent. */
  readonly rate?: DeleteRate | undefined;
}

/** Collects keys and deletes them in backend-sized batches through the pool. */
export class DeleteBatcher {
  #keys: string[] = [];
  #deleted = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly pool: TaskPool,
    private readonly size: number,
    private readonly dryRun: boolean,
    /** Called with each batch's count of deleted keys (progress; observation only). */
    private readonly onDeleted: (count: number) => void = () => {},
    private readonly options: BatcherOptions = {},
  ) {}

  async add(key: string): Promise<void> {
    this.#keys.push(key);
    if (this.#keys.length >= this.size) await this.#send();
  }

  /**
   * Queues every key, in order, sending each full batch as it fills. One call for a
   * step's keys: a caller that awaited `add` per key was resumed once per key, which made
   * its whole body hot for the optimizing compiler.
   */
  async addAll(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      this.#keys.push(key);
      if (this.#keys.length >= this.size) await this.#send();
    }
  }

  /** Sends what is queued; resolves to the number deleted once the pool has drained. */
  async flush(): Promise<number> {
    await this.sendQueued();
    await this.pool.drain();
    return this.#deleted;
  }

  /**
   * Sends what is queued into the pool without waiting for it to drain: the batches go on
   * while the caller goes on; {@link deleted} counts them once the pool has drained.
   */
  async sendQueued(): Promise<void> {
    if (this.#keys.length > 0) await this.#send();
  }

  /** Keys deleted by the batches answered so far. */
  get deleted(): number {
    return this.#deleted;
  }

  async #send(): Promise<void> {
    const batch = this.#keys;
    this.#keys = [];
    if (this.dryRun) {
      this.#deleted += batch.length;
      this.onDeleted(batch.length);
      return;
    }
    await this.options.rate?.take(batch.length);
    await this.pool.run(async () => {
      const result = await this.store.deleteMany(
        batch,
        this.options.createOnly ? { createOnly: true } : undefined,
      );
      this.#deleted += result.deleted.length;
      this.onDeleted(result.deleted.length);
      if (result.failed.length > 0) throw deletionsFailed(result.failed);
    });
  }
}

/**
 * One error for a batch with failures, named after the first: its kind when every
 * failure is definite (a read-only or forbidden store is `refused`/`auth`, not an unknown
 * outcome), `ambiguous` as soon as one outcome is unknown; its code (EROFS, EACCES, ...),
 * key and message in ours, the first failure as `cause`.
 */
function deletionsFailed(failed: readonly { key: string; error: unknown }[]) {
  const first = failed[0]!;
  const unknown = failed.some((f) => !isHoldfastError(f.error) || isUnknownKind(f.error.kind));
  const kind: HoldfastErrorKind =
    unknown || !isHoldfastError(first.error) ? "ambiguous" : first.error.kind;
  const why = first.error instanceof Error ? first.error.message : String(first.error);
  return holdfastError(
    kind,
    "deleteMany",
    `${failed.length} deletions failed; first: ${first.key}: ${why}`,
    {
      key: first.key,
      code: isHoldfastError(first.error) ? first.error.code : undefined,
      cause: first.error,
      hint:
        kind === "ambiguous"
          ? "re-run cleanup: committed retirement resumes where it stopped"
          : "fix the cause (docs/operations.md), then re-run cleanup: committed retirement resumes where it stopped",
    },
  );
}

function isUnknownKind(kind: HoldfastErrorKind): boolean {
  return kind === "ambiguous" || kind === "unresolved" || kind === "in-flight";
}
