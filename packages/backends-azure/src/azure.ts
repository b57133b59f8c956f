import type { TokenCredential } from "@azure/core-auth";
import {
  type AnonymousCredential,
  type BlobDownloadResponseParsed,
  BlobServiceClient,
  type ContainerClient,
  type StorageRetryOptions,
  type StorageSharedKeyCredential,
} from "@azure/storage-blob";
import {
  compareKeys,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  holdfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  type StoreCapabilities,
  validateKey,
  validatePrefix,
} from "@holdfast/conditional-store";
import pMap from "p-map";
import { bareEtag, requireDate, toConditions, toHoldfastError, withSignal } from "./errors.js";

/** Backend name reported in `store.backend` and in error messages. */
export const AZURE_BACKEND = "azure";

/** Azure's limit on sub-requests in one Blob Batch request. */
export const AZURE_MAX_BATCH_DELETE = 256;

/** Parallel single deletes when a Blob Batch request cannot be used. */
const SINGLE_DELETE_CONCURRENCY = 8;

/** Azure's limit on results per List Blobs page. */
const AZURE_MAX_PAGE_SIZE = 5000;
/** Keys per request while a listing skips to its `startAfter` (Azure has no "start after"). */
const SKIP_PAGE_SIZE = 1000;

/** Credentials Azure Blob accepts alongside an account URL (`DefaultAzureCredential` is a `TokenCredential`). */
export type AzureCredential = TokenCredential | StorageSharedKeyCredential | AnonymousCredential;

export interface AzureStoreOptions {
  /**
   * Container holding the store. It must exist: holdfast never creates or deletes containers,
   * and a missing one is reported as `refused`.
   */
  container: string;
  /**
   * Folder inside the container; every key is stored under `<prefix>/` and listed relative to it.
   * @default "" (the container root)
   */
  prefix?: string | undefined;
  /**
   * Storage connection string (account key or SAS). Ignored when `accountUrl` is given.
   * @default process.env.AZURE_STORAGE_CONNECTION_STRING
   */
  connectionString?: string | undefined;
  /**
   * Blob service URL, e.g. `https://<account>.blob.core.windows.net`; used with `credential`.
   * @default undefined (use the connection string)
   */
  accountUrl?: string | undefined;
  /**
   * Credential for `accountUrl`: a `TokenCredential` (e.g. `new DefaultAzureCredential()` from
   * `@azure/identity`), a `StorageSharedKeyCredential`, or `AnonymousCredential` for a SAS URL.
   * @default undefined (required with `accountUrl`)
   */
  credential?: AzureCredential | undefined;
  /**
   * How the SDK sends requests. `"repeating"` keeps the SDK's own retries, so an answer may
   * follow an earlier copy that applied and the resolver reads back after every conflict;
   * `"single-attempt"` sends each request once (`maxTries: 1`) and leaves re-issue to holdfast.
   * @default "repeating"
   */
  client?: "single-attempt" | "repeating" | undefined;
  /**
   * SDK retry tuning for the `"repeating"` client (delays, tries, per-try timeout).
   * `maxTries` is forced to 1 on a single-attempt client.
   * @default the SDK's defaults (4 tries, exponential from 4 s)
   */
  retry?: StorageRetryOptions | undefined;
}

/**
 * An Azure Blob `ObjectStore`: create-only puts with `If-None-Match: *`, compare-and-swap and
 * conditional delete with `If-Match` (both atomic on Azure), batch delete of ≤256 blobs.
 * Every failure is a `HoldfastError` (invariant 4: a lost answer is `ambiguous`, never a failure).
 */
export function createAzureStore(options: AzureStoreOptions): ObjectStore {
  return new AzureStore(options);
}

class AzureStore implements ObjectStore {
  readonly backend = AZURE_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #options: AzureStoreOptions;
  readonly #connectionString: string | undefined;
  /** Blob-name prefix including its trailing `/`, or "". */
  readonly #root: string;
  #containerClient: ContainerClient | undefined;

