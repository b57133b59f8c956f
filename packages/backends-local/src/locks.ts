import { createHash } from "node:crypto";
import { closeSync, open, openSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import {
  holdfastError,
  type Precondition,
  type StorageOperation,
} from "@holdfast/conditional-store";
import { LOCAL_INTERNAL_PREFIX } from "./layout.js";

/**
 * Number of lock files keys are spread over (by hash); keys sharing one only take turns.
 * Few enough that a store creates each at most once early on (creating a file costs far
 * more than opening one: a first cleanup of a fresh dataset would otherwise create a lock
 * file for nearly every key it deletes), many enough that the bounded number of requests
 * in flight rarely share one.
 */
export const LOCK_STRIPES = 256;

/** The folder of the lock files, `<root>/_holdfast/.local/locks`. */
export function locksDirOf(root: string): string {
  return join(root, LOCAL_INTERNAL_PREFIX, "locks");
}

/**
 * The lock file that guards `key`: `_holdfast/.local/locks/<stripe>.lock`, the stripe being
 * the first 8 bits of SHA-256(key) in hex. The files are permanent and empty, so taking a
 * lock creates and removes nothing: open, lock, unlock, close.
 */
export function lockPathOf(root: string, key: string): string {
  const digest = createHash("sha256").update(key, "utf8").digest("hex");
  return join(locksDirOf(root), `${digest.slice(0, 2)}.lock`);
}

/** What a caller of {@link withKeyLock} says about the request, for errors. */
export interface LockRequest {
  readonly key: string;
  readonly operation: StorageOperation;
  readonly precondition: Precondition | undefined;
  readonly signal: AbortSignal | undefined;
  readonly timeoutMs: number;
}

/**
 * Runs `body` holding the key's lock: first this process's queue for the lock file (so
 * waiters do not spin), then an exclusive OS-level lock on it, which excludes other
 * processes and is released by the kernel if the holder dies. `body` must not take
 * another key's lock (two keys may share a lock file).
 */
export async function withKeyLock<T>(
  lockPath: string,
  request: LockRequest,
  body: () => Promise<T>,
): Promise<T> {
  return inProcessQueue(lockPath, async () => {
    const fd = await acquireFileLock(lockPath, request);
    try {
      return await body();
    } finally {
      try {
        fileLocks().unlock(fd);
      } finally {
        closeSync(fd);
      }
    }
  });
}

async function acquireFileLock(lockPath: string, request: LockRequest): Promise<number> {
  const { key, operation, precondition, signal } = request;
  const fd = await openLockFile(lockPath);
  try {
    const deadline = Date.now() + request.timeoutMs;
    let pause = 1;
    // tryLock never blocks a libuv thread (waitForLock would, and enough blocked waiters
    // could starve the pool the lock holder needs to finish its write).
    while (!fileLocks().tryLock(fd)) {
      if (signal?.aborted) {
        throw holdfastError("aborted", operation, `${operation} aborted`, {
          key,
          precondition,
          cause: signal.reason,
        });
      }
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
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Opens the lock file for writing (an exclusive lock needs a writable descriptor),
 * creating it (and its folder) on first use. Opening an existing lock file is
 * synchronous: the file is empty and permanent, so the open touches only the kernel's
 * cached inode, and a thread-pool round trip would cost more than the call. Creating one
 * goes through the thread pool instead: a first batch delete on a dataset holdfast never
 * cleaned creates up to LOCK_STRIPES of them, which blocked the event loop when done
 * synchronously. Either way the lock is taken on the opened file before the caller runs.
 */
async function openLockFile(lockPath: string): Promise<number> {
  try {
    // Without O_CREAT: opening an existing file takes the folder's lock shared, not
    // exclusive, so concurrent lockers do not queue on the locks folder.
    return openSync(lockPath, "r+");
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw error;
  }
  try {
    return await openAsync(lockPath, "a");
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw error;
  }
  await mkdir(dirname(lockPath), { recursive: true }); // first lock of this store
  return openAsync(lockPath, "a");
}

/** open(2) on the thread pool, returning the raw descriptor (a FileHandle closes on GC). */
const openAsync = promisify(open);

interface NativeExtensions {
  tryLock(fd: number): boolean;
  unlock(fd: number): void;
  swap(from: string, to: string): Promise<void>;
}

let native: NativeExtensions | undefined;
let locks: Pick<NativeExtensions, "tryLock" | "unlock"> | undefined;

/** Loads the package's native extensions on first use (a store that only reads never needs them). */
export function nativeExtensions(): NativeExtensions {
  native ??= createRequire(import.meta.url)("fs-native-extensions") as NativeExtensions;
  return native;
}

/**
 * The two lock calls every key lock makes, loaded on first use. Where the package ships a
 * prebuilt binary for this platform, the binary is loaded directly: the package's own
 * loader (`require-addon` and its resolvers) costs about four times the binary's load in
 * CPU, a fixed cost of the first write of every process (a small cleanup's largest single
 * one). The calls are the package's (`tryLock` answers false on EAGAIN, locks span the
 * whole file, exclusive); any other platform, or a binary that does not load, uses the
 * package as it is.
 */
function fileLocks(): Pick<NativeExtensions, "tryLock" | "unlock"> {
  locks ??= prebuiltLocks() ?? nativeExtensions();
  return locks;
}

interface PrebuiltBinding {
  tryLock(fd: number, offset: number, length: number, exclusive: boolean): void;
  unlock(fd: number, offset: number, length: number): void;
}

function prebuiltLocks(): Pick<NativeExtensions, "tryLock" | "unlock"> | null {
  const require = createRequire(import.meta.url);
  let binding: PrebuiltBinding;
  try {
    const packageDir = dirname(require.resolve("fs-native-extensions/package.json"));
    binding = require(
      join(
        packageDir,
        "prebuilds",
        `${process.platform}-${process.arch}`,
        "fs-native-extensions.node",
      ),
    ) as PrebuiltBinding;
  } catch {
    return null;
  }
  if (typeof binding.tryLock !== "function" || typeof binding.unlock !== "function") return null;
  return {
    tryLock(fd) {
      try {
        binding.tryLock(fd, 0, 0, true);
        return true;
      } catch (error) {
        if ((error as { code?: unknown }).code === "EAGAIN") return false;
        throw error;
      }
    },
    unlock(fd) {
      binding.unlock(fd, 0, 0);
    },
  };
}

const queues = new Map<string, Promise<void>>();

/** Serializes this process's critical sections per lock file, across all store instances. */
async function inProcessQueue<T>(lockPath: string, run: () => Promise<T>): Promise<T> {
  const previous = queues.get(lockPath) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((done) => {
    release = done;
  });
  const tail = previous.then(() => mine);
  queues.set(lockPath, tail);
  await previous;
  try {
    return await run();
  } finally {
    release();
    if (queues.get(lockPath) === tail) queues.delete(lockPath);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
