import type { IncomingHttpHeaders } from "node:http";
import {
  type Bucket,
  type File,
  type FileMetadata,
  type GetFilesOptions,
  IdempotencyStrategy,
  Storage,
  type StorageOptions,
} from "@google-cloud/storage";
import {
  compareKeys,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  holdfastError,
  type IdempotentReissueOptions,
  type ListOptions,
  type ListPage,
  MAX_KEY_BYTES,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  reissueIdempotent,
  type StorageOperation,
  type StoreCapabilities,
  validateKey,
  validatePrefix,
} from "@holdfast/conditional-store";
import pMap from "p-map";
import {
  requireDate,
  requireGeneration,
  toGenerationMatch,
  toHoldfastError,
  withAbort,
} from "./errors.js";

/** Backend name reported in `store.backend` and in error messages. */
export const GCS_BACKEND = "gcs";

/**
 * Keys one `deleteMany` call may carry. The Node client has no batch endpoint, so a batch is
 * deleted as single requests; 100 is the JSON API's limit on calls in one batch request.
 */
export const GCS_MAX_BATCH_DELETE = 100;

/** Single deletes in flight at once while a `deleteMany` batch is deleted. */
const DELETE_CONCURRENCY = 8;

/** The JSON API's limit on results per objects.list page. */
const GCS_MAX_PAGE_SIZE = 1000;

/** Authentication the client accepts besides Application Default Credentials. */
export type GcsAuthClient = NonNullable<StorageOptions["authClient"]>;

/** Retry tuning of the `"repeating"` client, as `@google-cloud/storage` names it. */
export interface GcsRetryOptions {
  /** Retries after the first attempt, at least 1 (none is `client: "single-attempt"`). @default 3 */
  maxRetries?: number | undefined;
  /** Factor by which the pause grows after each retry. @default 2 */
  retryDelayMultiplier?: number | undefined;
  /** Longest pause between retries, in seconds (at least 1: the client's first pause). @default 64 */
  maxRetryDelay?: number | undefined;
  /** Seconds after which the client stops retrying. @default 600 */
  totalTimeout?: number | undefined;
}

/** Where a GCS store lives and how its client reaches it (see the package README's options table). */
export interface GcsStoreOptions {
  /**
   * Bucket holding the store. It must exist: holdfast never creates or deletes buckets, and a
   * missing one is reported as `refused` on writes and listings.
   */
  bucket: string;
  /**
   * Folder inside the bucket; every key is stored under `<prefix>/` and listed relative to it.
   * @default "" (the bucket root)
   */
  prefix?: string | undefined;
  /**
   * JSON API endpoint, e.g. `http://127.0.0.1:4443` for fake-gcs-server. A custom endpoint is
   * reached without credentials (the client's rule for emulators).
   * @default process.env.STORAGE_EMULATOR_HOST, else Google's endpoint with Application Default Credentials
   */
  endpoint?: string | undefined;
  /**
   * Google Cloud project sent with requests that need one (holdfast's object requests do not).
   * @default the project of the Application Default Credentials, or process.env.GOOGLE_CLOUD_PROJECT
   */
  projectId?: string | undefined;
  /**
   * Service-account key file instead of Application Default Credentials.
   * @default undefined (ADC: GOOGLE_APPLICATION_CREDENTIALS, gcloud's user credentials, the metadata server)
   */
  keyFilename?: string | undefined;
  /**
   * An authenticated client (`GoogleAuth`, `OAuth2Client`, ...) to use instead of ADC.
   * @default undefined (ADC)
   */
  authClient?: GcsAuthClient | undefined;
  /**
   * How the client sends requests. `"single-attempt"` turns the client's retries off
   * (`autoRetry: false`, `maxRetries: 0`, `RetryNever`), so every answer belongs to the one
   * copy sent and re-issue is left to holdfast's resolver. `"repeating"` keeps the client's
   * retries of reads and of requests carrying `ifGenerationMatch` (`RetryConditional`): an
   * answer may then follow an earlier copy that applied, and the resolver reads back after
   * every conflict.
   * @default "single-attempt"
   */
  client?: "single-attempt" | "repeating" | undefined;
  /**
   * Retry tuning of the `"repeating"` client; ignored by a single-attempt client.
   * @default the client's defaults (3 retries, exponential from 1 s, up to 600 s in all)
   */
  retry?: GcsRetryOptions | undefined;
  /**
   * The store honours `ifGenerationMatch` on objects.delete. Google Cloud Storage does;
   * fake-gcs-server up to v1.56.1 ignores it and deletes anyway. When `false`,
   * `delete({ ifMatch })` is refused as `unsupported` instead of being sent. `openGcsStore` probes it.
   * @default true
   */
  conditionalDelete?: boolean | undefined;
  /**
   * Per-request timeout in ms; a request that exceeds it is `ambiguous`.
   * @default 30_000
   */
  requestTimeoutMs?: number | undefined;
  /**
   * Re-issue of requests whose repetition changes nothing, when their answer is lost
   * (`ambiguous`): reads and listings on a single-attempt client (a repeating client's
   * library repeats them itself), unconditional deletes and unconditional uploads on
   * either. Conditional requests are never repeated here: holdfast's resolver owns them.
   * @default DEFAULT_REISSUE_POLICY (0.2, 0.4, 0.8, 1.6 s) with real time
   */
  reissue?: IdempotentReissueOptions | undefined;
}

