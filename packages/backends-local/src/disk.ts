import { randomBytes, randomInt } from "node:crypto";
import { type FileHandle, mkdir, open, unlink } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import {
  type Clock,
  holdfastError,
  type Precondition,
  type StorageOperation,
} from "@holdfast/conditional-store";
import { errnoCode, toHoldfastError } from "./errors.js";
import { etagOf, LOCAL_INTERNAL_PREFIX } from "./layout.js";
import { type LockRequest, lockPathOf, withKeyLock } from "./locks.js";

/**
 * One fsync the store made for a write (`LocalStoreOptions.onSync`): the temp file that
 * becomes the object (`file`) or a folder whose entries the write changed (`folder`).
 */
export interface LocalSync {
  readonly operation: StorageOperation;
  /** The key whose write the sync makes durable (each key of a batch delete's folder). */
  readonly key: string;
  readonly target: "file" | "folder";
  /** The synced path, relative to the root (`""` for the root itself). */
  readonly path: string;
}

/**
 * One store root as the write and delete steps use it: temp files written and synced
 * before they become objects, directory syncs that make a change durable, and the
 * per-key locks with the store's lock timeout.
 */
export class LocalDisk {
  readonly root: string;
  readonly tmpDir: string;
  readonly #fsync: boolean;
  readonly #clock: Clock;
  readonly #lockTimeoutMs: number;
  readonly #onSync: ((sync: LocalSync) => void) | undefined;
  #tmpReady: Promise<unknown> | undefined;

  constructor(
    root: string,
    options: {
      fsync: boolean;
      clock: Clock;
      lockTimeoutMs: number;
      onSync?: ((sync: LocalSync) => void) | undefined;
    },
  ) {
    this.root = root;
    this.tmpDir = join(root, LOCAL_INTERNAL_PREFIX, "tmp");
    this.#fsync = options.fsync;
    this.#clock = options.clock;
    this.#lockTimeoutMs = options.lockTimeoutMs;
    this.#onSync = options.onSync;
  }

  /**
   * Writes the body to a fresh temp file under `_holdfast/.local/tmp/`, stamps its mtime
   * with the clock reading and (with `fsync`) syncs it, whatever the write's durability:
   * its bytes are on disk before its name is, so no crash leaves a torn object. Its stat
   * after that is the object's ETag: linking or renaming it into place keeps inode, size
   * and mtime.
   */
  async writeTemp(
    body: Uint8Array,
    key: string,
    precondition: Precondition | undefined,
  ): Promise<{ temp: string; etag: string }> {
    this.#tmpReady ??= mkdir(this.tmpDir, { recursive: true }).catch((error: unknown) => {
      this.#tmpReady = undefined;
      throw error;
    });
    const temp = join(this.tmpDir, `${randomBytes(12).toString("hex")}.tmp`);
    try {
      await this.#tmpReady;
      const handle = await open(temp, "wx").catch(async (error: unknown) => {
        if (errnoCode(error) !== "ENOENT") throw error;
        // Someone removed the temp folder: make it again, once.
        await mkdir(this.tmpDir, { recursive: true });
        return open(temp, "wx");
      });
      try {
        await handle.writeFile(body);
        // Last-Modified is the clock reading taken during this put (as an HTTP store
        // stamps it), not the kernel's coarse tick; a random 1..999 µs on top keeps the
        // millisecond and makes the mtime (part of the ETag) differ between writes.
        const stamp = (Math.floor(this.#clock.now()) + randomInt(1, 1000) / 1000) / 1000;
        await handle.utimes(stamp, stamp);
        if (this.#fsync) {
          await handle.sync();
          this.#notify("put", [key], "file", temp);
        }
        return { temp, etag: etagOf(await handle.stat({ bigint: true })) };
      } finally {
        await handle.close();
      }
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw toHoldfastError(error, "put", key, precondition);
    }
  }

  /** Syncs the parents of directories `mkdir -p` just created, so their entries are durable. */
  async syncCreated(
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
    await this.syncDir(dir, operation, key, precondition);
    dir = first;
    for (const segment of below) {
      await this.syncDir(dir, operation, key, precondition);
      dir = join(dir, segment);
    }
  }

  /**
   * Syncs a folder whose entries a write of `key` changed (for a batch: of every key in
   * `keys`), so the change survives a power loss.
   */
  async syncDir(
    dir: string,
    operation: StorageOperation,
    key: string,
    precondition: Precondition | undefined,
    keys: readonly string[] = [key],
  ): Promise<void> {
    if (!this.#fsync) return;
    let handle: FileHandle | undefined;
    let synced = dir;
    try {
      // A concurrent delete may have emptied and removed the folder meanwhile: then its
      // removal is what must be durable, recorded in the nearest folder still there.
      for (let current = dir; handle === undefined; current = dirname(current)) {
        synced = current;
        handle = await open(current, "r").catch((error: unknown) => {
          if (errnoCode(error) === "ENOENT" && current !== this.root) return undefined;
          throw error;
        });
      }
      await handle.sync();
      this.#notify(operation, keys, "folder", synced);
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

  #notify(
    operation: StorageOperation,
    keys: readonly string[],
    target: LocalSync["target"],
    path: string,
  ): void {
    if (!this.#onSync) return;
    const rel = relative(this.root, path).split(sep).join("/");
    for (const key of keys) this.#onSync({ operation, key, target, path: rel });
  }

  /** What a wait for `key`'s lock file reports when it times out or is aborted. */
  lockRequest(key: string, operation: StorageOperation, signal?: AbortSignal): LockRequest {
    return { key, operation, precondition: undefined, signal, timeoutMs: this.#lockTimeoutMs };
  }

  /** Runs `body` holding `key`'s lock (see {@link withKeyLock}). */
  withLock<T>(
    key: string,
    operation: StorageOperation,
    precondition: Precondition | undefined,
    signal: AbortSignal | undefined,
    body: () => Promise<T>,
  ): Promise<T> {
    return withKeyLock(
      lockPathOf(this.root, key),
      { ...this.lockRequest(key, operation, signal), precondition },
      body,
    );
  }
}
