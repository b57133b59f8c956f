import { createHash, randomBytes } from "node:crypto";
import {
  type FileHandle,
  link,
  mkdir,
  open,
  readdir,
  rename,
  stat,
  unlink,
} from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import {
  type Clock,
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
  systemClock,
  validateKey,
  validatePrefix,
} from "@holdfast/conditional-store";
import pMap from "p-map";

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

/** File-name suffix of an object; keeps `a/b` (file `a/b.hfobj`) apart from directory `a/b/`. */
export const LOCAL_OBJECT_SUFFIX = ".hfobj";

/** Hidden directory (under the root) that holds the per-key lock files. */
export const LOCAL_LOCK_DIR = ".holdfast-locks";

/**
 * A holdfast `ObjectStore` over node:fs rooted at a directory. Create-only puts are atomic
 * across processes by `link(2)` (which fails with EEXIST); every other mutation of a key
 * runs under a per-key OS-level lock (Linux OFD lock / BSD flock), so compare-and-swap and
 * conditional delete never read-then-overwrite unguarded (SPEC §2, scenario R3).
 */
export class LocalStore implements ObjectStore {
  readonly backend = LOCAL_BACKEND;
  readonly location: string;
  readonly capabilities: StoreCapabilities;
  readonly #root: string;
  readonly #fsync: boolean;
  readonly #createRoot: boolean;
  readonly #clock: Clock;
  readonly #pageSize: number;
  readonly #lockTimeoutMs: number;
  #ready: Promise<void> | undefined;

  constructor(options: LocalStoreOptions) {
    if (typeof options?.root !== "string" || options.root === "") {
      throw holdfastError("invalid-input", "open", "local store needs a root directory");
    }
    this.#root = resolve(options.root);
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
    const paths = this.#paths(key, "get");
    checkSignal(options.signal, "get", key);
    await this.#ensureRoot("get");
    let handle: FileHandle;
    try {
      handle = await open(paths.file, "r");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return null;
      throw toHoldfastError(error, "get", key);
    }
    try {
      const bytes = await handle.readFile();
      const info = await handle.stat();
      const etag = parseHeader(bytes, key, "get");
      return {
        key,
        etag,
        lastModified: this.#lastModified(info.mtimeMs),
        size: bytes.byteLength - HEADER_BYTES,
        body: new Uint8Array(
          bytes.buffer,
          bytes.byteOffset + HEADER_BYTES,
          bytes.byteLength - HEADER_BYTES,
        ),
      };
    } catch (error) {
      throw toHoldfastError(error, "get", key);
    } finally {
      await handle.close();
    }
  }

