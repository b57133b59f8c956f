import { createHash } from "node:crypto";
import { type Clock, systemClock } from "./clock.js";
import { holdfastError, type StorageOperation } from "./errors.js";
import { validateKey, validatePrefix } from "./keys.js";
import type {
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

/** `backend` name of {@link MemoryStore}. */
export const MEMORY_BACKEND = "memory";

/** Options of {@link MemoryStore}; each default models an HTTP object store. */
export interface MemoryStoreOptions {
  /** Clock that stamps Last-Modified. @default systemClock */
  clock?: Clock;
  /** Last-Modified is truncated to this many ms, as HTTP stores do. @default 1000 */
  timestampPrecisionMs?: number;
  /**
   * `content-md5`: identical bytes keep the ETag (S3/RGW); `unique`: every write gets a new one (Azure).
   * @default "unique"
   */
  etagMode?: "unique" | "content-md5";
  /** Keys per list page. @default 1000 */
  pageSize?: number;
  /** @default 1000 */
  maxBatchDelete?: number;
  /** Whether conditional delete is honoured. @default true */
  conditionalDelete?: boolean;
}

interface Entry {
  body: Uint8Array;
  etag: string;
  lastModified: number;
}

/**
 * An in-memory `ObjectStore` for protocol unit tests and simulations: atomic, injectable
 * clock, configurable precision. Not a substitute for a backend's contract run.
 */
export class MemoryStore implements ObjectStore {
  readonly backend = MEMORY_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #objects = new Map<string, Entry>();
  readonly #clock: Clock;
  readonly #etagMode: "unique" | "content-md5";
  readonly #pageSize: number;
  #writes = 0;
  /** Every key, in byte order: kept sorted on insert and delete (binary search), never re-sorted. */
  readonly #sorted: string[] = [];

  constructor(options: MemoryStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#etagMode = options.etagMode ?? "unique";
    this.#pageSize = options.pageSize ?? 1000;
    this.location = "memory://";
    this.capabilities = {
      atomicConditionalUpdate: true,
      atomicConditionalDelete: options.conditionalDelete ?? true,
      timestampPrecisionMs: options.timestampPrecisionMs ?? 1000,
      maxBatchDelete: options.maxBatchDelete ?? 1000,
      requestMode: "single-attempt",
      etagIsContentHash: (options.etagMode ?? "unique") === "content-md5",
    };
  }

  async get(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<GetResult | null> {
    validateKey(key, "get");
    refuseAborted(options.signal, "get", key);
    const entry = this.#objects.get(key);
    return entry ? { ...this.#meta(key, entry), body: entry.body.slice() } : null;
  }

  async head(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<ObjectMeta | null> {
    validateKey(key, "head");
    refuseAborted(options.signal, "head", key);
    const entry = this.#objects.get(key);
    return entry ? this.#meta(key, entry) : null;
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    validateKey(key, "put");
    refuseAborted(options.signal, "put", key);
    const current = this.#objects.get(key);
    const precondition = options.precondition;
    if (precondition && "ifNoneMatch" in precondition && current) {
      throw holdfastError("conflict", "put", `object already exists: ${key}`, {
        key,
        precondition,
        status: 412,
      });
    }
    if (precondition && "ifMatch" in precondition && current?.etag !== precondition.ifMatch) {
      throw holdfastError("conflict", "put", `ETag mismatch on ${key}`, {
        key,
        precondition,
        status: 412,
      });
    }
    this.#writes += 1;
    const etag =
      this.#etagMode === "content-md5"
        ? createHash("md5").update(body).digest("hex")
        : `m${this.#writes.toString(16)}`;
    if (!current) this.#sorted.splice(firstIndexAfter(this.#sorted, key, true), 0, key);
    this.#objects.set(key, { body: body.slice(), etag, lastModified: this.#stamp() });
    return { etag };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    validateKey(key, "delete");
    refuseAborted(options.signal, "delete", key);
    if (options.ifMatch !== undefined && this.capabilities.atomicConditionalDelete) {
      if (this.#objects.get(key)?.etag !== options.ifMatch) {
        throw holdfastError("conflict", "delete", `ETag mismatch on ${key}`, {
          key,
          precondition: { ifMatch: options.ifMatch },
          status: 412,
        });
      }
    }
    this.#forget(key);
  }

  async deleteMany(
    keys: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<DeleteManyResult> {
    if (keys.length > this.capabilities.maxBatchDelete) {
      throw holdfastError(
        "invalid-input",
        "deleteMany",
        `batch of ${keys.length} exceeds ${this.capabilities.maxBatchDelete}`,
      );
    }
    for (const key of keys) validateKey(key, "deleteMany");
    refuseAborted(options.signal, "deleteMany");
    for (const key of keys) this.#forget(key);
    return { deleted: [...keys], failed: [] };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix);
    refuseAborted(options.signal, "list");
    const after = options.pageToken ?? options.startAfter ?? "";
    const limit = Math.min(options.pageSize ?? this.#pageSize, this.#pageSize);
    const sorted = this.#sorted;
    const fromPrefix = compareKeys(prefix, after) > 0;
    const from = firstIndexAfter(sorted, fromPrefix ? prefix : after, fromPrefix);
    const page: string[] = [];
    let more = false;
    for (let i = from; i < sorted.length; i += 1) {
      const key = sorted[i]!;
      // Keys sharing a prefix are contiguous in byte order: the first miss ends the range.
      if (!key.startsWith(prefix)) break;
      if (page.length === limit) {
        more = true;
        break;
      }
      page.push(key);
    }
    const objects = page.map((k) => this.#meta(k, this.#objects.get(k)!));
    const last = page.at(-1);
    return more && last !== undefined ? { objects, nextPageToken: last } : { objects };
  }

  /** Number of objects held (for tests). */
  get size(): number {
    return this.#objects.size;
  }

  /** All keys, or those starting with `prefix`, in byte order (for tests and simulations). */
  keys(prefix = ""): string[] {
    const sorted = this.#sorted;
    if (prefix === "") return sorted.slice();
    const from = firstIndexAfter(sorted, prefix, true);
    let to = from;
    while (to < sorted.length && sorted[to]!.startsWith(prefix)) to += 1;
    return sorted.slice(from, to);
  }

  /** Removes `key` from the map and the sorted index (no-op when absent). */
  #forget(key: string): void {
    if (!this.#objects.delete(key)) return;
    this.#sorted.splice(firstIndexAfter(this.#sorted, key, true), 1);
  }

  #stamp(): number {
    const p = this.capabilities.timestampPrecisionMs;
    const now = this.#clock.now();
    return Math.floor(now / p) * p;
  }

  #meta(key: string, entry: Entry): ObjectMeta {
    return {
      key,
      etag: entry.etag,
      lastModified: new Date(entry.lastModified),
      size: entry.body.byteLength,
    };
  }
}

/** A caller's signal that already fired stops the request before it changes anything. */
function refuseAborted(
  signal: AbortSignal | undefined,
  operation: StorageOperation,
  key?: string,
): void {
  if (signal?.aborted) {
    throw holdfastError("aborted", operation, `${operation} aborted by the caller`, {
      key,
      cause: signal.reason,
    });
  }
}

/** Index of the first key after `bound` (or at it, when `inclusive`) in sorted `keys`. */
function firstIndexAfter(keys: readonly string[], bound: string, inclusive: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareKeys(keys[mid]!, bound);
    if (c < 0 || (c === 0 && !inclusive)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Byte-wise (UTF-8) key order, as S3 and Azure list. UTF-8 byte order is code point order,
 * which equals UTF-16 code unit order except that a surrogate (half of a code point above
 * U+FFFF) sorts after every BMP character: compared unit by unit, no encoding.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