  constructor(options: AzureStoreOptions) {
    if (!isContainerName(options.container)) {
      throw holdfastError(
        "invalid-input",
        "open",
        `invalid Azure container name ${JSON.stringify(options.container)}`,
        {
          hint: "3-63 characters: lowercase letters, digits and single hyphens, starting and ending with a letter or digit",
        },
      );
    }
    const client = options.client ?? "repeating";
    if (client !== "repeating" && client !== "single-attempt") {
      throw holdfastError(
        "invalid-input",
        "open",
        `unknown client mode ${JSON.stringify(client)}`,
        {
          hint: 'use "repeating" (SDK retries on) or "single-attempt"',
        },
      );
    }
    const prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    if (prefix !== "") validateKey(prefix, "open");
    this.#root = prefix === "" ? "" : `${prefix}/`;
    this.#options = options;
    if (options.accountUrl === undefined) {
      this.#connectionString =
        options.connectionString ?? process.env.AZURE_STORAGE_CONNECTION_STRING;
      if (!this.#connectionString) {
        throw holdfastError("invalid-input", "open", "no Azure credentials configured", {
          hint: "set AZURE_STORAGE_CONNECTION_STRING, or pass connectionString, or accountUrl with a credential",
        });
      }
    } else if (options.credential === undefined) {
      throw holdfastError("invalid-input", "open", "accountUrl needs a credential", {
        hint: "pass a TokenCredential (e.g. DefaultAzureCredential), a StorageSharedKeyCredential, or AnonymousCredential for a SAS URL",
      });
    }
    this.location = `az://${options.container}${prefix === "" ? "" : `/${prefix}`}`;
    this.capabilities = {
      // Azure evaluates If-Match / If-None-Match atomically with the write, for puts and deletes.
      atomicConditionalUpdate: true,
      atomicConditionalDelete: true,
      // Last-Modified is an HTTP date (whole seconds) in properties and listings alike.
      timestampPrecisionMs: 1000,
      maxBatchDelete: AZURE_MAX_BATCH_DELETE,
      requestMode: client,
      // Every write gets a new ETag, even with identical bytes.
      etagIsContentHash: false,
    };
  }

  /** The SDK client, built on first use so that creating a store sends nothing. */
  get #container(): ContainerClient {
    if (this.#containerClient === undefined) {
      const retryOptions: StorageRetryOptions =
        this.capabilities.requestMode === "single-attempt"
          ? { ...this.#options.retry, maxTries: 1 }
          : { ...this.#options.retry };
      let service: BlobServiceClient;
      try {
        service =
          this.#options.accountUrl === undefined
            ? BlobServiceClient.fromConnectionString(this.#connectionString!, { retryOptions })
            : new BlobServiceClient(this.#options.accountUrl, this.#options.credential, {
                retryOptions,
              });
      } catch (error) {
        throw holdfastError("invalid-input", "open", "cannot build an Azure client", {
          hint: "check the connection string or account URL",
          cause: error,
        });
      }
      this.#containerClient = service.getContainerClient(this.#options.container);
    }
    return this.#containerClient;
  }

  // https://learn.microsoft.com/rest/api/storageservices/get-blob
  async get(key: string, options: { signal?: AbortSignal | undefined } = {}) {
    validateKey(key, "get");
    let response: BlobDownloadResponseParsed;
    let body: Uint8Array;
    try {
      response = await this.#container
        .getBlobClient(this.#root + key)
        .download(0, undefined, withSignal(options.signal));
      body = await readBody(response.readableStreamBody);
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "get", key });
      if (mapped.kind === "not-found") return null;
      throw mapped;
    }
    return {
      key,
      body,
      etag: bareEtag(response.etag),
      lastModified: requireDate(response.lastModified, "get", key),
      size: body.byteLength,
    } satisfies GetResult;
  }

