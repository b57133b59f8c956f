import { createHash } from "node:crypto";
import { type FileHandle, mkdir, open, stat, unlink } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  holdfastError,
  type Precondition,
  type StorageOperation,
} from "@holdfast/conditional-store";
import { LOCAL_INTERNAL_PREFIX } from "./layout.js";

/** Where a key's lock file lives: `_holdfast/.local/locks/<2 hex>/<sha256(key)>.lock`. */
export function lockPathOf(root: string, key: string): string {
  const digest = createHash("sha256").update(key, "utf8").digest("hex");
  return join(root, LOCAL_INTERNAL_PREFIX, "locks", digest.slice(0, 2), `${digest}.lock`);
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
 * Runs `body` holding the key's lock: first this process's queue for the key (so waiters
 * do not spin), then an exclusive OS-level lock on the key's lock file, which excludes
 * other processes and is released by the kernel if the holder dies. When `body` returns
 * true the lock file is unlinked while still held; waiters holding the old inode notice
 * the swap and retry on the new file.
 */
export async function withKeyLock<T>(
  lockPath: string,
  request: LockRequest,
  body: () => Promise<{ value: T; removeLock: boolean }>,
): Promise<T> {
  return inProcessQueue(lockPath, async () => {
    const handle = await acquireFileLock(lockPath, request);
    let removeLock = false;
    try {
      const outcome = await body();
      removeLock = outcome.removeLock;
      return outcome.value;
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

async function acquireFileLock(lockPath: string, request: LockRequest): Promise<FileHandle> {
  const { key, operation, precondition, signal } = request;
  const deadline = Date.now() + request.timeoutMs;
  let pause = 1;
  for (;;) {
    await mkdir(dirname(lockPath), { recursive: true });
    // An exclusive lock needs a writable descriptor; "a+" creates the file if missing.
    const handle = await open(lockPath, "a+");
    try {
      // tryLock never blocks a libuv thread (waitForLock would, and enough blocked
      // waiters could starve the pool the lock holder needs to finish its write).
      while (!nativeLocks().tryLock(handle.fd)) {
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
      // The previous holder may have unlinked the lock file (key deleted) after we
      // opened it: then we hold a lock nobody else can see; start over on the new file.
      const [held, current] = await Promise.all([handle.stat(), stat(lockPath).catch(() => null)]);
      if (current !== null && current.ino === held.ino && current.dev === held.dev) return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
    nativeLocks().unlock(handle.fd);
    await handle.close();
  }
}

interface NativeExtensions {
  tryLock(fd: number): boolean;
  unlock(fd: number): void;
  swap(from: string, to: string): Promise<void>;
}

let native: NativeExtensions | undefined;

/** Loads the native binding on first use (a store that only reads never needs it). */
export function nativeLocks(): NativeExtensions {
  native ??= createRequire(import.meta.url)("fs-native-extensions") as NativeExtensions;
  return native;
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
