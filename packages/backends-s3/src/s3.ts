import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import {
  connectFailureCode,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  type HoldfastError,
  holdfastError,
  type ListOptions,
  type ListPage,
  MAX_KEY_BYTES,
  markNothingSent,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  type StorageOperation,
  type StoreCapabilities,
  validateKey,
  validatePrefix,
} from "@holdfast/conditional-store";
import { bareEtag, requireDate, requireEtag, sendOptions, toHoldfastError } from "./errors.js";
import { type ReadTimeouts, type SignedReads, signedReads } from "./signed-request.js";
import {
  type DeleteAnswer,
  deleteObjectsBody,
  type ListedPage,
  parseDeleteResult,
  parseListPage,
} from "./xml.js";

/** Backend name reported in `store.backend` and in error messages. */
export const S3_BACKEND = "s3";

/** S3's limit on keys in one DeleteObjects request. */
export const S3_MAX_BATCH_DELETE = 1000;

/** S3's limit on keys per ListObjectsV2 page. */
const S3_MAX_PAGE_SIZE = 1000;

/** `requestTimeoutMs` when unset. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/** How long a new connection may take to establish (the SDK path and the signed reads). */
const CONNECTION_TIMEOUT_MS = 5_000;

/** Credentials the SDK accepts: static keys or a provider function (`fromIni()`, `fromEnv()`, ...). */
export type S3Credentials = NonNullable<S3ClientConfig["credentials"]>;

export interface S3StoreOptions {
  /** Bucket holding the store. It must exist: holdfast never creates buckets; a missing one is `refused`. */
  bucket: string;
  /**
   * Folder inside the bucket; every key is stored under `<prefix>/` and listed relative to it.
   * @default "" (the bucket root)
   */
  prefix?: string | undefined;
  /**
   * AWS region (S3-compatible stores usually accept any).
   * @default process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1"
   */
  region?: string | undefined;
  /**
   * Endpoint URL of an S3-compatible store, e.g. `http://127.0.0.1:7480` for Ceph RGW.
   * @default undefined (AWS's endpoint for the region)
   */
  endpoint?: string | undefined;
  /**
   * Address buckets as `<endpoint>/<bucket>` instead of `<bucket>.<endpoint>`. Most
   * S3-compatible stores (RGW, MinIO) need it.
   * @default false
   */
  forcePathStyle?: boolean | undefined;
  /**
   * Static credentials or a credential provider.
   * @default the AWS default chain (env vars, shared config/credentials files, SSO, instance/container roles)
   */
  credentials?: S3Credentials | undefined;
  /**
   * How the SDK sends requests. `"repeating"` keeps the SDK's own retries (its default
   * `maxAttempts`), so an answer may follow an earlier copy that applied: the resolver then
   * reads back after every conflict. `"single-attempt"` sends each request once
   * (`maxAttempts: 1`) and leaves every re-issue to holdfast's resolver. Reads (`get`,
   * `head`), sent without the SDK's middleware, follow the same client's retry strategy.
   * @default "repeating"
   */
  client?: "single-attempt" | "repeating" | undefined;
  /**
   * Send `If-Match` ETags in double quotes, as AWS documents. Ceph RGW compares the header
   * byte for byte with its unquoted ETag, so a quoted current ETag fails there: set `false`
   * for RGW, or use `openS3Store`, which probes which form the store accepts.
   * @default true
   */
  quoteIfMatch?: boolean | undefined;
  /**
   * The store honours `If-Match` on DeleteObject atomically (AWS S3 does; Ceph RGW ignores it
   * and deletes anyway). When `false`, `delete({ ifMatch })` is refused as `unsupported`
   * instead of being sent. `openS3Store` probes it.
   * @default false
   */
  conditionalDelete?: boolean | undefined;
  /**
   * Compare-and-swap (`If-Match` on PutObject) is atomic. `openS3Store` probes it.
   * @default true
   */
  conditionalUpdate?: boolean | undefined;
  /**
   * Per-request timeout in ms; a request that exceeds it is `ambiguous`. For reads it runs
   * until the answer's headers, then bounds every pause inside the body.
   * @default 30_000
   */
  requestTimeoutMs?: number | undefined;
}