  // https://learn.microsoft.com/rest/api/storageservices/get-blob-properties
  async head(key: string, options: { signal?: AbortSignal | undefined } = {}) {
    validateKey(key, "head");
    try {
      const props = await this.#container
        .getBlobClient(this.#root + key)
        .getProperties(withSignal(options.signal));
      return {
        key,
        etag: bareEtag(props.etag),
        lastModified: requireDate(props.lastModified, "head", key),
        size: props.contentLength ?? 0,
      } satisfies ObjectMeta;
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "head", key });
      if (mapped.kind === "not-found") return null;
      throw mapped;
    }
  }

  // https://learn.microsoft.com/rest/api/storageservices/put-blob
  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    validateKey(key, "put");
    const precondition = options.precondition;
    try {
      const response = await this.#container
        .getBlockBlobClient(this.#root + key)
        .upload(body, body.byteLength, {
          ...toConditions(precondition),
          ...withSignal(options.signal),
          blobHTTPHeaders: { blobContentType: "application/octet-stream" },
        });
      return { etag: bareEtag(response.etag) };
    } catch (error) {
      throw toHoldfastError(error, { operation: "put", key, precondition });
    }
  }

  // https://learn.microsoft.com/rest/api/storageservices/delete-blob
  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    validateKey(key, "delete");
    const precondition = options.ifMatch === undefined ? undefined : { ifMatch: options.ifMatch };
    try {
      await this.#container
        .getBlobClient(this.#root + key)
        .delete({ ...toConditions(precondition), ...withSignal(options.signal) });
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "delete", key, precondition });
      // Deleting an absent key unconditionally is success: deletion is idempotent.
      if (mapped.kind === "not-found") return;
      throw mapped;
    }
  }

  // https://learn.microsoft.com/rest/api/storageservices/blob-batch
  async deleteMany(
    keys: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<DeleteManyResult> {
    if (keys.length > AZURE_MAX_BATCH_DELETE) {
      throw holdfastError(
        "invalid-input",
        "deleteMany",
        `batch of ${keys.length} keys exceeds Azure's limit of ${AZURE_MAX_BATCH_DELETE}`,
        { hint: "split the keys with batches(keys, store.capabilities.maxBatchDelete)" },
      );
    }
    for (const key of keys) validateKey(key, "deleteMany");
    // The batch client sends even when the signal has already fired (seen on Azurite with
    // @azure/storage-blob 12.32): refuse here so an aborted caller deletes nothing.
    if (options.signal?.aborted) {
      throw holdfastError("aborted", "deleteMany", "deleteMany aborted by the caller", {
        cause: options.signal.reason,
      });
    }
    const unique = [...new Set(keys)];
    if (unique.length === 0) return { deleted: [], failed: [] };
    const container = this.#container;
    const clients = unique.map((key) => container.getBlobClient(this.#root + key));
    const keyByUrl = new Map(clients.map((client, i) => [client.url, unique[i]!]));
    const deleted: string[] = [];
    const failed: DeleteManyResult["failed"] = [];
    const unanswered = new Set(unique);
    try {
      const response = await container
        .getBlobBatchClient()
        .deleteBlobs(clients, withSignal(options.signal));
      for (const [i, sub] of response.subResponses.entries()) {
        const key = keyByUrl.get(sub._request.url) ?? unique[i];
        if (key === undefined || !unanswered.delete(key)) continue;
        if (sub.status >= 200 && sub.status < 300) {
          deleted.push(key);
          continue;
        }
        const mapped = toHoldfastError(
          { statusCode: sub.status, code: sub.errorCode },
          { operation: "deleteMany", key },
        );
        // A blob that is already gone counts as deleted.
        if (mapped.kind === "not-found") deleted.push(key);
        else failed.push({ key, error: mapped });
      }
    } catch (error) {
      const mapped = toHoldfastError(error, { operation: "deleteMany" });
      // Some accounts and emulators refuse Blob Batch (Azurite answers 500 to a batch
      // under a SAS); unconditional deletes are idempotent, so one request per blob is
      // always safe. Failures that would equally stop single deletes are thrown as they are.
      if (
        mapped.kind === "aborted" ||
        mapped.kind === "auth" ||
        mapped.code === "ContainerNotFound"
      ) {
        throw mapped;
      }
    }
    // Blobs the batch did not answer for (or the whole batch, if it failed) are deleted one by one.
    await pMap(
      unanswered,
      async (key) => {
        try {
          await this.delete(key, { signal: options.signal });
          deleted.push(key);
        } catch (error) {
          failed.push({ key, error: toHoldfastError(error, { operation: "deleteMany", key }) });
        }
      },
      { concurrency: SINGLE_DELETE_CONCURRENCY },
    );
    return { deleted, failed };
  }

  // https://learn.microsoft.com/rest/api/storageservices/list-blobs
  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix);
    const token = options.pageToken === undefined ? undefined : decodePageToken(options.pageToken);
    // Azure's listing has no "start after": skip up to it here and carry it in our token.
    const after = token?.after ?? options.startAfter;
    let marker = token?.marker;
    const maxPageSize = Math.max(1, Math.min(options.pageSize ?? 1000, AZURE_MAX_PAGE_SIZE));
    // Skipping to `after` reads full pages: a page of one key per request would cost one
    // request per skipped key (a branch probe past 100,000 versions).
    const fetchSize = after === undefined ? maxPageSize : Math.max(maxPageSize, SKIP_PAGE_SIZE);
    const container = this.#container;
    for (;;) {
      let page: { segment: { blobItems: AzureBlobItem[] }; continuationToken?: string };
      try {
        const result = await container
          .listBlobsFlat({ prefix: this.#root + prefix, ...withSignal(options.signal) })
          .byPage(
            marker === undefined
              ? { maxPageSize: fetchSize }
              : { continuationToken: marker, maxPageSize: fetchSize },
          )
          .next();
        page = result.value;
      } catch (error) {
        throw toHoldfastError(error, {
          operation: "list",
          key: prefix === "" ? undefined : prefix,
        });
      }
      const objects: ObjectMeta[] = [];
      for (const item of page.segment.blobItems) {
        if (!item.name.startsWith(this.#root)) continue;
        const key = item.name.slice(this.#root.length);
        if (after !== undefined && compareKeys(key, after) <= 0) continue;
        objects.push({
          key,
          etag: bareEtag(item.properties.etag),
          lastModified: requireDate(item.properties.lastModified, "list", key),
          size: item.properties.contentLength ?? 0,
        });
      }
      if (objects.length > maxPageSize) {
        // More than asked for: the next page reads this one again from its start, after
        // the last key returned.
        const returned = objects.slice(0, maxPageSize);
        const last = returned[returned.length - 1]!.key;
        return { objects: returned, nextPageToken: encodePageToken({ marker, after: last }) };
      }
      // Azure signals the last page with an empty (or absent) marker.
      const next = page.continuationToken ? page.continuationToken : undefined;
      if (objects.length === 0 && next !== undefined) {
        marker = next;
        continue;
      }
      return next === undefined
        ? { objects }
        : { objects, nextPageToken: encodePageToken({ marker: next, after }) };
    }
  }
}

// --- utils ---

interface AzureBlobItem {
  name: string;
  properties: { etag: string; lastModified: Date; contentLength?: number | undefined };
}

async function readBody(stream: NodeJS.ReadableStream | undefined): Promise<Uint8Array> {
  if (stream === undefined) return new Uint8Array(0);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk));
  }
  const joined = Buffer.concat(chunks);
  return new Uint8Array(joined.buffer, joined.byteOffset, joined.byteLength);
}

function isContainerName(name: unknown): name is string {
  return (
    typeof name === "string" &&
    name.length >= 3 &&
    name.length <= 63 &&
    /^[a-z0-9](?:[a-z0-9]|-(?!-))*[a-z0-9]$/.test(name)
  );
}

/** Where the next page starts: Azure's marker (none: the listing's first page), after `after`. */
interface PageToken {
  marker?: string | undefined;
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
      ((parsed as PageToken).marker === undefined ||
        typeof (parsed as PageToken).marker === "string") &&
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
