/** A precondition on a put: create-only, or compare-and-swap against an ETag. */
export type Precondition = { readonly ifNoneMatch: "*" } | { readonly ifMatch: string };

/** What a listing or head reports about one object. ETags are opaque: compare them only for equality. */
export interface ObjectMeta {
  readonly key: string;
  readonly etag: string;
  /** Store-assigned modification time (storage time), at the store's precision. */
  readonly lastModified: Date;
  readonly size: number;
}

/** An object's bytes with its metadata. */
export interface GetResult extends ObjectMeta {
  readonly body: Uint8Array;
}

/** Options of `put`. Conditional puts go through the resolver (`putIfAbsent`/`putIfMatch`), never straight to a store (C9). */
export interface PutOptions {
  readonly precondition?: Precondition | undefined;
  readonly signal?: AbortSignal | undefined;
  /**
   * `false`: the caller does not need this write to survive a crash of the machine that
   * holds the data (power loss, kernel crash). The write stays atomic and visible to every
   * reader at once; only waiting for its durability may be skipped. A backend whose writes
   * are durable when they answer (every object store) ignores it; the local backend skips
   * the folder sync that makes the file's name durable. Protocol code passes it only for
   * writes whose loss looks like a crash before them (docs/protocol.md §5.10).
   * @default true
   */
  readonly durable?: boolean | undefined;
}

/** What a successful `put` answers. */
export interface PutResult {
  /** ETag of the object this put wrote (same form `get`/`head`/`list` return and `ifMatch` accepts). */
  readonly etag: string;
}

/** Options of `delete`. */
export interface DeleteOptions {
  /** Delete only if the object is at this ETag. Only on stores with `atomicConditionalDelete`. */
  readonly ifMatch?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** As {@link PutOptions.durable}: `false` lets a local store skip the folder sync. @default true */
  readonly durable?: boolean | undefined;
}

export interface DeleteManyOptions {
  readonly signal?: AbortSignal | undefined;
  /**
   * The caller states that every key of the batch names a create-only object that nobody
   * writes by compare-and-swap or deletes by if-match (data files and manifests,
   * docs/protocol.md §1). A backend whose unconditional deletes take a per-key lock only to
   * exclude a compare-and-swap that has compared (local: R3) may then unlink without it.
   * Deletes stay unconditional and as durable as without it. @default false
   */
  readonly createOnly?: boolean | undefined;
}

/** Per-key outcome of a batch delete. */
export interface DeleteManyResult {
  /** Keys the store reports deleted (missing keys count as deleted: deletion is idempotent). */
  readonly deleted: string[];
  /** Keys that failed, each with a typed error. */
  readonly failed: { key: string; error: import("./errors.js").HoldfastError }[];
}

/** Options of one `list` page. */
export interface ListOptions {
  /** Opaque continuation token from the previous page. */
  readonly pageToken?: string | undefined;
  /** List keys strictly after this key (lexicographic). */
  readonly startAfter?: string | undefined;
  /** Upper bound on keys per page; backends may return fewer. */
  readonly pageSize?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** One page of a listing; pass `nextPageToken` back for the next. */
export interface ListPage {
  /** Objects in lexicographic key order. */
  readonly objects: ObjectMeta[];
  readonly nextPageToken?: string | undefined;
}

/**
 * How a backend's client sends a request:
 * - `single-attempt`: each request is sent once; the resolver is the only re-issuer.
 * - `repeating`: the SDK retries by itself, so an answer may follow an earlier copy that applied.
 * - `completes-before-answer`: a local store whose put finishes before it answers, so an error is a refusal.
 */
export type RequestMode = "single-attempt" | "repeating" | "completes-before-answer";

/** What a backend declares about itself. Protocol code reads these; it never guesses. */
export interface StoreCapabilities {
  /** Compare-and-swap (`ifMatch` put) is atomic. Without it, reference mutation is refused. */
  readonly atomicConditionalUpdate: boolean;
  /** `delete({ ifMatch })` is honoured atomically. RGW ignores it: false there. */
  readonly atomicConditionalDelete: boolean;
  /** Coarsest timestamp precision the store reports in any answer, in ms (1000 for HTTP Last-Modified). */
  readonly timestampPrecisionMs: number;
  /** Most keys one `deleteMany` request may carry (S3 1000, Azure 256). */
  readonly maxBatchDelete: number;
  readonly requestMode: RequestMode;
  /** Rewriting identical bytes keeps the ETag (S3/RGW content MD5). Fencing writes must change bytes. */
  readonly etagIsContentHash: boolean;
}

/**
 * The backend contract. Every method throws only `HoldfastError`s.
 * `get`/`head` return `null` for an absent key; unconditional `delete` of an absent key succeeds.
 */
export interface ObjectStore {
  /** Short backend name, e.g. `memory`, `local`, `s3`, `azure`. */
  readonly backend: string;
  /** A printable location without credentials, e.g. `s3://bucket/prefix`. */
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null>;
  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null>;
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult>;
  delete(key: string, options?: DeleteOptions): Promise<void>;
  deleteMany(keys: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult>;
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
}