  async head(
    key: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<ObjectMeta | null> {
    const paths = this.#paths(key, "head");
    checkSignal(options.signal, "head", key);
    await this.#ensureRoot("head");
    return this.#readMeta(key, paths.file, "head");
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const paths = this.#paths(key, "put");
    const precondition = options.precondition;
    checkSignal(options.signal, "put", key, precondition);
    if (!(body instanceof Uint8Array)) {
      throw holdfastError("invalid-input", "put", `body of ${key} is not a Uint8Array`, { key });
    }
    if (precondition !== undefined && !isPrecondition(precondition)) {
      throw holdfastError("invalid-input", "put", `malformed precondition on ${key}`, { key });
    }
    await this.#ensureRoot("put", precondition);
    const etag = newEtag();
    // The temp file lives in the target's directory so link/rename stay on one filesystem.
    const temp = await this.#writeTemp(paths.dir, etag, body, key, precondition);
    try {
      if (precondition && "ifNoneMatch" in precondition) {
        // link(2) fails with EEXIST if the target exists, atomically, across processes:
        // no check-then-write window.
        try {
          await link(temp, paths.file);
        } catch (error) {
          throw toHoldfastError(error, "put", key, precondition);
        }
        await this.#syncDir(paths.dir, "put", key, precondition);
        return { etag };
      }
      await this.#withKeyLock(
        key,
        "put",
        precondition,
        options.signal,
        async () => {
          if (precondition && "ifMatch" in precondition) {
            const current = await this.#readMeta(key, paths.file, "put");
            if (current === null || current.etag !== precondition.ifMatch) {
              throw holdfastError(
                "conflict",
                "put",
                current === null ? `if-match on absent object ${key}` : `ETag mismatch on ${key}`,
                { key, precondition, code: current === null ? "ENOENT" : "ETAG_MISMATCH" },
              );
            }
          }
          try {
            await rename(temp, paths.file);
          } catch (error) {
            throw toHoldfastError(error, "put", key, precondition);
          }
          await this.#syncDir(paths.dir, "put", key, precondition);
          return false;
        },
        paths.lock,
      );
      return { etag };
    } finally {
      // After link the temp name is a second link to the object; after rename it is gone.
      await unlink(temp).catch(() => {});
    }
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<void> {
    const paths = this.#paths(key, "delete");
    const precondition = options.ifMatch === undefined ? undefined : { ifMatch: options.ifMatch };
    checkSignal(options.signal, "delete", key, precondition);
    await this.#ensureRoot("delete", precondition);
    await this.#deleteLocked(key, paths, precondition, options.signal);
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
    const targets = keys.map((key) => ({ key, paths: this.#paths(key, "deleteMany") }));
    checkSignal(options.signal, "deleteMany");
    await this.#ensureRoot("deleteMany");
    const deleted: string[] = [];
    const failed: DeleteManyResult["failed"] = [];
    await pMap(
      targets,
      async ({ key, paths }) => {
        try {
          await this.#deleteLocked(key, paths, undefined, options.signal);
          deleted.push(key);
        } catch (error) {
          failed.push({ key, error: toHoldfastError(error, "deleteMany", key) });
        }
      },
      { concurrency: DELETE_CONCURRENCY },
    );
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
      for await (const entry of walk(this.#root, "", prefix, after)) {
        if (found.length === limit) {
          more = true;
          break;
        }
        found.push(entry);
      }
    } catch (error) {
      throw toHoldfastError(error, "list");
    }
    const metas = await pMap(
      found,
      ({ key, file }) =>
        // A key deleted since the directory was read is simply not listed.
        this.#readMeta(key, file, "list"),
      { concurrency: READ_CONCURRENCY },
    );
    const objects = metas.filter((m): m is ObjectMeta => m !== null);
    const last = found.at(-1);
    return more && last !== undefined
      ? { objects, nextPageToken: encodePageToken(last.key) }
      : { objects };
  }

  // --- internals ---

  #paths(key: string, operation: StorageOperation): KeyPaths {
    validateKey(key, operation);
    const segments = key.split("/").map(encodeSegment);
    const name = `${segments.pop()!}${LOCAL_OBJECT_SUFFIX}`;
    for (const segment of [...segments, name]) {
      if (Buffer.byteLength(segment, "utf8") > MAX_NAME_BYTES) {
        throw holdfastError(
          "invalid-input",
          operation,
          `key ${JSON.stringify(key)} has a path segment too long for a file name`,
          {
            key,
            hint: `each encoded segment must fit in ${MAX_NAME_BYTES - LOCAL_OBJECT_SUFFIX.length} bytes`,
          },
        );
      }
    }
    const dir = join(this.#root, ...segments);
    const digest = createHash("sha256").update(key, "utf8").digest("hex");
    return {
      dir,
      file: join(dir, name),
      lock: join(this.#root, LOCAL_LOCK_DIR, digest.slice(0, 2), `${digest}.lock`),
    };
  }

  #ensureRoot(operation: StorageOperation, precondition?: Precondition): Promise<void> {
    this.#ready ??= (async () => {
      if (this.#createRoot) await mkdir(this.#root, { recursive: true });
      const info = await stat(this.#root);
      if (!info.isDirectory()) {
        throw holdfastError("refused", "open", `${this.#root} is not a directory`, {
          code: "ENOTDIR",
        });
      }
    })();
    return this.#ready.catch((error: unknown) => {
      this.#ready = undefined;
      throw toHoldfastError(error, operation, undefined, precondition);
    });
  }

  #lastModified(mtimeMs: number): Date {
    const p = this.capabilities.timestampPrecisionMs;
    return new Date(Math.floor(mtimeMs / p) * p);
  }

  async #readMeta(
    key: string,
    file: string,
    operation: StorageOperation,
  ): Promise<ObjectMeta | null> {
    let handle: FileHandle;
    try {
      handle = await open(file, "r");
    } catch (error) {
      if (errnoCode(error) === "ENOENT") return null;
      throw toHoldfastError(error, operation, key);
    }
    try {
      const header = Buffer.alloc(HEADER_BYTES);
      const { bytesRead } = await handle.read(header, 0, HEADER_BYTES, 0);
      const etag = parseHeader(header.subarray(0, bytesRead), key, operation);
      const info = await handle.stat();
      return {
        key,
        etag,
        lastModified: this.#lastModified(info.mtimeMs),
        size: info.size - HEADER_BYTES,
      };
    } catch (error) {
      throw toHoldfastError(error, operation, key);
    } finally {
      await handle.close();
    }
  }

