import { randomBytes, randomInt } from "node:crypto";
import { type BigIntStats, closeSync } from "node:fs";
import {
  type FileHandle,
  link,
  mkdir,
  open,
  rename,
  rm,
  rmdir,
  stat,
  unlink,
} from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import {
  type Clock,
  compareKeys,
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
import pMap from "p-map";
import { checkSignal, errnoCode, toHoldfastError } from "./errors.js";
import {
  locateObject,
  lstatOrNull,
  openObject,
  readExactly,
  stampAfter,
  statFile,
  unlinkObject,
} from "./files.js";
import {
  assertNotOldLayout,
  etagOf,
  type KeyPaths,
  keyPaths,
  LOCAL_INTERNAL_PREFIX,
  LOCAL_SELF_NAME,
  lastModifiedOf,
} from "./layout.js";
import { walk } from "./listing.js";
import { lockPathOf, nativeExtensions, withKeyLock } from "./locks.js";

/** Backend name reported by {@link LocalStore}. */
export const LOCAL_BACKEND = "local";

/** Options of {@link createLocalStore}. */
export interface LocalStoreOptions {
  /** Directory holding the objects. Relative paths resolve against the working directory. */
  root: string;
  /**
   * fsync each written file before it becomes visible, and its directory after, so a
   * write that answered survives a power loss. Turn off only for scratch data.
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
  readonly #tmpDir: string;
  readonly #fsync: boolean;
  readonly #createRoot: boolean;
  readonly #clock: Clock;
  readonly #pageSize: number;
  readonly #lockTimeoutMs: number;
  #ready: Promise<void> | undefined;
  #tmpReady: Promise<unknown> | undefined;

  constructor(options: LocalStoreOptions) {
    if (typeof options?.root !== "string" || options.root === "") {
      throw holdfastError("invalid-input", "open", "local store needs a root directory");
    }
    this.#root = resolve(options.root);
    this.#tmpDir = join(this.#root, LOCAL_INTERNAL_PREFIX, "tmp");
    this.#fsync = options.fsync ?? true;
    this.#createRoot = options.createRoot ?? true;
    this.#clock = options.clock ?? systemClock;
    this.#pageSize = positiveInteger(options.pageSize ?? 1000, "pageSize");
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
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
      opened = await openObject(paths);
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
    await this.#ensureRoot("put", precondition);
    const written = await this.#writeTemp(body, key, precondition);
    const temp = written.temp;
    let etag = written.etag;
    let consumed = false;
    try {
      if (precondition && "ifNoneMatch" in precondition) {
        await this.#linkIfAbsent(temp, paths, key, precondition);
      } else {
        for (let attempt = 0; ; attempt += 1) {
          const outcome = await this.#withLock(key, "put", precondition, options.signal, () =>
            this.#replace(temp, paths, key, precondition),
          );
          if (outcome !== "needs-folders") {
            etag = outcome.etag;
            break;
          }
          // Folders are made outside the key's lock: making one may take another key's
          // lock (a file that becomes a folder), and two keys may share a lock file.
          if (attempt >= MAX_PATH_RETRIES) throw pathRaceError("put", key, precondition);
          await this.#makeParents(paths, key, "put", precondition);
        }
        consumed = true; // renamed into place: the temp name is gone
      }
      return { etag };
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
    await this.#ensureRoot("delete", precondition);
    try {
      const folder = await this.#unlinkLocked(key, paths, precondition, options.signal);
      if (folder !== null) {
        await this.#syncDir(folder, "delete", key, precondition);
        await this.#removeEmptyDirs([folder]);
      }
    } catch (error) {
      throw toHoldfastError(error, "delete", key, precondition);
    }
  }

  async deleteMany(
    keys: readonly string[],
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<DeleteManyResult> {
    const max = this.capabilities.maxBatchDelete;
    if (keys.length > max) {
      throw holdfastError("invalid-input", "deleteMany", `batch of ${keys.length} exceeds ${max}`);
    }
    // Validate the whole batch first: a bad key rejects the batch before anything is deleted.
    const targets = keys.map((key) => ({ key, paths: keyPaths(this.#root, key, "deleteMany") }));
    checkSignal(options.signal, "deleteMany");
    await this.#ensureRoot("deleteMany");
    const deleted: string[] = [];
    const failed: DeleteManyResult["failed"] = [];
    const unlinkedIn = new Map<string, string[]>(); // folder → keys unlinked from it
    // Keys that share a lock file are unlinked in one critical section: one open, two fcntl
    // and one close per lock file the batch touches (at most LOCK_STRIPES), not per key.
    const byLock = new Map<string, typeof targets>();
    for (const target of targets) {
      const lockPath = lockPathOf(this.#root, target.key);
      const group = byLock.get(lockPath);
      if (group) group.push(target);
      else byLock.set(lockPath, [target]);
    }
    await pMap(
      byLock,
      async ([lockPath, group]) => {
        let done = 0;
        try {
          await withKeyLock(
            lockPath,
            this.#lockRequest(group[0]!.key, "deleteMany", options.signal),
            async () => {
              for (const { key, paths } of group) {
                try {
                  const folder = await unlinkObject(key, paths, undefined);
                  if (folder === null) deleted.push(key);
                  else unlinkedIn.set(folder, [...(unlinkedIn.get(folder) ?? []), key]);
                } catch (error) {
                  failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
                }
                done += 1;
              }
            },
          );
        } catch (error) {
          // The lock was not had (timeout, abort): the keys not yet tried are not deleted.
          for (const { key } of group.slice(done)) {
            failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
          }
        }
      },
      { concurrency: DELETE_CONCURRENCY },
    );
    // One directory sync per folder for the whole batch, after all its unlinks: a key is
    // reported deleted only once its removal is durable.
    await pMap(
      unlinkedIn,
      async ([folder, folderKeys]) => {
        try {
          await this.#syncDir(folder, "deleteMany", folderKeys[0]!, undefined);
          deleted.push(...folderKeys);
        } catch (error) {
          for (const key of folderKeys) {
            failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
          }
        }
      },
      { concurrency: DELETE_CONCURRENCY },
    );
    await this.#removeEmptyDirs([...unlinkedIn.keys()]);
    return { deleted, failed };
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListPage> {
    validatePrefix(prefix, "list");
    checkSignal(options.signal, "list");
    await this.#ensureRoot("list");
    const limit = Math.max(1, Math.min(options.pageSize ?? this.#pageSize, this.#pageSize));
    let after = options.startAfter ?? "";
    if (options.pageToken !== undefined) {
      const fromToken = decodePageToken(options.pageToken);
      if (compareKeys(fromToken, after) > 0) after = fromToken;
    }
    const found: { key: string; file: string }[] = [];
    let more = false;
    try {
      for await (const entry of walk(this.#root, "", { prefix, after })) {
        if (found.length === limit) {
          more = true;
          break;
        }
        found.push(entry);
      }
      const metas = await pMap(
        found,
        // A key deleted since the directory was read is simply not listed.
        async ({ key, file }) => {
          const stats = await statFile(file);
          return stats === null ? null : this.#meta(key, stats);
        },
        { concurrency: READ_CONCURRENCY },
      );
      const objects = metas.filter((m): m is ObjectMeta => m !== null);
      const last = found.at(-1);
      return more && last !== undefined
        ? { objects, nextPageToken: encodePageToken(last.key) }
        : { objects };
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

  /**
   * Writes the body to a fresh temp file under `_holdfast/.local/tmp/`, stamps its mtime
   * with the clock reading and (with `fsync`) syncs it. Its stat after that is the
   * object's ETag: linking or renaming it into place keeps inode, size and mtime.
   */
  async #writeTemp(
    body: Uint8Array,
    key: string,
    precondition: Precondition | undefined,
  ): Promise<{ temp: string; etag: string }> {
    this.#tmpReady ??= mkdir(this.#tmpDir, { recursive: true }).catch((error: unknown) => {
      this.#tmpReady = undefined;
      throw error;
    });
    const temp = join(this.#tmpDir, `${randomBytes(12).toString("hex")}.tmp`);
    try {
      await this.#tmpReady;
      const handle = await open(temp, "wx").catch(async (error: unknown) => {
        if (errnoCode(error) !== "ENOENT") throw error;
        // Someone removed the temp folder: make it again, once.
        await mkdir(this.#tmpDir, { recursive: true });
        return open(temp, "wx");
      });
      try {
        await handle.writeFile(body);
        // Last-Modified is the clock reading taken during this put (as an HTTP store
        // stamps it), not the kernel's coarse tick; a random 1..999 µs on top keeps the
        // millisecond and makes the mtime (part of the ETag) differ between writes.
        const stamp = (Math.floor(this.#clock.now()) + randomInt(1, 1000) / 1000) / 1000;
        await handle.utimes(stamp, stamp);
        if (this.#fsync) await handle.sync();
        return { temp, etag: etagOf(await handle.stat({ bigint: true })) };
      } finally {
        await handle.close();
      }
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw toHoldfastError(error, "put", key, precondition);
    }
  }

  /**
   * Create-only: `link(temp, <root>/<key>)` fails with EEXIST if anything is at the path,
   * atomically across processes, so there is no check-then-write window. When the path is
   * a directory (other keys live below the key), the object goes to its self file by the
   * same link; a directory and a file can never share the path, so the key never exists
   * in both places. A parent directory removed meanwhile is made again.
   */
  async #linkIfAbsent(
    temp: string,
    paths: KeyPaths,
    key: string,
    precondition: Precondition,
  ): Promise<void> {
    let target = paths.path;
    for (let attempt = 0; ; attempt += 1) {
      if (attempt > MAX_PATH_RETRIES) throw pathRaceError("put", key, precondition);
      try {
        await link(temp, target);
      } catch (error) {
        const code = errnoCode(error);
        const missing = code === "ENOENT" || code === "ENOTDIR";
        if (target === paths.self) {
          // The directory vanished (or became a file): start over at the plain path.
          if (missing) target = paths.path;
          else if (code === "EEXIST") throw conflictError("put", key, precondition);
          else throw error;
        } else if (missing) {
          await this.#makeParents(paths, key, "put", precondition);
        } else if (code === "EEXIST") {
          const existing = await lstatOrNull(paths.path);
          if (existing?.isDirectory()) target = paths.self;
          else if (existing !== null) throw conflictError("put", key, precondition);
        } else {
          throw error;
        }
        continue;
      }
      await this.#syncDir(dirname(target), "put", key, precondition);
      return;
    }
  }

  /**
   * Unconditional put or compare-and-swap, under the key's lock: rename the temp into place
   * (the plain path, or the self file while the path is a directory).
   */
  async #replace(
    temp: string,
    paths: KeyPaths,
    key: string,
    precondition: { ifMatch: string } | undefined,
  ): Promise<{ etag: string } | "needs-folders"> {
    let target = paths.path;
    const current = await locateObject(paths);
    // Under the lock every write of this key sees the one before it: stamping strictly
    // later than it keeps the key's ETags strictly increasing, so an ETag the key had
    // earlier never comes back even when the filesystem hands a freed inode number to
    // the new file within the same millisecond (R9: a stale owner's if-match must fail).
    const etag = await stampAfter(temp, current?.stats ?? null);
    if (precondition) {
      if (current === null || etagOf(current.stats) !== precondition.ifMatch) {
        throw holdfastError(
          "conflict",
          "put",
          current === null ? `if-match on absent object ${key}` : `ETag mismatch on ${key}`,
          { key, precondition, code: current === null ? "ENOENT" : "ETAG_MISMATCH" },
        );
      }
      // Under the lock the object cannot move or vanish: every other mutation of the key
      // takes the same lock, and a directory holding its self file is never removed.
      target = current.file;
    }
    for (let attempt = 0; ; attempt += 1) {
      if (attempt > MAX_PATH_RETRIES || (precondition && attempt > 0)) {
        throw pathRaceError("put", key, precondition);
      }
      try {
        await rename(temp, target);
      } catch (error) {
        const code = errnoCode(error);
        const missing = code === "ENOENT" || code === "ENOTDIR";
        if (precondition) throw error;
        if (target === paths.self) {
          if (!missing) throw error;
          target = paths.path; // the directory vanished: start over at the plain path
        } else if (missing) {
          return "needs-folders";
        } else if (code === "EISDIR" || code === "ENOTEMPTY" || code === "EEXIST") {
          target = paths.self; // the path is a directory: the object is its self file
        } else {
          throw error;
        }
        continue;
      }
      await this.#syncDir(dirname(target), "put", key, precondition);
      return { etag };
    }
  }

  /**
   * Makes the key's parent directories. Where an ancestor path is a file (an object whose
   * key is a prefix of this one, e.g. `a/b` when writing `a/b/c`), that object becomes a
   * directory holding it as its self file: under the ancestor key's lock, its self file is
   * hard-linked into a staged directory that is then atomically exchanged with the file
   * (renameat2 RENAME_EXCHANGE), so readers and writers of the ancestor always find it,
   * with an unchanged ETag.
   */
  async #makeParents(
    paths: KeyPaths,
    key: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
  ): Promise<void> {
    const dir = dirname(paths.path);
    try {
      const first = await mkdir(dir, { recursive: true });
      if (first !== undefined) await this.#syncCreated(first, dir, key, operation, precondition);
      return;
    } catch (error) {
      const code = errnoCode(error);
      // A folder on the way was removed by a concurrent delete: the caller tries again.
      if (code === "ENOENT") return;
      if (code !== "EEXIST" && code !== "ENOTDIR") throw error;
    }
    for (let depth = 1; depth < paths.segments.length; depth += 1) {
      const ancestorKey = paths.segments.slice(0, depth).join("/");
      const ancestor = join(this.#root, ...paths.segments.slice(0, depth));
      const info = await lstatOrNull(ancestor);
      if (info === null) return; // removed meanwhile: the caller tries again
      if (info.isDirectory()) continue;
      if (!info.isFile()) {
        throw holdfastError("refused", operation, `${ancestor} is neither a file nor a folder`, {
          key,
          precondition,
          code: "ENOTDIR",
        });
      }
      await this.#fileToDirectory(ancestorKey, ancestor, operation, precondition);
      return;
    }
  }

  async #fileToDirectory(
    ancestorKey: string,
    path: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
  ): Promise<void> {
    await this.#withLock(ancestorKey, operation, precondition, undefined, async () => {
      const info = await lstatOrNull(path);
      if (info?.isFile()) {
        await mkdir(this.#tmpDir, { recursive: true });
        const staged = join(this.#tmpDir, `${randomBytes(12).toString("hex")}.dir`);
        await mkdir(staged);
        try {
          await link(path, join(staged, LOCAL_SELF_NAME));
          await nativeExtensions().swap(path, staged);
        } finally {
          // After the exchange `staged` names the old file (still linked as the self file).
          await rm(staged, { recursive: true, force: true });
        }
        await this.#syncDir(dirname(path), operation, ancestorKey, precondition);
        await this.#syncDir(path, operation, ancestorKey, precondition);
      }
    });
  }

  /** Syncs the parents of directories `mkdir -p` just created, so their entries are durable. */
  async #syncCreated(
    first: string,
    leaf: string,
    key: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
  ): Promise<void> {
    if (!this.#fsync) return;
    let dir = dirname(first);
    const below = relative(first, leaf)
      .split(sep)
      .filter((s) => s !== "");
    await this.#syncDir(dir, operation, key, precondition);
    dir = first;
    for (const segment of below) {
      await this.#syncDir(dir, operation, key, precondition);
      dir = join(dir, segment);
    }
  }

  async #syncDir(
    dir: string,
    operation: StorageOperation,
    key: string,
    precondition: Precondition | undefined,
  ): Promise<void> {
    if (!this.#fsync) return;
    let handle: FileHandle | undefined;
    try {
      // A concurrent delete may have emptied and removed the folder meanwhile: then its
      // removal is what must be durable, recorded in the nearest folder still there.
      for (let current = dir; handle === undefined; current = dirname(current)) {
        handle = await open(current, "r").catch((error: unknown) => {
          if (errnoCode(error) === "ENOENT" && current !== this.#root) return undefined;
          throw error;
        });
      }
      await handle.sync();
    } catch (error) {
      // The change is already visible; only its durability is in doubt.
      throw holdfastError("ambiguous", operation, `could not sync directory of ${key}`, {
        key,
        precondition,
        code: errnoCode(error),
        cause: error,
      });
    } finally {
      await handle?.close();
    }
  }

  /**
   * Unlinks the key's object under its lock and answers the folder it was unlinked from
   * (null when the key was absent); syncing that folder is the caller's (once per batch).
   * Unconditional deletes take the lock too: a compare-and-swap that compared before the
   * unlink renames after it, and would resurrect the key (R3). The lock costs one open,
   * two fcntl and one close on a permanent lock file.
   */
  async #unlinkLocked(
    key: string,
    paths: KeyPaths,
    precondition: { ifMatch: string } | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string | null> {
    return this.#withLock(key, "delete", precondition, signal, () =>
      unlinkObject(key, paths, precondition),
    );
  }

  #lockRequest(key: string, operation: StorageOperation, signal?: AbortSignal) {
    return { key, operation, precondition: undefined, signal, timeoutMs: this.#lockTimeoutMs };
  }

  #withLock<T>(
    key: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
    signal: AbortSignal | undefined,
    body: () => Promise<T>,
  ): Promise<T> {
    return withKeyLock(
      lockPathOf(this.#root, key),
      { ...this.#lockRequest(key, operation, signal), precondition },
      body,
    );
  }

  /**
   * Removes the given folders and their ancestors below the root while they are empty,
   * deepest first, trying each folder once. rmdir(2) refuses a non-empty folder
   * atomically, so this never removes anything another writer put there; a writer whose
   * folder vanished meanwhile makes it again (ENOENT → mkdir). Best effort: a folder
   * that stays (or comes back after a crash) is empty and harmless.
   */
  async #removeEmptyDirs(folders: readonly string[]): Promise<void> {
    const candidates = new Set<string>();
    for (const folder of folders) {
      for (let dir = folder; dir.startsWith(`${this.#root}${sep}`); dir = dirname(dir)) {
        candidates.add(dir);
      }
    }
    const kept = new Set<string>();
    for (const dir of [...candidates].sort((a, b) => b.length - a.length)) {
      if (kept.has(dir)) continue;
      try {
        await rmdir(dir);
      } catch {
        // Not empty (or gone): neither are its ancestors worth trying.
        for (let up = dirname(dir); candidates.has(up) && !kept.has(up); up = dirname(up)) {
          kept.add(up);
        }
      }
    }
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

const DELETE_CONCURRENCY = 8;
const READ_CONCURRENCY = 16;
/** Rounds a write retries when directories appear or vanish under it (each round made progress elsewhere). */
const MAX_PATH_RETRIES = 64;

function conflictError(operation: StorageOperation, key: string, precondition: Precondition) {
  return holdfastError("conflict", operation, `object already exists: ${key}`, {
    key,
    precondition,
    code: "EEXIST",
  });
}

function pathRaceError(
  operation: StorageOperation,
  key: string,
  precondition: Precondition | undefined,
) {
  return holdfastError("refused", operation, `folders of ${key} kept changing; nothing written`, {
    key,
    precondition,
    code: "EPATHRACE",
  });
}

/** `{ ifNoneMatch: "*" }` or `{ ifMatch: <non-empty string> }`, nothing else. */
function isPrecondition(value: unknown): value is Precondition {
  if (typeof value !== "object" || value === null) return false;
  const p = value as { ifNoneMatch?: unknown; ifMatch?: unknown };
  if ("ifNoneMatch" in p) return p.ifNoneMatch === "*" && !("ifMatch" in p);
  return typeof p.ifMatch === "string" && p.ifMatch !== "";
}

function encodePageToken(key: string): string {
  return Buffer.from(key, "utf8").toString("base64url");
}

function decodePageToken(token: string): string {
  const key = Buffer.from(token, "base64url").toString("utf8");
  if (token === "" || encodePageToken(key) !== token) {
    throw holdfastError("invalid-input", "list", "malformed page token");
  }
  return key;
}

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
