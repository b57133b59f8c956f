/**
 * A template holdfast backend: copy this file to start a backend for another store.
 *
 * `MapService` stands in for your store's SDK client (it keeps objects in a Map and answers
 * like an HTTP object store: status codes, ETags, pages). Replace it with the real client
 * and keep the rest of the shape: a name constant, an options interface with defaults,
 * one class implementing `ObjectStore`, every failure mapped to a `HoldfastError` in one
 * function, helpers after `// --- utils ---`. Only public APIs of
 * `@holdfast/conditional-store` are used; `test/contract.test.ts` runs the shared suite.
 */
import {
  compareKeys,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
  type ObjectStore,
  type Precondition,
  type PutOptions,
  type PutResult,
  type StorageOperation,
  type StoreCapabilities,
  validateKey,
  validatePrefix,
} from "@holdfast/conditional-store";

/** `backend` name of {@link MapStore}. */
export const MAP_BACKEND = "map";

/** Options of {@link createMapStore}. */
export interface MapStoreOptions {
  /** The client the store sends requests to (your SDK client). @default new MapService() */
  service?: MapService | undefined;
  /** Folder inside the service under which this store keeps its objects. @default "" */
  prefix?: string | undefined;
  /** Most keys per list page the service returns. @default 1000 */
  pageSize?: number | undefined;
}

/** Creates a {@link MapStore}. Validates options before any request is sent. */
export function createMapStore(options: MapStoreOptions = {}): MapStore {
  const prefix = options.prefix ?? "";
  if (prefix !== "") validatePrefix(prefix.endsWith("/") ? prefix : `${prefix}/`, "open");
  const pageSize = options.pageSize ?? 1000;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw holdfastError(
      "invalid-input",
      "open",
      `pageSize must be a positive integer: ${pageSize}`,
    );
  }
  return new MapStore(
    options.service ?? new MapService(),
    prefix === "" ? "" : `${prefix.replace(/\/+$/, "")}/`,
    pageSize,
  );
}

/** An `ObjectStore` over a {@link MapService}. Every method throws only `HoldfastError`s. */
export class MapStore implements ObjectStore {
  readonly backend = MAP_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities = {
    // Declare what the store really does; the contract suite checks each claim.
    atomicConditionalUpdate: true,
    atomicConditionalDelete: true,
    timestampPrecisionMs: 1,
    maxBatchDelete: 100,
    requestMode: "single-attempt",
    etagIsContentHash: false,
  };

  constructor(
    readonly service: MapService,
    readonly prefix: string,
    readonly pageSize: number,
  ) {
    this.location = `map://${prefix}`;
  }

  async get(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<GetResult | null> {
    validateKey(key, "get");
    return this.#send("get", key, undefined, options.signal, () => {
      const object = this.service.get(this.prefix + key);
      return object === undefined ? null : { ...metaOf(key, object), body: object.body.slice() };
    });
  }

  async head(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<ObjectMeta | null> {
    validateKey(key, "head");
    return this.#send("head", key, undefined, options.signal, () => {
      const object = this.service.get(this.prefix + key);
      return object === undefined ? null : metaOf(key, object);
    });
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    validateKey(key, "put");
    const precondition = options.precondition;
    return this.#send("put", key, precondition, options.signal, () => ({
      etag: this.service.put(this.prefix + key, body, precondition),
    }));
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    validateKey(key, "delete");
    const precondition = options.ifMatch === undefined ? undefined : { ifMatch: options.ifMatch };
    return this.#send("delete", key, precondition, options.signal, () => {
      this.service.delete(this.prefix + key, options.ifMatch);
    });
  }

  async deleteMany(
    keys: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<DeleteManyResult> {
    // Bad input is refused before any request: every key, and the batch size.
    for (const key of keys) validateKey(key, "deleteMany");
    if (keys.length > this.capabilities.maxBatchDelete) {
      throw holdfastError(
        "invalid-input",
        "deleteMany",
        `batch of ${keys.length} exceeds ${this.capabilities.maxBatchDelete}`,
      );
    }
    const answers = await this.#send("deleteMany", undefined, undefined, options.signal, () =>
      this.service.deleteBatch(keys.map((key) => this.prefix + key)),
    );
    // The service answers per key; report each failure with its key, never the whole batch.
    const result: DeleteManyResult = { deleted: [], failed: [] };
    keys.forEach((key, i) => {
      const failure = answers[i];
      if (failure === undefined) result.deleted.push(key);
      else
        result.failed.push({ key, error: toHoldfastError(failure, "deleteMany", key, undefined) });
    });
    return result;
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix, "list");
    const after = options.pageToken ?? options.startAfter;
    const limit = Math.min(options.pageSize ?? this.pageSize, this.pageSize);
    return this.#send("list", undefined, undefined, options.signal, () => {
      const page = this.service.list(
        this.prefix + prefix,
        after === undefined ? undefined : this.prefix + after,
        limit,
      );
      const objects = page.objects.map((o) => metaOf(o.key.slice(this.prefix.length), o));
      const last = objects.at(-1);
      return page.truncated && last !== undefined
        ? { objects, nextPageToken: last.key }
        : { objects };
    });
  }

  /** Sends one request: refuses an aborted signal before sending, maps every failure. */
  async #send<T>(
    operation: StorageOperation,
    key: string | undefined,
    precondition: Precondition | undefined,
    signal: AbortSignal | undefined,
    request: () => T,
  ): Promise<T> {
    if (signal?.aborted) {
      throw holdfastError("aborted", operation, `${operation} aborted before it was sent`, {
        key,
        cause: signal.reason,
      });
    }
    try {
      return request();
    } catch (error) {
      throw toHoldfastError(error, operation, key, precondition);
    }
  }
}