  /** Writes header + body to a fresh hidden temp file next to the target, stamped and synced. */
  async #writeTemp(
    dir: string,
    etag: string,
    body: Uint8Array,
    key: string,
    precondition: Precondition | undefined,
  ): Promise<string> {
    const temp = join(dir, `.${randomBytes(12).toString("hex")}${TEMP_SUFFIX}`);
    try {
      await mkdir(dir, { recursive: true });
      const handle = await open(temp, "wx");
      try {
        await handle.writeFile(Buffer.concat([encodeHeader(etag), body]));
        // Last-Modified is the clock reading taken during this put (as an HTTP store
        // stamps it), not the kernel's coarse tick. Half a millisecond is added so the
        // float seconds → nanoseconds conversion can never round it below this ms.
        const stamp = (this.#clock.now() + 0.5) / 1000;
        await handle.utimes(stamp, stamp);
        if (this.#fsync) await handle.sync();
      } finally {
        await handle.close();
      }
      return temp;
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw toHoldfastError(error, "put", key, precondition);
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
      handle = await open(dir, "r");
      await handle.sync();
    } catch (error) {
      // The object is already visible; only its durability is in doubt.
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

  async #deleteLocked(
    key: string,
    paths: KeyPaths,
    precondition: { ifMatch: string } | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    await this.#withKeyLock(
      key,
      "delete",
      precondition,
      signal,
      async () => {
        if (precondition) {
          const current = await this.#readMeta(key, paths.file, "delete");
          if (current === null || current.etag !== precondition.ifMatch) {
            throw holdfastError(
              "conflict",
              "delete",
              current === null ? `if-match on absent object ${key}` : `ETag mismatch on ${key}`,
              { key, precondition, code: current === null ? "ENOENT" : "ETAG_MISMATCH" },
            );
          }
        }
        try {
          await unlink(paths.file);
        } catch (error) {
          if (errnoCode(error) === "ENOENT") return true;
          throw toHoldfastError(error, "delete", key, precondition);
        }
        await this.#syncDir(paths.dir, "delete", key, precondition);
        // The key is gone: drop its lock file too, so deleted keys leave nothing behind.
        return true;
      },
      paths.lock,
    );
  }

  /**
   * Runs `body` holding the key's lock: first this process's queue for the key (so waiters
   * do not spin), then an exclusive OS-level lock on the key's lock file, which excludes
   * other processes and is released by the kernel if the holder dies. When `body` returns
   * true the lock file is unlinked while still held; waiters holding the old inode notice
   * the swap and retry on the new file.
   */
  async #withKeyLock(
    key: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
    signal: AbortSignal | undefined,
    body: () => Promise<boolean>,
    lockPath: string,
  ): Promise<void> {
    await inProcessQueue(lockPath, async () => {
      const handle = await this.#acquireFileLock(lockPath, key, operation, precondition, signal);
      let removeLock = false;
      try {
        removeLock = await body();
      } finally {
        if (removeLock) await unlink(lockPath).catch(() => {});
        try {
          nativeLocks().unlock(handle.fd);
        } finally {
          await handle.close();
        }
      }
    });
  }

  async #acquireFileLock(
    lockPath: string,
    key: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
    signal: AbortSignal | undefined,
  ): Promise<FileHandle> {
    const deadline = Date.now() + this.#lockTimeoutMs;
    let pause = 1;
    for (;;) {
      let handle: FileHandle;
      try {
        await mkdir(dirname(lockPath), { recursive: true });
        // An exclusive lock needs a writable descriptor; "a+" creates the file if missing.
        handle = await open(lockPath, "a+");
      } catch (error) {
        throw toHoldfastError(error, operation, key, precondition);
      }
      try {
        // tryLock never blocks a libuv thread (waitForLock would, and enough blocked
        // waiters could starve the pool the lock holder needs to finish its write).
        while (!nativeLocks().tryLock(handle.fd)) {
          checkSignal(signal, operation, key, precondition);
          if (Date.now() > deadline) {
            throw holdfastError("refused", operation, `timed out waiting for the lock on ${key}`, {
              key,
              precondition,
              code: "ELOCKTIMEOUT",
              hint: "another process holds this key's lock; nothing was written",
            });
          }
          await sleep(pause + Math.random() * pause);
          pause = Math.min(pause * 2, 20);
        }
        // The previous holder may have unlinked the lock file (key deleted) after we
        // opened it: then we hold a lock nobody else can see; start over on the new file.
        const [held, current] = await Promise.all([
          handle.stat(),
          stat(lockPath).catch(() => null),
        ]);
        if (current !== null && current.ino === held.ino && current.dev === held.dev) return handle;
      } catch (error) {
        await handle.close();
        throw error;
      }
      nativeLocks().unlock(handle.fd);
      await handle.close();
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

/**
 * Translates a node:fs failure into the holdfast taxonomy. A local put completes before
 * it answers, so everything but a precondition failure is a refusal, never ambiguous.
 */
export function toHoldfastError(
  error: unknown,
  operation: StorageOperation,
  key?: string,
  precondition?: Precondition,
): HoldfastError {
  if (isHoldfastError(error)) return error;
  const code = errnoCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const fields = { key, precondition, code, cause: error };
  switch (code) {
    case "EEXIST":
      return precondition && "ifNoneMatch" in precondition
        ? holdfastError("conflict", operation, `object already exists: ${key}`, fields)
        : holdfastError("refused", operation, message, fields);
    case "ENOENT":
      return precondition && "ifMatch" in precondition
        ? holdfastError("conflict", operation, `if-match on absent object ${key}`, fields)
        : holdfastError("refused", operation, message, fields);
    case "EACCES":
    case "EPERM":
      return holdfastError("auth", operation, message, {
        ...fields,
        hint: "check the permissions of the store's root directory",
      });
    case "ENAMETOOLONG":
      return holdfastError("invalid-input", operation, message, fields);
    case "ENOTSUP":
    case "EOPNOTSUPP":
    case "EXDEV":
      return holdfastError("unsupported", operation, message, {
        ...fields,
        hint: "the local backend needs hard links, rename and file locks on one filesystem",
      });
    case "ABORT_ERR":
      return holdfastError("aborted", operation, message, fields);
    default:
      return holdfastError("refused", operation, message, fields);
  }
}

// --- utils ---

interface KeyPaths {
  /** Directory that holds the object file (created on write). */
  readonly dir: string;
  /** The object file, `<encoded segments>/<encoded last>.hfobj`. */
  readonly file: string;
  /** The key's lock file under `.holdfast-locks/`, named by the key's SHA-256. */
  readonly lock: string;
}

/** `HFO1` + 32 lowercase hex ETag + `\n`: a fixed header so head/list read 37 bytes. */
const HEADER_MAGIC = "HFO1";
const ETAG_HEX = 32;
const HEADER_BYTES = HEADER_MAGIC.length + ETAG_HEX + 1;
const HEADER_PATTERN = /^HFO1([0-9a-f]{32})\n$/;
const TEMP_SUFFIX = ".hftmp";
/** NAME_MAX on Linux, macOS and Windows filesystems. */
const MAX_NAME_BYTES = 255;
const DELETE_CONCURRENCY = 8;
const READ_CONCURRENCY = 16;

function newEtag(): string {
  return randomBytes(ETAG_HEX / 2).toString("hex");
}

function encodeHeader(etag: string): Buffer {
  return Buffer.from(`${HEADER_MAGIC}${etag}\n`, "latin1");
}

function parseHeader(bytes: Uint8Array, key: string, operation: StorageOperation): string {
  const header = Buffer.from(
    bytes.buffer,
    bytes.byteOffset,
    Math.min(bytes.byteLength, HEADER_BYTES),
  );
  const match = HEADER_PATTERN.exec(header.toString("latin1"));
  if (!match) {
    throw holdfastError("refused", operation, `file of ${key} is not a holdfast object`, {
      key,
      code: "EBADOBJ",
      hint: "a file ending in .hfobj was written by something other than the local backend",
    });
  }
  return match[1]!;
}

/**
 * Maps one key segment to a file-system name: `%` → `%25`; a leading `.` → `%2E` (hidden
 * names are the store's own: temp files, the lock directory); a trailing `.hfobj` gets its
 * dot escaped, so a directory name never looks like an object file. Injective and reversible.
 */
export function encodeSegment(segment: string): string {
  let out = segment.replaceAll("%", "%25");
  if (out.startsWith(".")) out = `%2E${out.slice(1)}`;
  if (out.endsWith(LOCAL_OBJECT_SUFFIX)) {
    out = `${out.slice(0, -LOCAL_OBJECT_SUFFIX.length)}%2E${LOCAL_OBJECT_SUFFIX.slice(1)}`;
  }
  return out;
}

/** Inverse of {@link encodeSegment}. */
export function decodeSegment(name: string): string {
  return name.replace(/%(25|2E)/g, (_, hex: string) => (hex === "25" ? "%" : "."));
}

/**
 * Yields objects under `dir` in UTF-8 byte order of their keys, starting strictly after
 * `after` and only those starting with `prefix`. An object `seg` sorts by `seg`, a
 * directory by `seg/`; since segments hold no `/`, a depth-first walk in that order is
 * global key order. Subtrees entirely outside the prefix or before `after` are skipped.
 */
async function* walk(
  dir: string,
  keyPrefix: string,
  prefix: string,
  after: string,
): AsyncGenerator<{ key: string; file: string }> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = errnoCode(error);
    // A directory removed since its parent was read holds nothing to list.
    if (code === "ENOENT" || code === "ENOTDIR") return;
    throw error;
  }
  const items: { sortKey: string; name: string; isDir: boolean }[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue; // temp files, lock directory
    if (entry.isDirectory()) {
      items.push({
        sortKey: `${keyPrefix}${decodeSegment(entry.name)}/`,
        name: entry.name,
        isDir: true,
      });
    } else if (entry.isFile() && entry.name.endsWith(LOCAL_OBJECT_SUFFIX)) {
      const segment = decodeSegment(entry.name.slice(0, -LOCAL_OBJECT_SUFFIX.length));
      items.push({ sortKey: `${keyPrefix}${segment}`, name: entry.name, isDir: false });
    }
  }
  items.sort((a, b) => compareKeys(a.sortKey, b.sortKey));
  for (const item of items) {
    const path = join(dir, item.name);
    if (item.isDir) {
      const sub = item.sortKey;
      if (!sub.startsWith(prefix) && !prefix.startsWith(sub)) continue;
      if (after !== "" && compareKeys(sub, after) < 0 && !after.startsWith(sub)) continue;
      yield* walk(path, sub, prefix, after);
    } else {
      const key = item.sortKey;
      if (!key.startsWith(prefix)) continue;
      if (after !== "" && compareKeys(key, after) <= 0) continue;
      if (!isValidKey(key)) continue; // a foreign file whose name decodes to no valid key
      yield { key, file: path };
    }
  }
}