/**
 * An S3 `ObjectStore`: create-only puts with `If-None-Match: *`, compare-and-swap with
 * `If-Match`, DeleteObjects batches of ≤1000, ListObjectsV2 pagination. Every failure is a
 * `HoldfastError` (invariant 4: a lost answer is `ambiguous`, never a definite failure).
 * Creating a store sends nothing; `openS3Store` probes the store's real behaviour first.
 */
export function createS3Store(options: S3StoreOptions): ObjectStore {
  return new S3Store(options);
}

class S3Store implements ObjectStore {
  readonly backend = S3_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #options: S3StoreOptions;
  /** Key prefix including its trailing `/`, or "". */
  readonly #root: string;
  readonly #quoteIfMatch: boolean;
  #s3: S3Client | undefined;
  /** The signed read path, resolved on the first read; `undefined` inside: reads use the SDK. */
  #reads: Promise<SignedReads | undefined> | undefined;

  constructor(options: S3StoreOptions) {
    if (!isBucketName(options.bucket)) {
      throw holdfastError(
        "invalid-input",
        "open",
        `invalid S3 bucket name ${JSON.stringify(options.bucket)}`,
        {
          hint: "3-63 characters: lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit",
        },
      );
    }
    const prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    if (prefix !== "") validateKey(prefix, "open");
    if (options.endpoint !== undefined && !URL.canParse(options.endpoint)) {
      throw holdfastError("invalid-input", "open", `invalid S3 endpoint ${options.endpoint}`, {
        hint: "a URL such as http://127.0.0.1:7480",
      });
    }
    this.#root = prefix === "" ? "" : `${prefix}/`;
    this.#options = options;
    this.#quoteIfMatch = options.quoteIfMatch ?? true;
    this.location = `s3://${options.bucket}${prefix === "" ? "" : `/${prefix}`}`;
    this.capabilities = {
      atomicConditionalUpdate: options.conditionalUpdate ?? true,
      atomicConditionalDelete: options.conditionalDelete ?? false,
      // HEAD/GET Last-Modified is an HTTP date (whole seconds); listings carry ms. Declare the coarser.
      timestampPrecisionMs: 1000,
      maxBatchDelete: S3_MAX_BATCH_DELETE,
      requestMode: options.client ?? "repeating",
      // A single-part PUT's ETag is the content MD5: identical bytes keep it.
      etagIsContentHash: true,
    };
  }

  /** The SDK client, built on first use so that creating a store sends nothing. */
  get #client(): S3Client {
    if (this.#s3 === undefined) {
      this.#s3 = new S3Client(s3ClientConfig(this.#options));
      recordNothingSent(this.#s3);
    }
    return this.#s3;
  }

