import { holdfastError, type ObjectStore } from "@holdfast/conditional-store";
import type { TaskPool } from "./pool.js";

/** Collects keys and deletes them in backend-sized batches through the pool. */
export class DeleteBatcher {
  #keys: string[] = [];
  #deleted = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly pool: TaskPool,
    private readonly size: number,
    private readonly dryRun: boolean,
  ) {}

  async add(key: string): Promise<void> {
    this.#keys.push(key);
    if (this.#keys.length >= this.size) await this.#send();
  }

  /** Sends what is queued; resolves to the number deleted once the pool has drained. */
  async flush(): Promise<number> {
    if (this.#keys.length > 0) await this.#send();
    await this.pool.drain();
    return this.#deleted;
  }

  async #send(): Promise<void> {
    const batch = this.#keys;
    this.#keys = [];
    if (this.dryRun) {
      this.#deleted += batch.length;
      return;
    }
    await this.pool.run(async () => {
      const result = await this.store.deleteMany(batch);
      this.#deleted += result.deleted.length;
      if (result.failed.length > 0) {
        const first = result.failed[0]!;
        throw holdfastError("ambiguous", "deleteMany", `${result.failed.length} deletions failed`, {
          key: first.key,
          cause: first.error,
          hint: "re-run cleanup: committed retirement resumes where it stopped",
        });
      }
    });
  }
}