/** `{ ifNoneMatch: "*" }` or `{ ifMatch: <non-empty string> }`, nothing else. */
function isPrecondition(value: unknown): value is Precondition {
  if (typeof value !== "object" || value === null) return false;
  const p = value as { ifNoneMatch?: unknown; ifMatch?: unknown };
  if ("ifNoneMatch" in p) return p.ifNoneMatch === "*" && !("ifMatch" in p);
  return typeof p.ifMatch === "string" && p.ifMatch !== "";
}

function isValidKey(key: string): boolean {
  try {
    validateKey(key);
    return true;
  } catch {
    return false;
  }
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

function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function checkSignal(
  signal: AbortSignal | undefined,
  operation: StorageOperation,
  key?: string,
  precondition?: Precondition,
): void {
  if (signal?.aborted) {
    throw holdfastError("aborted", operation, `${operation} aborted`, {
      key,
      precondition,
      cause: signal.reason,
    });
  }
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

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

interface NativeLocks {
  tryLock(fd: number): boolean;
  unlock(fd: number): void;
}

let native: NativeLocks | undefined;

/** Loads the native lock binding on first use (a store that only reads never needs it). */
function nativeLocks(): NativeLocks {
  native ??= createRequire(import.meta.url)("fs-native-extensions") as NativeLocks;
  return native;
}

const queues = new Map<string, Promise<void>>();

/** Serializes this process's critical sections per lock file, across all store instances. */
async function inProcessQueue(lockPath: string, run: () => Promise<void>): Promise<void> {
  const previous = queues.get(lockPath) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((done) => {
    release = done;
  });
  const tail = previous.then(() => mine);
  queues.set(lockPath, tail);
  await previous;
  try {
    await run();
  } finally {
    release();
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  }
}
