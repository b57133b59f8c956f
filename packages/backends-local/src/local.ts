import { type BigIntStats, closeSync } from "node:fs";
import { mkdir, stat, unlink } from "node:fs/promises";
import { resolve } from "node:path";
import {
  type Clock,
  type DeleteManyOptions,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  holdfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
  type ObjectStore,
  type Precondition,
  type PutOptions,
  type PutResult,
  type StorageOperation,
  type StoreCapabilities,
  systemClock,
  validatePrefix,
} from "@holdfast/conditional-store";
import { deleteBatch, deleteOne } from "./deletes.js";
import { LocalDisk, type LocalSync } from "./disk.js";
import { checkSignal, toHoldfastError } from "./errors.js";
import { locateObject, openObject, readExactly } from "./files.js";
import { assertNotOldLayout, etagOf, keyPaths, lastModifiedOf } from "./layout.js";
import { DEFAULT_LIST_WINDOW, FolderWindows, type ListingFolders, listPage } from "./listing.js";
import { isPrecondition, linkIfAbsent, replaceLocked } from "./writes.js";

/** Backend name reported by {@link LocalStore}. */
export const LOCAL_BACKEND = "local";

/** Options of {@link createLocalStore}. */
export interface LocalStoreOptions {
  /** Directory holding the objects. Relative paths resolve against the working directory. */
  root: string;
  /**
   * fsync each written file before it becomes visible, and its directory after, so a
   * write that answered survives a power loss (a write or delete with `durable: false`
   * skips the directory sync: docs/protocol.md §1, "On a local file system"). Turn off
   * only for scratch data.
   * @default true
   */
  fsync?: boolean;
  /** Create `root` (and parents) on first use when it is missing. @default true */
  createRoot?: boolean;
  /**
   * Clock that stamps Last-Modified (written as the file's mtime during the put).
   * @default systemClock
   */
  clock?: Clock;
  /**
   * Precision Last-Modified is reported at, in ms (floored). Raise it on filesystems with
   * coarse mtimes: 1000 for ext3/HFS+, 2000 for FAT.
   * @default 1
   */
  timestampPrecisionMs?: number;
  /** Most keys per list page. @default 1000 */
  pageSize?: number;
  /** Most keys per `deleteMany`. @default 1000 */
  maxBatchDelete?: number;
  /**
   * How long a write waits for another writer's lock on the same key before it is
   * refused (nothing written). A crashed holder's lock is released by the kernel at once.
   * @default 30_000
   */
  lockTimeoutMs?: number;
  /**
   * Called after every fsync the store makes (with `fsync` on): which write's file or
   * folder was synced. For tests and diagnostics that check which writes are durable.
   */
  onSync?: ((sync: LocalSync) => void) | undefined;
  /**
   * Most entries of one folder a listing holds in memory at once: a listing of a folder of
   * n keys reads the folder ⌈n / listWindow⌉ times (each page continues from the window the
   * last one stopped in) and holds about 100 bytes per entry of the window.
   * @default 100_000
   */
  listWindow?: number;
  /**
   * Called for every pass a listing makes over a folder's entries (one `opendir` read).
   * For tests and diagnostics that check how often a large folder is read.
   */
  onFolderRead?: ((dir: string) => void) | undefined;
}

/**
 * A holdfast `ObjectStore` over node:fs rooted at a directory, where each key is the plain
 * file `<root>/<key>` that any other program can read (and files other programs wrote
 * are objects). Create-only puts are atomic across processes by `link(2)` (which fails
 * with EEXIST); every other mutation of a key runs under a per-key OS-level lock (Linux
 * OFD lock / BSD flock), so compare-and-swap and conditional delete never
 * read-then-overwrite unguarded (scenario R3). Temp and lock files live under
 * `_holdfast/.local/`, which listing never shows.
 */
export class LocalStore implements ObjectStore {
  readonly backend = LOCAL_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #root: string;
  readonly #disk: LocalDisk;
  readonly #createRoot: boolean;
  readonly #pageSize: number;
  readonly #folders: ListingFolders;
  #ready: Promise<void> | undefined;

