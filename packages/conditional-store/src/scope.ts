import { holdfastError } from "./errors.js";
import { classifyFailure } from "./policy.js";
import type {
  DeleteManyOptions,
  DeleteManyResult,
  DeleteOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  Precondition,
  PutOptions,
  PutResult,
} from "./types.js";

/** The precondition that left a key unsettled; `null` for an unconditional request. */
export type UnsettledPrecondition = Precondition | null;

/** What left a key unsettled: the kind of write and its precondition. */
interface UnsettledWrite {
  readonly operation: "put" | "delete";
  readonly precondition: UnsettledPrecondition;
}

/**
 * A storage scope for long-lived processes (docs/guarantees.md, C3/C4). It remembers keys whose last
 * write ended with an unknown outcome, with that write's precondition. Until the key is
 * settled only a re-issue (same operation, same precondition) is admitted; other writes
 * are refused at once. A refused request leaves the key as it found it: settled stays
 * settled, and an earlier copy's unknown outcome stays unknown. Only a re-issue's success,
 * or a read showing the precondition no longer holds, settles a key; a conflict or 409
 * does not (it may answer an earlier copy still in flight). Reads are always admitted.
 */
export class StorageScope implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  readonly #inner: ObjectStore;
  readonly #unsettled = new Map<string, UnsettledWrite>();

  constructor(inner: ObjectStore) {
    this.#inner = inner;
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  /** Keys whose outcome is unknown, with the precondition that left them so. */
  unsettledKeys(): ReadonlyMap<string, UnsettledPrecondition> {
    return new Map([...this.#unsettled].map(([key, write]) => [key, write.precondition]));
  }

  /** True while `key` has a write whose outcome is unknown. */
  isUnsettled(key: string): boolean {
    return this.#unsettled.has(key);
  }

  async get(
    key: string,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<GetResult | null> {
    const result = await this.#inner.get(key, options);
    this.#settleFromRead(key, result);
    return result;
  }

  async head(
    key: string,
    options?: { signal?: AbortSignal | undefined },
  ): Promise<ObjectMeta | null> {
    const result = await this.#inner.head(key, options);
    this.#settleFromRead(key, result);
    return result;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const write: UnsettledWrite = { operation: "put", precondition: options.precondition ?? null };
    this.#admit(key, write);
    return this.#track(key, write, () => this.#inner.put(key, body, options));
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    const write: UnsettledWrite = {
      operation: "delete",
      precondition: options.ifMatch === undefined ? null : { ifMatch: options.ifMatch },
    };
    this.#admit(key, write);
    return this.#track(key, write, () => this.#inner.delete(key, options));
  }

  /** Unsettled keys are reported as refused in `failed`; the rest are forwarded. */
  async deleteMany(
    keys: readonly string[],
    options?: DeleteManyOptions,
  ): Promise<DeleteManyResult> {
    const refused: DeleteManyResult["failed"] = [];
    const admitted: string[] = [];
    for (const key of keys) {
      if (this.#unsettled.has(key)) refused.push({ key, error: this.#refusal(key, "deleteMany") });
      else admitted.push(key);
    }
    if (admitted.length === 0) return { deleted: [], failed: refused };
    const mode = this.#inner.capabilities.requestMode;
    let result: DeleteManyResult;
    try {
      result = await this.#inner.deleteMany(admitted, options);
    } catch (error) {
      if (classifyFailure(error, mode) === "ambiguous") {
        for (const key of admitted)
          this.#unsettled.set(key, { operation: "delete", precondition: null });
      }
      throw error;
    }
    for (const { key, error } of result.failed) {
      if (classifyFailure(error, mode) === "ambiguous") {
        this.#unsettled.set(key, { operation: "delete", precondition: null });
      }
    }
    return { deleted: result.deleted, failed: [...result.failed, ...refused] };
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#inner.list(prefix, options);
  }

  #admit(key: string, write: UnsettledWrite): void {
    const recorded = this.#unsettled.get(key);
    if (recorded === undefined) return;
    if (
      recorded.operation === write.operation &&
      samePrecondition(recorded.precondition, write.precondition)
    ) {
      return;
    }
    throw this.#refusal(key, write.operation);
  }

  #refusal(key: string, operation: string) {
    return holdfastError(
      "refused",
      operation,
      `key ${key} is unsettled: an earlier write's outcome is unknown`,
      {
        key,
        code: "UNSETTLED_KEY",
        hint: "only a re-issue of that write, or a read showing its precondition no longer holds, settles the key",
      },
    );
  }

  async #track<T>(key: string, write: UnsettledWrite, send: () => Promise<T>): Promise<T> {
    try {
      const result = await send();
      this.#unsettled.delete(key);
      return result;
    } catch (error) {
      // Classified as the inner client sends: a repeating client's auth error may follow
      // an applied copy, so it unsettles; a local store's error never does.
      const answer = classifyFailure(error, this.#inner.capabilities.requestMode);
      if (answer === "ambiguous") this.#unsettled.set(key, write);
      // "refused": this copy did not apply; an earlier unknown copy stays recorded.
      // "conflict" / "in-flight": may answer an earlier copy still in flight; no change.
      throw error;
    }
  }

  #settleFromRead(key: string, current: ObjectMeta | null): void {
    const recorded = this.#unsettled.get(key)?.precondition;
    if (recorded === undefined || recorded === null) return;
    const stillHolds =
      "ifNoneMatch" in recorded
        ? current === null
        : current !== null && current.etag === recorded.ifMatch;
    if (!stillHolds) this.#unsettled.delete(key);
  }
}

function samePrecondition(a: UnsettledPrecondition, b: UnsettledPrecondition): boolean {
  if (a === null || b === null) return a === b;
  if ("ifNoneMatch" in a) return "ifNoneMatch" in b;
  return "ifMatch" in b && a.ifMatch === b.ifMatch;
}