/**
 * A Google Cloud Storage `ObjectStore` on the JSON API: create-only puts with
 * `ifGenerationMatch=0`, compare-and-swap and conditional delete with
 * `ifGenerationMatch=<generation>` (the object's generation is its holdfast ETag), batches of
 * ≤100 single deletes, objects.list pagination. Every failure is a `HoldfastError`
 * (invariant 4: a lost answer is `ambiguous`, never a definite failure).
 */
export function createGcsStore(options: GcsStoreOptions): ObjectStore {
  return new GcsStore(options);
}

class GcsStore implements ObjectStore {
  readonly backend = GCS_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #options: GcsStoreOptions;
  /** Object-name prefix including its trailing `/`, or "". */
  readonly #root: string;
  #bucketClient: Bucket | undefined;

  constructor(options: GcsStoreOptions) {
    if (!isBucketName(options.bucket)) {
      throw holdfastError(
        "invalid-input",
        "open",
        `invalid GCS bucket name ${JSON.stringify(options.bucket)}`,
        {
          hint: "3-63 characters (up to 222 with dots): lowercase letters, digits, '-', '_' and '.', starting and ending with a letter or digit",
        },
      );
    }
    const client = options.client ?? "single-attempt";
    if (client !== "repeating" && client !== "single-attempt") {
      throw holdfastError(
        "invalid-input",
        "open",
        `unknown client mode ${JSON.stringify(client)}`,
        { hint: 'use "single-attempt" (client retries off) or "repeating"' },
      );
    }
    const maxRetries = options.retry?.maxRetries;
    if (maxRetries !== undefined && !(Number.isSafeInteger(maxRetries) && maxRetries >= 1)) {
      // The client reads 0 as "unset" and retries 3 times: no retries is client: "single-attempt".
      throw holdfastError(
        "invalid-input",
        "open",
        `retry.maxRetries ${maxRetries} is not a positive integer`,
        {
          hint: 'for no client retries at all use client: "single-attempt"',
        },
      );
    }
    const maxRetryDelay = options.retry?.maxRetryDelay;
    if (maxRetryDelay !== undefined && !(maxRetryDelay >= 1)) {
      // The client pauses at least 1 s before a retry and rejects a smaller cap on its first upload.
      throw holdfastError(
        "invalid-input",
        "open",
        `retry.maxRetryDelay ${maxRetryDelay} is below 1 s`,
        {
          hint: "give the longest pause between retries in seconds, at least 1",
        },
      );
    }
    const rawEndpoint = options.endpoint ?? nonEmpty(process.env.STORAGE_EMULATOR_HOST);
    const endpoint = rawEndpoint === undefined ? undefined : normalizeEndpoint(rawEndpoint);
    if (endpoint !== undefined && !URL.canParse(endpoint)) {
      throw holdfastError("invalid-input", "open", `invalid GCS endpoint ${endpoint}`, {
        hint: "a URL such as http://127.0.0.1:4443",
      });
    }
    const prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    if (prefix !== "") validateKey(prefix, "open");
    this.#root = prefix === "" ? "" : `${prefix}/`;
    this.#options = { ...options, endpoint };
    this.location = `gs://${options.bucket}${prefix === "" ? "" : `/${prefix}`}`;
    this.capabilities = {
      // https://cloud.google.com/storage/docs/request-preconditions: ifGenerationMatch is
      // evaluated atomically with the upload, and with objects.delete.
      atomicConditionalUpdate: true,
      atomicConditionalDelete: options.conditionalDelete ?? true,
      // objects.get/list report `updated` to the millisecond, but a download's Last-Modified
      // is an HTTP date (whole seconds): declare the coarser.
      timestampPrecisionMs: 1000,
      maxBatchDelete: GCS_MAX_BATCH_DELETE,
      requestMode: client,
      // Every write makes a new generation, identical bytes or not.
      etagIsContentHash: false,
    };
  }