  /**
   * The signed read path (src/signed-request.ts) when it can send exactly what the SDK would
   * for this configuration, else `undefined` and reads go through the SDK.
   */
  #signedReads(): Promise<SignedReads | undefined> {
    this.#reads ??= signedReads(this.#client, this.#options.bucket, readTimeouts(this.#options));
    return this.#reads;
  }

  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html
  async get(key: string, options: { signal?: AbortSignal | undefined } = {}) {
    const fullKey = this.#key(key, "get");
    try {
      const reads = await this.#signedReads();
      if (reads === undefined) return await this.#getThroughSdk(key, fullKey, options.signal);
      const answer = await reads.read("GET", fullKey, options.signal);
      return {
        key,
        body: answer.body,
        etag: requireEtag(answer.etag, "get", key),
        lastModified: requireDate(answer.lastModified, "get", key),
        size: answer.body.byteLength,
      } satisfies GetResult;
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "get", key });
      if (mapped.kind === "not-found") return null;
      throw mapped;
    }
  }

  async #getThroughSdk(
    key: string,
    fullKey: string,
    signal: AbortSignal | undefined,
  ): Promise<GetResult> {
    const answer = await this.#client.send(
      new GetObjectCommand({ Bucket: this.#options.bucket, Key: fullKey }),
      sendOptions(signal),
    );
    const body = answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array(0);
    return {
      key,
      body,
      etag: requireEtag(answer.ETag, "get", key),
      lastModified: requireDate(answer.LastModified, "get", key),
      size: body.byteLength,
    };
  }

  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadObject.html
  async head(key: string, options: { signal?: AbortSignal | undefined } = {}) {
    const fullKey = this.#key(key, "head");
    try {
      const reads = await this.#signedReads();
      if (reads !== undefined) {
        const answer = await reads.read("HEAD", fullKey, options.signal);
        return {
          key,
          etag: requireEtag(answer.etag, "head", key),
          lastModified: requireDate(answer.lastModified, "head", key),
          size: answer.size,
        } satisfies ObjectMeta;
      }
      const answer = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#options.bucket, Key: fullKey }),
        sendOptions(options.signal),
      );
      return {
        key,
        etag: requireEtag(answer.ETag, "head", key),
        lastModified: requireDate(answer.LastModified, "head", key),
        size: answer.ContentLength ?? 0,
      } satisfies ObjectMeta;
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "head", key });
      if (mapped.kind === "not-found") return null;
      throw mapped;
    }
  }

  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html
  // https://docs.aws.amazon.com/AmazonS3/userguide/conditional-writes.html
  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const fullKey = this.#key(key, "put");
    const precondition = options.precondition;
    if (precondition && "ifMatch" in precondition && !this.capabilities.atomicConditionalUpdate) {
      throw holdfastError("unsupported", "put", `${this.location} has no atomic If-Match on put`, {
        key,
        precondition,
      });
    }
    try {
      // The one PutObject call site of this backend (scenario C9 counts it).
      const answer = await this.#client.send(
        new PutObjectCommand({
          Bucket: this.#options.bucket,
          Key: fullKey,
          // A copy: the caller may reuse its buffer as soon as this promise settles.
          Body: body.slice(),
          ContentLength: body.byteLength,
          ...(precondition && "ifNoneMatch" in precondition ? { IfNoneMatch: "*" } : {}),
          ...(precondition && "ifMatch" in precondition
            ? { IfMatch: this.#etagHeader(precondition.ifMatch) }
            : {}),
        }),
        sendOptions(options.signal),
      );
      return { etag: requireEtag(answer.ETag, "put", key) };
    } catch (error) {
      throw toHoldfastError(error, { operation: "put", key, precondition });
    }
  }

  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObject.html
  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    const fullKey = this.#key(key, "delete");
    const ifMatch = options.ifMatch;
    if (ifMatch !== undefined && !this.capabilities.atomicConditionalDelete) {
      // Never send a precondition the store may ignore (RGW deletes regardless): refuse loudly.
      throw holdfastError(
        "unsupported",
        "delete",
        `${this.location} does not honour If-Match on delete`,
        {
          key,
          precondition: { ifMatch },
          hint: "pass conditionalDelete: true only for stores that honour it (AWS S3), or use openS3Store to probe",
        },
      );
    }
    try {
      await this.#client.send(
        new DeleteObjectCommand({
          Bucket: this.#options.bucket,
          Key: fullKey,
          ...(ifMatch !== undefined ? { IfMatch: this.#etagHeader(ifMatch) } : {}),
        }),
        sendOptions(options.signal),
      );
    } catch (error) {
      const precondition = ifMatch === undefined ? undefined : { ifMatch };
      const mapped = toHoldfastError(error, { operation: "delete", key, precondition });
      // Deletion is idempotent: an absent key is deleted (only an unconditional delete gets here).
      if (mapped.kind === "not-found") return;
      throw mapped;
    }
  }

  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_DeleteObjects.html
  async deleteMany(
    keys: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<DeleteManyResult> {
    if (keys.length > S3_MAX_BATCH_DELETE) {
      throw holdfastError(
        "invalid-input",
        "deleteMany",
        `batch of ${keys.length} keys exceeds S3's ${S3_MAX_BATCH_DELETE}`,
        { hint: "split the keys with batches(keys, store.capabilities.maxBatchDelete)" },
      );
    }
    // Validate every key before sending anything (invariant 6).
    const fullKeys = keys.map((key) => this.#key(key, "deleteMany"));
    if (keys.length === 0) return { deleted: [], failed: [] };
    const unique = [...new Set(fullKeys)];
    let answer: DeleteAnswer;
    try {
      const signed = await this.#signedReads();
      answer =
        signed === undefined
          ? await this.#deleteThroughSdk(unique, options.signal)
          : // Quiet: false, so every key gets its own answer.
            parseDeleteResult(
              await signed.deleteObjects(deleteObjectsBody(unique, false), options.signal),
            );
    } catch (error) {
      throw toHoldfastError(error, { operation: "deleteMany" });
    }
    const deleted = new Set(answer.deleted);
    const failures = new Map<string, HoldfastError>();
    for (const entry of answer.errors) {
      if (entry.key === undefined) continue;
      const key = entry.key.slice(this.#root.length);
      failures.set(
        entry.key,
        toHoldfastError(
          { name: entry.code ?? "UnknownError", message: entry.message ?? "" },
          { operation: "deleteMany", key },
        ),
      );
    }
    const result: { deleted: string[]; failed: { key: string; error: HoldfastError }[] } = {
      deleted: [],
      failed: [],
    };
    keys.forEach((key, i) => {
      const fullKey = fullKeys[i]!;
      const failure = failures.get(fullKey);
      if (failure) result.failed.push({ key, error: failure });
      else if (deleted.has(fullKey)) result.deleted.push(key);
      else {
        result.failed.push({
          key,
          error: holdfastError("ambiguous", "deleteMany", `no answer for ${key} in DeleteObjects`, {
            key,
          }),
        });
      }
    });
    return result;
  }

  async #deleteThroughSdk(
    fullKeys: readonly string[],
    signal: AbortSignal | undefined,
  ): Promise<DeleteAnswer> {
    const answer = await this.#client.send(
      new DeleteObjectsCommand({
        Bucket: this.#options.bucket,
        // Quiet: false, so every key gets its own answer.
        Delete: { Objects: fullKeys.map((Key) => ({ Key })), Quiet: false },
      }),
      sendOptions(signal),
    );
    return {
      deleted: (answer.Deleted ?? []).flatMap((entry) =>
        entry.Key === undefined ? [] : [entry.Key],
      ),
      errors: (answer.Errors ?? []).map((entry) => ({
        key: entry.Key,
        code: entry.Code,
        message: entry.Message,
      })),
    };
  }

  // https://docs.aws.amazon.com/AmazonS3/latest/API/API_ListObjectsV2.html
  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix, "list");
    if (options.startAfter !== undefined && options.startAfter !== "") {
      validateKey(options.startAfter, "list");
    }
    const pageSize = Math.max(1, Math.min(options.pageSize ?? S3_MAX_PAGE_SIZE, S3_MAX_PAGE_SIZE));
    const request = {
      prefix: this.#root + prefix,
      maxKeys: pageSize,
      continuationToken: options.pageToken,
      startAfter: options.startAfter ? this.#root + options.startAfter : undefined,
    };
    let answer: ListedPage;
    try {
      const signed = await this.#signedReads();
      answer =
        signed === undefined
          ? await this.#listThroughSdk(request, options.signal)
          : parseListPage(await signed.listObjectsV2(request, options.signal));
    } catch (error) {
      throw toHoldfastError(error, { operation: "list" });
    }
    const objects: ObjectMeta[] = [];
    for (const entry of answer.contents) {
      if (entry.key === undefined || !entry.key.startsWith(this.#root)) continue;
      const key = entry.key.slice(this.#root.length);
      objects.push({
        key,
        etag: requireEtag(entry.etag, "list", key),
        lastModified: requireDate(entry.lastModified, "list", key),
        size: entry.size ?? 0,
      });
    }
    return answer.isTruncated && answer.nextContinuationToken
      ? { objects, nextPageToken: answer.nextContinuationToken }
      : { objects };
  }

  async #listThroughSdk(
    request: {
      prefix: string;
      maxKeys: number;
      continuationToken: string | undefined;
      startAfter: string | undefined;
    },
    signal: AbortSignal | undefined,
  ): Promise<ListedPage> {
    const answer = await this.#client.send(
      new ListObjectsV2Command({
        Bucket: this.#options.bucket,
        Prefix: request.prefix,
        MaxKeys: request.maxKeys,
        ...(request.continuationToken !== undefined
          ? { ContinuationToken: request.continuationToken }
          : {}),
        ...(request.startAfter !== undefined ? { StartAfter: request.startAfter } : {}),
      }),
      sendOptions(signal),
    );
    return {
      contents: (answer.Contents ?? []).map((entry) => ({
        key: entry.Key,
        etag: entry.ETag,
        lastModified: entry.LastModified,
        size: entry.Size,
      })),
      isTruncated: answer.IsTruncated === true,
      nextContinuationToken: answer.NextContinuationToken,
    };
  }

  /** Validates a store key and returns the bucket key (prefix + key). */
  #key(key: string, operation: StorageOperation): string {
    validateKey(key, operation);
    const fullKey = this.#root + key;
    if (Buffer.byteLength(fullKey, "utf8") > MAX_KEY_BYTES) {
      throw holdfastError(
        "invalid-input",
        operation,
        `key ${JSON.stringify(key)} under prefix ${JSON.stringify(this.#root)} exceeds S3's ${MAX_KEY_BYTES} bytes`,
        { key },
      );
    }
    return fullKey;
  }

  #etagHeader(etag: string): string {
    const bare = bareEtag(etag);
    return this.#quoteIfMatch ? `"${bare}"` : bare;
  }
}

