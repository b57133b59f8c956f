import { holdfastError } from "./errors.js";
import { classifyFailure } from "./policy.js";
import type {
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

/**
 * A storage scope for long-lived processes (SPEC §2, C3/C4). It remembers keys whose last
 * write ended with an unknown outcome, with that write's precondition. Until the key is
 * settled only a re-issue with the same precondition is admitted; other writes are
 * refused at once. Reads are always admitted: they cannot apply anything, and a read that
 * shows the precondition no longer holds is what settles the key.
 */
export class StorageScope implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  readonly #inner: ObjectStore;
  readonly #unsettled = new Map<string, UnsettledPrecondition>();

  constructor(inner: ObjectStore) {
    this.#inner = inner;
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  /** Keys whose outcome is unknown, with the precondition that left them so. */
  unsettledKeys(): ReadonlyMap<string, UnsettledPrecondition> {
    return this.#unsettled;
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
    const precondition = options.precondition ?? null;
    this.#admit(key, precondition, "put");
    return this.#track(key, precondition, () => this.#inner.put(key, body, options));
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    this.#admit(key, undefined, "delete");
    const precondition = options.ifMatch === undefined ? null : { ifMatch: options.ifMatch };
    return this.#track(key, precondition, () => this.#inner.delete(key, options));
  }

  async deleteMany(
    keys: readonly string[],
    options?: { signal?: AbortSignal | undefined },
  ): Promise<DeleteManyResult> {
    for (const key of keys) this.#admit(key, undefined, "deleteMany");
    return this.#inner.deleteMany(keys, options);
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#inner.list(prefix, options);
  }

  /** `undefined` precondition: a request that is never a re-issue of an unsettled write. */
  #admit(key: string, precondition: UnsettledPrecondition | undefined, operation: string): void {
    if (!this.#unsettled.has(key)) return;
    const recorded = this.#unsettled.get(key) ?? null;
    if (precondition !== undefined && samePrecondition(recorded, precondition)) return;
    throw holdfastError(
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

  async #track<T>(
    key: string,
    precondition: UnsettledPrecondition,
    send: () => Promise<T>,
  ): Promise<T> {
    try {
      const result = await send();
      this.#unsettled.delete(key);
      return result;
    } catch (error) {
      const answer = classifyFailure(error, "single-attempt");
      if (answer === "refused") this.#unsettled.delete(key);
      else if (answer === "ambiguous") this.#unsettled.set(key, precondition);
      // A conflict or 409 does not settle: an earlier copy may still be in flight.
      throw error;
    }
  }

  #settleFromRead(key: string, current: ObjectMeta | null): void {
    if (!this.#unsettled.has(key)) return;
    const recorded = this.#unsettled.get(key) ?? null;
    if (recorded === null) return;
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