  /** The client's bucket handle, built on first use so that creating a store sends nothing. */
  get #bucket(): Bucket {
    if (this.#bucketClient === undefined) {
      const o = this.#options;
      const retry = o.retry ?? {};
      const retryOptions: NonNullable<StorageOptions["retryOptions"]> =
        this.capabilities.requestMode === "single-attempt"
          ? // The client flips `autoRetry` per request and restores the value it saw when the
            // handle was made; with false everywhere no request is ever repeated.
            { autoRetry: false, maxRetries: 0, idempotencyStrategy: IdempotencyStrategy.RetryNever }
          : {
              autoRetry: true,
              idempotencyStrategy: IdempotencyStrategy.RetryConditional,
              ...(retry.maxRetries === undefined ? {} : { maxRetries: retry.maxRetries }),
              ...(retry.retryDelayMultiplier === undefined
                ? {}
                : { retryDelayMultiplier: retry.retryDelayMultiplier }),
              ...(retry.maxRetryDelay === undefined ? {} : { maxRetryDelay: retry.maxRetryDelay }),
              ...(retry.totalTimeout === undefined ? {} : { totalTimeout: retry.totalTimeout }),
            };
      const storageOptions: StorageOptions = {
        retryOptions,
        timeout: o.requestTimeoutMs ?? 30_000,
      };
      if (o.endpoint !== undefined) storageOptions.apiEndpoint = o.endpoint;
      if (o.projectId !== undefined) storageOptions.projectId = o.projectId;
      if (o.keyFilename !== undefined) storageOptions.keyFilename = o.keyFilename;
      if (o.authClient !== undefined) storageOptions.authClient = o.authClient;
      this.#bucketClient = withoutEmulatorVariable(() => new Storage(storageOptions)).bucket(
        o.bucket,
      );
    }
    return this.#bucketClient;
  }

  // https://cloud.google.com/storage/docs/json_api/v1/objects/get (alt=media)
  async get(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<GetResult | null> {
    const file = this.#file(key, "get");
    return this.#read(options.signal, () => this.#getOnce(file, key, options));
  }

  async #getOnce(
    file: File,
    key: string,
    options: { signal?: AbortSignal | undefined },
  ): Promise<GetResult | null> {
    let headers: IncomingHttpHeaders = {};
    let body: Uint8Array;
    try {
      body = await withAbort(options.signal, "get", key, async () => {
        // Without validation the client sends the media request alone (no metadata fetch).
        const stream = file.createReadStream({ validation: false });
        stream.on("response", (response: { headers?: IncomingHttpHeaders }) => {
          headers = response.headers ?? {};
        });
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        const joined = Buffer.concat(chunks);
        return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
      });
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "get", key });
      if (mapped.kind === "not-found") return null;
      throw mapped;
    }
    return {
      key,
      body,
      // The generation the bytes belong to, from the same answer.
      etag: requireGeneration(header(headers, "x-goog-generation"), "get", key),
      lastModified: requireDate(header(headers, "last-modified"), "get", key),
      size: body.byteLength,
    } satisfies GetResult;
  }

  // https://cloud.google.com/storage/docs/json_api/v1/objects/get
  async head(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<ObjectMeta | null> {
    const file = this.#file(key, "head");
    return this.#read(options.signal, () => this.#headOnce(file, key, options));
  }

  async #headOnce(
    file: File,
    key: string,
    options: { signal?: AbortSignal | undefined },
  ): Promise<ObjectMeta | null> {
    try {
      const [metadata] = await withAbort(options.signal, "head", key, () => file.getMetadata());
      return toMeta(key, metadata, "head");
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "head", key });
      if (mapped.kind === "not-found") return null;
      throw mapped;
    }
  }

  // https://cloud.google.com/storage/docs/json_api/v1/objects/insert (uploadType=multipart)
  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const file = this.#file(key, "put");
    const precondition = options.precondition;
    const generationMatch = toGenerationMatch(precondition, "put", key);
    const upload = () =>
      withAbort(options.signal, "put", key, () =>
        file.save(Buffer.from(body), {
          // One request: a resumable upload would take two, and its session could outlive us.
          resumable: false,
          // On a checksum mismatch the client deletes the object it just wrote, unconditionally:
          // never let it. GCS checks the upload's own MD5/CRC32C itself.
          validation: false,
          metadata: { contentType: "application/octet-stream" },
          ...(generationMatch === undefined
            ? {}
            : { preconditionOpts: { ifGenerationMatch: generationMatch } }),
        }),
      ).catch((error: unknown) => {
        throw toHoldfastError(error, { operation: "put", key, precondition });
      });
    // The one upload call site of this backend (scenario C9 counts it). A conditional upload
    // is sent once: the resolver decides about re-issue and read-back. An unconditional one
    // writes the same bytes again if repeated, so a lost answer is re-issued here.
    await (generationMatch === undefined ? this.#idempotent(options.signal, upload) : upload());
    return { etag: requireGeneration(file.metadata.generation, "put", key) };
  }

  // https://cloud.google.com/storage/docs/json_api/v1/objects/delete
  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    const file = this.#file(key, "delete");
    const ifMatch = options.ifMatch;
    const precondition = ifMatch === undefined ? undefined : { ifMatch };
    if (ifMatch !== undefined && !this.capabilities.atomicConditionalDelete) {
      // Never send a precondition the store may ignore: refuse loudly.
      throw holdfastError(
        "unsupported",
        "delete",
        `${this.location} does not honour ifGenerationMatch on delete`,
        {
          key,
          precondition,
          hint: "Google Cloud Storage honours it; an emulator that ignores it needs conditionalDelete: false (openGcsStore probes it)",
        },
      );
    }
    const generationMatch = toGenerationMatch(precondition, "delete", key);
    const remove = async () => {
      try {
        await withAbort(options.signal, "delete", key, () =>
          file.delete(generationMatch === undefined ? {} : { ifGenerationMatch: generationMatch }),
        );
      } catch (error) {
        const mapped = toHoldfastError(error, { operation: "delete", key, precondition });
        // Deleting an absent key unconditionally is success: deletion is idempotent.
        if (mapped.kind === "not-found") return;
        throw mapped;
      }
    };
    // An unconditional delete repeated deletes nothing more: a lost answer is re-issued here
    // (a retired file's delete must not end a cleanup as unknown). A conditional delete is
    // the resolver's (deleteIfMatch).
    await (generationMatch === undefined ? this.#idempotent(options.signal, remove) : remove());
  }

  // No batch endpoint in the client: bounded parallel objects.delete requests.
  async deleteMany(
    keys: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<DeleteManyResult> {
    if (keys.length > GCS_MAX_BATCH_DELETE) {
      throw holdfastError(
        "invalid-input",
        "deleteMany",
        `batch of ${keys.length} keys exceeds the GCS backend's ${GCS_MAX_BATCH_DELETE}`,
        { hint: "split the keys with batches(keys, store.capabilities.maxBatchDelete)" },
      );
    }
    // Validate every key before sending anything (invariant 6).
    for (const key of keys) this.#fullKey(key, "deleteMany");
    if (options.signal?.aborted) {
      throw holdfastError("aborted", "deleteMany", "deleteMany aborted by the caller", {
        cause: options.signal.reason,
      });
    }
    const deleted: string[] = [];
    const failed: DeleteManyResult["failed"] = [];
    await pMap(
      new Set(keys),
      async (key) => {
        try {
          await this.delete(key, { signal: options.signal });
          deleted.push(key);
        } catch (error) {
          failed.push({ key, error: toHoldfastError(error, { operation: "deleteMany", key }) });
        }
      },
      { concurrency: DELETE_CONCURRENCY },
    );
    return { deleted, failed };
  }

  // https://cloud.google.com/storage/docs/json_api/v1/objects/list
  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix, "list");
    if (options.startAfter !== undefined && options.startAfter !== "") {
      validateKey(options.startAfter, "list");
    }
    const token = options.pageToken === undefined ? undefined : decodePageToken(options.pageToken);
    // objects.list has `startOffset` (inclusive) but no "start after": the token carries it,
    // since a page token is only valid with the query that produced it.
    const after = token === undefined ? nonEmpty(options.startAfter) : token.after;
    let pageToken = token?.page;
    const pageSize = Math.max(
      1,
      Math.min(options.pageSize ?? GCS_MAX_PAGE_SIZE, GCS_MAX_PAGE_SIZE),
    );
    for (;;) {
      const query: GetFilesOptions = {
        prefix: this.#root + prefix,
        maxResults: pageSize,
        autoPaginate: false,
        ...(after === undefined ? {} : { startOffset: this.#root + after }),
        ...(pageToken === undefined ? {} : { pageToken }),
      };
      let files: File[];
      let next: string | undefined;
      try {
        const [found, nextQuery] = await this.#read(options.signal, () =>
          withAbort(options.signal, "list", undefined, () => this.#bucket.getFiles(query)).catch(
            (error: unknown) => {
              throw toHoldfastError(error, {
                operation: "list",
                key: prefix === "" ? undefined : prefix,
              });
            },
          ),
        );
        files = found;
        next = nonEmpty((nextQuery as { pageToken?: string } | null)?.pageToken);
      } catch (error) {
        throw toHoldfastError(error, {
          operation: "list",
          key: prefix === "" ? undefined : prefix,
        });
      }
      const objects: ObjectMeta[] = [];
      for (const file of files) {
        if (!file.name.startsWith(this.#root)) continue;
        const key = file.name.slice(this.#root.length);
        if (after !== undefined && compareKeys(key, after) <= 0) continue;
        objects.push(toMeta(key, file.metadata, "list"));
      }
      // A page holding only the start key itself says nothing: read on.
      if (objects.length === 0 && next !== undefined) {
        pageToken = next;
        continue;
      }
      return next === undefined
        ? { objects }
        : { objects, nextPageToken: encodePageToken({ page: next, after }) };
    }
  }

  /** Re-issues a request that changes nothing when repeated, while its answer is lost. */
  #idempotent<T>(signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    return reissueIdempotent(call, { ...this.#options.reissue, signal });
  }

  /** A read: re-issued here on a single-attempt client; a repeating client's library does it. */
  #read<T>(signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
    return this.capabilities.requestMode === "single-attempt"
      ? this.#idempotent(signal, call)
      : call();
  }

  /** A handle on one object (no request sent). */
  #file(key: string, operation: StorageOperation): File {
    return this.#bucket.file(this.#fullKey(key, operation));
  }

  /** Validates a store key and returns the object name (prefix + key). */
  #fullKey(key: string, operation: StorageOperation): string {
    validateKey(key, operation);
    const fullKey = this.#root + key;
    if (Buffer.byteLength(fullKey, "utf8") > MAX_KEY_BYTES) {
      throw holdfastError(
        "invalid-input",
        operation,
        `key ${JSON.stringify(key)} under prefix ${JSON.stringify(this.#root)} exceeds GCS's ${MAX_KEY_BYTES} bytes`,
        { key },
      );
    }
    return fullKey;
  }
}

