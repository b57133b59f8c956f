import { randomBytes } from "node:crypto";
import { link, mkdir, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  holdfastError,
  type Precondition,
  type StorageOperation,
} from "@holdfast/conditional-store";
import type { LocalDisk } from "./disk.js";
import { errnoCode } from "./errors.js";
import { locateObject, lstatOrNull, requireMatch, stampAfter } from "./files.js";
import { type KeyPaths, LOCAL_SELF_NAME } from "./layout.js";
import { nativeExtensions } from "./locks.js";

// How a written temp file becomes the key's object: create-only by link(2), every other
// put by rename(2) under the key's lock, making (or turning files into) folders on the way.

/** Rounds a write retries when directories appear or vanish under it (each round made progress elsewhere). */
const MAX_PATH_RETRIES = 64;

/**
 * Create-only: `link(temp, <root>/<key>)` fails with EEXIST if anything is at the path,
 * atomically across processes, so there is no check-then-write window. When the path is
 * a directory (other keys live below the key), the object goes to its self file by the
 * same link; a directory and a file can never share the path, so the key never exists
 * in both places. A parent directory removed meanwhile is made again. A write that need
 * not be durable skips the folder sync after the link (folders it makes are synced still).
 */
export async function linkIfAbsent(
  disk: LocalDisk,
  temp: string,
  paths: KeyPaths,
  key: string,
  precondition: Precondition,
  durable: boolean,
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
        await makeParents(disk, paths, key, "put", precondition);
      } else if (code === "EEXIST") {
        const existing = await lstatOrNull(paths.path);
        if (existing?.isDirectory()) target = paths.self;
        else if (existing !== null) throw conflictError("put", key, precondition);
      } else {
        throw error;
      }
      continue;
    }
    if (durable) await disk.syncDir(dirname(target), "put", key, precondition);
    return;
  }
}

/**
 * Unconditional put or compare-and-swap: {@link replace} under the key's lock, making the
 * key's folders (outside the lock) and trying again while they are missing.
 */
export async function replaceLocked(
  disk: LocalDisk,
  temp: string,
  paths: KeyPaths,
  key: string,
  precondition: { ifMatch: string } | undefined,
  signal: AbortSignal | undefined,
  durable: boolean,
): Promise<{ etag: string }> {
  for (let attempt = 0; ; attempt += 1) {
    const outcome = await disk.withLock(key, "put", precondition, signal, () =>
      replace(disk, temp, paths, key, precondition, durable),
    );
    if (outcome !== "needs-folders") return outcome;
    // Folders are made outside the key's lock: making one may take another key's
    // lock (a file that becomes a folder), and two keys may share a lock file.
    if (attempt >= MAX_PATH_RETRIES) throw pathRaceError("put", key, precondition);
    await makeParents(disk, paths, key, "put", precondition);
  }
}

/**
 * Unconditional put or compare-and-swap, under the key's lock: rename the temp into place
 * (the plain path, or the self file while the path is a directory), then (when durable)
 * sync the folder.
 */
async function replace(
  disk: LocalDisk,
  temp: string,
  paths: KeyPaths,
  key: string,
  precondition: { ifMatch: string } | undefined,
  durable: boolean,
): Promise<{ etag: string } | "needs-folders"> {
  let target = paths.path;
  const current = await locateObject(paths);
  // Under the lock every write of this key sees the one before it: stamping strictly
  // later than it keeps the key's ETags strictly increasing, so an ETag the key had
  // earlier never comes back even when the filesystem hands a freed inode number to
  // the new file within the same millisecond (R9: a stale owner's if-match must fail).
  const etag = await stampAfter(temp, current?.stats ?? null);
  if (precondition) {
    // Under the lock the object cannot move or vanish: every other mutation of the key
    // takes the same lock, and a directory holding its self file is never removed.
    target = requireMatch(current, key, "put", precondition).file;
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
    if (durable) await disk.syncDir(dirname(target), "put", key, precondition);
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
async function makeParents(
  disk: LocalDisk,
  paths: KeyPaths,
  key: string,
  operation: StorageOperation,
  precondition: Precondition | undefined,
): Promise<void> {
  const dir = dirname(paths.path);
  try {
    const first = await mkdir(dir, { recursive: true });
    if (first !== undefined) await disk.syncCreated(first, dir, key, operation, precondition);
    return;
  } catch (error) {
    const code = errnoCode(error);
    // A folder on the way was removed by a concurrent delete: the caller tries again.
    if (code === "ENOENT") return;
    if (code !== "EEXIST" && code !== "ENOTDIR") throw error;
  }
  for (let depth = 1; depth < paths.segments.length; depth += 1) {
    const ancestorKey = paths.segments.slice(0, depth).join("/");
    const ancestor = join(disk.root, ...paths.segments.slice(0, depth));
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
    await fileToDirectory(disk, ancestorKey, ancestor, operation, precondition);
    return;
  }
}

async function fileToDirectory(
  disk: LocalDisk,
  ancestorKey: string,
  path: string,
  operation: StorageOperation,
  precondition: Precondition | undefined,
): Promise<void> {
  await disk.withLock(ancestorKey, operation, precondition, undefined, async () => {
    const info = await lstatOrNull(path);
    if (info?.isFile()) {
      await mkdir(disk.tmpDir, { recursive: true });
      const staged = join(disk.tmpDir, `${randomBytes(12).toString("hex")}.dir`);
      await mkdir(staged);
      try {
        await link(path, join(staged, LOCAL_SELF_NAME));
        await nativeExtensions().swap(path, staged);
      } finally {
        // After the exchange `staged` names the old file (still linked as the self file).
        await rm(staged, { recursive: true, force: true });
      }
      await disk.syncDir(dirname(path), operation, ancestorKey, precondition);
      await disk.syncDir(path, operation, ancestorKey, precondition);
    }
  });
}

/** `{ ifNoneMatch: "*" }` or `{ ifMatch: <non-empty string> }`, nothing else. */
export function isPrecondition(value: unknown): value is Precondition {
  if (typeof value !== "object" || value === null) return false;
  const p = value as { ifNoneMatch?: unknown; ifMatch?: unknown };
  if ("ifNoneMatch" in p) return p.ifNoneMatch === "*" && !("ifMatch" in p);
  return typeof p.ifMatch === "string" && p.ifMatch !== "";
}

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
