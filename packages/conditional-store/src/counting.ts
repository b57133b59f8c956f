import type {
  DeleteManyOptions,
  DeleteManyResult,
  DeleteOptions,
  GetResult,
  ListOptions,
  ListPage,
  ObjectMeta,
  ObjectStore,
  PutOptions,
  PutResult,
  StoreCapabilities,
} from "./types.js";

/** The request types an `ObjectStore` serves, as counted by {@link CountingStore}. */
export type RequestType = "get" | "head" | "put" | "delete" | "deleteMany" | "list";

/** Requests sent, by type. Failed requests count too: the store saw them. */
export type RequestCounts = Record<RequestType, number>;

/** A zeroed {@link RequestCounts}. */
export function emptyRequestCounts(): RequestCounts {
  return { get: 0, head: 0, put: 0, delete: 0, deleteMany: 0, list: 0 };
}

/**
 * Forwards every request to `inner` unchanged and counts them by type, for cleanup
 * stats and benchmarks ("requests issued by type", docs/protocol.md §6). Adds no behaviour.
 */
export class CountingStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly inner: ObjectStore;
  #counts: RequestCounts = emptyRequestCounts();

  constructor(inner: ObjectStore) {
    this.inner = inner;
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  /** A snapshot of the counts so far. */
  requestCounts(): RequestCounts {
    return { ...this.#counts };
  }

  /** Sum of all counted requests. */
  totalRequests(): number {
    return Object.values(this.#counts).reduce((a, b) => a + b, 0);
  }

  /** Zeroes the counts (e.g. between benchmark phases). */
  resetCounts(): void {
    this.#counts = emptyRequestCounts();
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null> {
    this.#counts.get += 1;
    return this.inner.get(key, options);
  }

  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null> {
    this.#counts.head += 1;
    return this.inner.head(key, options);
  }

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    this.#counts.put += 1;
    return this.inner.put(key, body, options);
  }

  delete(key: string, options?: DeleteOptions): Promise<void> {
    this.#counts.delete += 1;
    return this.inner.delete(key, options);
  }

  deleteMany(keys: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult> {
    this.#counts.deleteMany += 1;
    return this.inner.deleteMany(keys, options);
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    this.#counts.list += 1;
    return this.inner.list(prefix, options);
  }
}