// --- utils ---

function toMeta(key: string, metadata: FileMetadata, operation: StorageOperation): ObjectMeta {
  return {
    key,
    etag: requireGeneration(metadata.generation, operation, key),
    lastModified: requireDate(metadata.updated, operation, key),
    size: Number(metadata.size ?? 0),
  };
}

/**
 * Builds the client with STORAGE_EMULATOR_HOST hidden: the client sends its JSON requests to
 * that variable's URL (with no `/storage/v1`) whatever `apiEndpoint` says, but its uploads to
 * `apiEndpoint`. The store reads the variable itself (the `endpoint` default) and passes one
 * endpoint for both. The constructor is synchronous, so nothing else runs meanwhile.
 */
function withoutEmulatorVariable<T>(build: () => T): T {
  const saved = process.env.STORAGE_EMULATOR_HOST;
  if (saved === undefined) return build();
  delete process.env.STORAGE_EMULATOR_HOST;
  try {
    return build();
  } finally {
    process.env.STORAGE_EMULATOR_HOST = saved;
  }
}

/** `host:port` (as other Google clients accept it) gets `http://`; a trailing `/storage/v1` goes. */
function normalizeEndpoint(endpoint: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint) ? endpoint : `http://${endpoint}`;
  return withScheme.replace(/\/+$/, "").replace(/\/storage\/v1$/, "");
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** https://cloud.google.com/storage/docs/buckets#naming (dotted names up to 222 characters). */
function isBucketName(name: unknown): name is string {
  if (typeof name !== "string" || name.length < 3 || name.length > 222) return false;
  if (!/^[a-z0-9][a-z0-9._-]*[a-z0-9]$/.test(name)) return false;
  if (name.split(".").some((part) => part.length === 0 || part.length > 63)) return false;
  return !name.startsWith("goog") && !/^\d+\.\d+\.\d+\.\d+$/.test(name);
}

/** Where the next page starts: the API's page token, for the query starting after `after`. */
interface PageToken {
  page: string;
  after?: string | undefined;
}

function encodePageToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token), "utf8").toString("base64url");
}

function decodePageToken(raw: string): PageToken {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      typeof (parsed as PageToken).page === "string" &&
      ((parsed as PageToken).after === undefined || typeof (parsed as PageToken).after === "string")
    ) {
      return parsed as PageToken;
    }
  } catch {
    // fall through to the typed error
  }
  throw holdfastError("invalid-input", "list", "malformed page token", {
    hint: "pass back nextPageToken from the previous page unchanged",
  });
}