/** The SDK client's configuration for a store's options (the tests build the same client). */
export function s3ClientConfig(o: S3StoreOptions): S3ClientConfig {
  const config: S3ClientConfig = {
    region: o.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
    forcePathStyle: o.forcePathStyle ?? false,
    // Checksums only where S3 requires them: RGW answers 411 to the default
    // streaming-checksum uploads, and validating would buffer every response twice.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    // Without throwOnRequestTimeout the handler only logs a warning when the timeout passes.
    requestHandler: {
      requestTimeout: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      throwOnRequestTimeout: true,
      connectionTimeout: CONNECTION_TIMEOUT_MS,
    },
  };
  if (o.endpoint !== undefined) config.endpoint = o.endpoint;
  if (o.credentials !== undefined) config.credentials = o.credentials;
  if ((o.client ?? "repeating") === "single-attempt") config.maxAttempts = 1;
  return config;
}

/** The signed reads' timeouts for a store's options: the SDK handler's, as configured above. */
export function readTimeouts(o: S3StoreOptions): ReadTimeouts {
  return {
    requestTimeoutMs: o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    connectionTimeoutMs: CONNECTION_TIMEOUT_MS,
  };
}

function isBucketName(name: unknown): name is string {
  return (
    typeof name === "string" &&
    /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(name) &&
    !name.includes("..") &&
    !/^\d+\.\d+\.\d+\.\d+$/.test(name)
  );
}

/** Per request (shared by its attempts): some attempt may have reached the store. */
const maybeSent = new WeakSet<object>();

/**
 * Marks a request's failure `markNothingSent` when every attempt the SDK made failed to
 * connect (refused, host not resolved): one middleware inside the retry loop notes any
 * other failure of an attempt in the request's context, one outside marks the final error
 * when none was noted. `toHoldfastError` then maps it to `refused` (nothing was written),
 * never to an unknown outcome.
 */
function recordNothingSent(client: S3Client): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (connectFailureCode(error) === undefined) maybeSent.add(context);
        throw error;
      }
    },
    { step: "finalizeRequest", priority: "low", name: "holdfastAttemptMaybeSent" },
  );
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (!maybeSent.has(context) && connectFailureCode(error) !== undefined) {
          markNothingSent(error);
        }
        throw error;
      }
    },
    { step: "initialize", priority: "high", name: "holdfastNothingSent" },
  );
}