/** The one place service failures become holdfast's error kinds. */
export function toHoldfastError(
  error: unknown,
  operation: StorageOperation,
  key: string | undefined,
  precondition: Precondition | undefined,
): HoldfastError {
  if (isHoldfastError(error)) return error;
  if (error instanceof ServiceError) {
    const fields = { key, precondition, status: error.status, code: error.code, cause: error };
    switch (error.status) {
      case 412:
        return holdfastError("conflict", operation, `precondition failed on ${key}`, fields);
      case 404:
        return holdfastError("not-found", operation, `not found: ${key}`, fields);
      case 423:
        // The service refused before changing anything (like a blob under an Azure lease).
        return holdfastError("refused", operation, `${key} is locked`, fields);
    }
  }
  // Anything else (timeouts, resets, 5xx): the request may or may not have applied.
  return holdfastError("ambiguous", operation, `${operation} failed: ${String(error)}`, {
    key,
    precondition,
    cause: error,
  });
}

// --- utils ---

function metaOf(key: string, object: StoredObject): ObjectMeta {
  return {
    key,
    etag: object.etag,
    lastModified: new Date(object.lastModified),
    size: object.body.byteLength,
  };
}

/** An object as the service keeps it. */
export interface StoredObject {
  readonly key: string;
  readonly body: Uint8Array;
  readonly etag: string;
  readonly lastModified: number;
}

/** A failure answered by the service (an HTTP status and the service's own code). */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(`${status} ${code}`);
  }
}

/**
 * The stand-in for a store's SDK client: an in-process object service with conditional
 * puts and deletes, per-key batch delete answers and byte-ordered pages.
 */
export class MapService {
  readonly #objects = new Map<string, StoredObject>();
  readonly #held = new Set<string>();
  #writes = 0;

  get(key: string): StoredObject | undefined {
    return this.#objects.get(key);
  }

  put(key: string, body: Uint8Array, precondition: Precondition | undefined): string {
    const current = this.#objects.get(key);
    if (precondition !== undefined && "ifNoneMatch" in precondition && current !== undefined) {
      throw new ServiceError(412, "AlreadyExists");
    }
    if (
      precondition !== undefined &&
      "ifMatch" in precondition &&
      current?.etag !== precondition.ifMatch
    ) {
      throw new ServiceError(412, "ConditionNotMet");
    }
    this.#writes += 1;
    const etag = `"w${this.#writes}"`;
    this.#objects.set(key, { key, body: body.slice(), etag, lastModified: Date.now() });
    return etag;
  }

  delete(key: string, ifMatch: string | undefined): void {
    if (this.#held.has(key)) throw new ServiceError(423, "Locked");
    if (ifMatch !== undefined && this.#objects.get(key)?.etag !== ifMatch) {
      throw new ServiceError(412, "ConditionNotMet");
    }
    this.#objects.delete(key);
  }

  /** Deletes each key; answers `undefined` for a deleted (or absent) key, else its error. */
  deleteBatch(keys: readonly string[]): (ServiceError | undefined)[] {
    return keys.map((key) => {
      try {
        this.delete(key, undefined);
        return undefined;
      } catch (error) {
        return error as ServiceError;
      }
    });
  }

  list(
    prefix: string,
    after: string | undefined,
    limit: number,
  ): { objects: StoredObject[]; truncated: boolean } {
    const keys = [...this.#objects.keys()]
      .filter(
        (key) => key.startsWith(prefix) && (after === undefined || compareKeys(key, after) > 0),
      )
      .sort(compareKeys);
    return {
      objects: keys.slice(0, limit).map((key) => this.#objects.get(key)!),
      truncated: keys.length > limit,
    };
  }

  /** Makes deletes of `key` fail with 423 until {@link release} (tests: a partial batch). */
  holdKey(key: string): void {
    this.#held.add(key);
  }

  release(key: string): void {
    this.#held.delete(key);
  }
}