  constructor(options: LocalStoreOptions) {
    if (typeof options?.root !== "string" || options.root === "") {
      throw holdfastError("invalid-input", "open", "local store needs a root directory");
    }
    this.#root = resolve(options.root);
    this.#disk = new LocalDisk(this.#root, {
      fsync: options.fsync ?? true,
      clock: options.clock ?? systemClock,
      lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
      onSync: options.onSync,
    });
    this.#createRoot = options.createRoot ?? true;
    this.#pageSize = positiveInteger(options.pageSize ?? 1000, "pageSize");
    this.#folders = {
      windows: new FolderWindows(),
      window: positiveInteger(options.listWindow ?? DEFAULT_LIST_WINDOW, "listWindow"),
      onRead: options.onFolderRead,
    };
    this.location = `file://${this.#root}`;
    this.capabilities = {
      atomicConditionalUpdate: true,
      atomicConditionalDelete: true,
      timestampPrecisionMs: positiveInteger(
        options.timestampPrecisionMs ?? 1,
        "timestampPrecisionMs",
      ),
      maxBatchDelete: positiveInteger(options.maxBatchDelete ?? 1000, "maxBatchDelete"),
      requestMode: "completes-before-answer",
      etagIsContentHash: false,
    };
  }

  async get(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<GetResult | null> {
    const paths = keyPaths(this.#root, key, "get");
    checkSignal(options.signal, "get", key);
    await this.#ensureRoot("get");
    let opened: { fd: number; stats: BigIntStats } | null;
    try {
      opened = openObject(paths);
    } catch (error) {
      throw toHoldfastError(error, "get", key);
    }
    if (opened === null) return null;
    const { fd, stats } = opened;
    try {
      const body = await readExactly(fd, Number(stats.size));
      return {
        key,
        etag: etagOf(stats),
        lastModified: this.#lastModified(stats),
        size: body.byteLength,
        body,
      };
    } catch (error) {
      throw toHoldfastError(error, "get", key);
    } finally {
      closeSync(fd);
    }
  }

  async head(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<ObjectMeta | null> {
    const paths = keyPaths(this.#root, key, "head");
    checkSignal(options.signal, "head", key);
    await this.#ensureRoot("head");
    try {
      const found = await locateObject(paths);
      return found === null ? null : this.#meta(key, found.stats);
    } catch (error) {
      throw toHoldfastError(error, "head", key);
    }
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const paths = keyPaths(this.#root, key, "put");
    const precondition = options.precondition;
    checkSignal(options.signal, "put", key, precondition);
    if (!(body instanceof Uint8Array)) {
      throw holdfastError("invalid-input", "put", `body of ${key} is not a Uint8Array`, { key });
    }
    if (precondition !== undefined && !isPrecondition(precondition)) {
      throw holdfastError("invalid-input", "put", `malformed precondition on ${key}`, { key });
    }
    const durable = options.durable ?? true;
    if (typeof durable !== "boolean") {
      throw holdfastError("invalid-input", "put", `durable of ${key} is not a boolean`, { key });
    }
    await this.#ensureRoot("put", precondition);
    const { temp, etag } = await this.#disk.writeTemp(body, key, precondition);
    let consumed = false;
    try {
      if (precondition && "ifNoneMatch" in precondition) {
        await linkIfAbsent(this.#disk, temp, paths, key, precondition, durable);
        return { etag };
      }
      const replaced = await replaceLocked(
        this.#disk,
        temp,
        paths,
        key,
        precondition,
        options.signal,
        durable,
      );
      consumed = true; // renamed into place: the temp name is gone
      return replaced;
    } catch (error) {
      throw toHoldfastError(error, "put", key, precondition);
    } finally {
      // After link the temp name is a second link to the object; drop it.
      if (!consumed) await unlink(temp).catch(() => {});
    }
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    const paths = keyPaths(this.#root, key, "delete");
    const precondition = options.ifMatch === undefined ? undefined : { ifMatch: options.ifMatch };
    checkSignal(options.signal, "delete", key, precondition);
    const durable = options.durable ?? true;
    if (typeof durable !== "boolean") {
      throw holdfastError("invalid-input", "delete", `durable of ${key} is not a boolean`, { key });
    }
    await this.#ensureRoot("delete", precondition);
    try {
      await deleteOne(this.#disk, key, paths, precondition, options.signal, durable);
    } catch (error) {
      throw toHoldfastError(error, "delete", key, precondition);
    }
  }

  async deleteMany(
    keys: readonly string[],
    options: DeleteManyOptions = {},
  ): Promise<DeleteManyResult> {
    const max = this.capabilities.maxBatchDelete;
    if (keys.length > max) {
      throw holdfastError("invalid-input", "deleteMany", `batch of ${keys.length} exceeds ${max}`);
    }
    // Validate the whole batch first: a bad key rejects the batch before anything is deleted.
    const targets = keys.map((key) => ({ key, paths: keyPaths(this.#root, key, "deleteMany") }));
    checkSignal(options.signal, "deleteMany");
    await this.#ensureRoot("deleteMany");
    return deleteBatch(this.#disk, targets, options.signal, options.createOnly === true);
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix, "list");
    checkSignal(options.signal, "list");
    await this.#ensureRoot("list");
    const limit = Math.max(1, Math.min(options.pageSize ?? this.#pageSize, this.#pageSize));
    try {
      return await listPage(
        this.#root,
        prefix,
        options,
        limit,
        (key, stats) => this.#meta(key, stats),
        this.#folders,
      );
    } catch (error) {
      throw toHoldfastError(error, "list");
    }
  }

  // --- internals ---

  #ensureRoot(operation: StorageOperation, precondition?: Precondition): Promise<void> {
    this.#ready ??= (async () => {
      if (this.#createRoot) await mkdir(this.#root, { recursive: true });
      const info = await stat(this.#root);
      if (!info.isDirectory()) {
        throw holdfastError("refused", "open", `${this.#root} is not a directory`, {
          code: "ENOTDIR",
        });
      }
      await assertNotOldLayout(this.#root, "open");
    })();
    return this.#ready.catch((error: unknown) => {
      this.#ready = undefined;
      throw toHoldfastError(error, operation, undefined, precondition);
    });
  }

  #meta(key: string, stats: BigIntStats): ObjectMeta {
    return {
      key,
      etag: etagOf(stats),
      lastModified: this.#lastModified(stats),
      size: Number(stats.size),
    };
  }

  #lastModified(stats: BigIntStats): Date {
    return lastModifiedOf(stats, this.capabilities.timestampPrecisionMs);
  }
}

/**
 * Opens a {@link LocalStore} rooted at `options.root`. Nothing touches the disk until the
 * first request; the root is created then unless `createRoot: false`.
 */
export function createLocalStore(options: LocalStoreOptions): LocalStore {
  return new LocalStore(options);
}

// --- utils ---

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw holdfastError(
      "invalid-input",
      "open",
      `${name} must be a positive integer, got ${value}`,
    );
  }
  return value;
}
