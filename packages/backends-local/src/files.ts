import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  openSync,
  read,
  readSync,
  statSync,
} from "node:fs";
import { lstat, stat, unlink, utimes } from "node:fs/promises";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { holdfastError, type StorageOperation } from "@holdfast/conditional-store";
import { errnoCode } from "./errors.js";
import { etagOf, type KeyPaths } from "./layout.js";

// The file operations of one object, below the store's locking and error mapping.

const readFd = promisify(read);

/**
 * Restamps the temp file a few microseconds after `previous` when its own stamp is not later
 * (a tight loop of writes within one millisecond), and answers the temp's ETag.
 */
export async function stampAfter(temp: string, previous: BigIntStats | null): Promise<string> {
  const own = await stat(temp, { bigint: true });
  if (previous === null || own.mtimeNs > previous.mtimeNs) return etagOf(own);
  // Node passes whole microseconds and a double may lose one of them: step by three.
  const micros = previous.mtimeNs / 1000n + 3n;
  const seconds = Number(micros / 1_000_000n) + Number(micros % 1_000_000n) / 1e6;
  await utimes(temp, seconds, seconds);
  const restamped = await stat(temp, { bigint: true });
  if (restamped.mtimeNs <= previous.mtimeNs) {
    throw holdfastError("refused", "put", "could not stamp a write later than the last one", {
      code: "STAMP_NOT_MONOTONIC",
    });
  }
  return etagOf(restamped);
}

/**
 * Unlinks the key's object (the caller holds the key's lock) and answers the folder it was
 * unlinked from (null when the key was absent); syncing that folder is the caller's (once
 * per batch). With `ifMatch`, a missing object or another ETag is a `conflict`.
 */
export async function unlinkObject(
  key: string,
  paths: KeyPaths,
  precondition: { ifMatch: string } | undefined,
): Promise<string | null> {
  if (precondition) {
    const current = requireMatch(await locateObject(paths), key, "delete", precondition);
    return (await unlinkFile(current.file)) ? dirname(current.file) : null;
  }
  // Unconditional: no stat first; a folder at the path holds the object as its self file.
  try {
    return (await unlinkFile(paths.path)) ? dirname(paths.path) : null;
  } catch (error) {
    const code = errnoCode(error);
    if (code !== "EISDIR" && code !== "EPERM") throw error;
    if (!(await lstatOrNull(paths.path))?.isDirectory()) throw error;
    return (await unlinkFile(paths.self)) ? paths.path : null;
  }
}

/** The file that holds a key's object, and its stat (whose ETag it has). */
export interface LocatedObject {
  readonly file: string;
  readonly stats: BigIntStats;
}

/**
 * The if-match check of a compare-and-swap or a conditional delete, made under the key's
 * lock on the object {@link locateObject} found: answers it when its ETag is the one
 * asked for; a missing object or another ETag is a `conflict` (nothing written).
 */
export function requireMatch(
  current: LocatedObject | null,
  key: string,
  operation: StorageOperation,
  precondition: { ifMatch: string },
): LocatedObject {
  if (current === null || etagOf(current.stats) !== precondition.ifMatch) {
    throw holdfastError(
      "conflict",
      operation,
      current === null ? `if-match on absent object ${key}` : `ETag mismatch on ${key}`,
      { key, precondition, code: current === null ? "ENOENT" : "ETAG_MISMATCH" },
    );
  }
  return current;
}

/** Where the object of a key is now: the plain file, or the self file of the key's directory. */
export async function locateObject(paths: KeyPaths): Promise<LocatedObject | null> {
  const atPath = await statFileOrDir(paths.path);
  if (atPath === null) return null;
  if (!atPath.isDirectory()) return atPath.isFile() ? { file: paths.path, stats: atPath } : null;
  const self = await statFile(paths.self);
  return self === null ? null : { file: paths.self, stats: self };
}

/** Read-only and non-blocking (where the platform has the flag): see {@link openObject}. */
const OPEN_FOR_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Opens the key's file for reading (following it into its directory's self file). The
 * open, `fstat` and (with {@link readExactly}) `close` are direct calls: from the page
 * cache each costs a few microseconds, where a thread-pool round trip costs several times
 * that in CPU (a wake-up of a pool thread and of the event loop per call). The open is
 * non-blocking, so a FIFO or a device another program put at a key's path opens at once
 * (and is no object) instead of holding the event loop until a writer comes; on a regular
 * file the flag changes nothing.
 */
export function openObject(paths: KeyPaths): { fd: number; stats: BigIntStats } | null {
  for (const file of [paths.path, paths.self]) {
    let fd: number;
    try {
      fd = openSync(file, OPEN_FOR_READ);
    } catch (error) {
      const code = errnoCode(error);
      if (code === "ENOENT" || code === "ENOTDIR") return null;
      throw error;
    }
    let stats: BigIntStats;
    try {
      stats = fstatSync(fd, { bigint: true });
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    if (stats.isFile()) return { fd, stats };
    closeSync(fd);
    if (!stats.isDirectory()) return null;
  }
  return null;
}

export async function statFileOrDir(path: string): Promise<BigIntStats | null> {
  try {
    return await stat(path, { bigint: true });
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

export async function statFile(path: string): Promise<BigIntStats | null> {
  const stats = await statFileOrDir(path);
  return stats?.isFile() ? stats : null;
}

/**
 * {@link statFile} made directly on the calling thread (for names a listing has just read
 * from their folder, see listing.ts): null when the path holds no regular file.
 */
export function statFileSync(path: string): BigIntStats | null {
  let stats: BigIntStats | undefined;
  try {
    stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    if (errnoCode(error) === "ENOTDIR") return null;
    throw error;
  }
  return stats?.isFile() ? stats : null;
}

export async function lstatOrNull(path: string): Promise<import("node:fs").Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

/** Unlinks one object file: true if it was there, false if it was already gone. */
export async function unlinkFile(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (error) {
    const code = errnoCode(error);
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw error;
  }
}

/**
 * Files up to this size are read with direct calls: from the page cache such a read costs a
 * few microseconds, a thread-pool round trip several times more event-loop CPU. Larger files
 * go through the pool, so a long read never holds the event loop.
 */
export const DIRECT_READ_MAX_BYTES = 64 * 1024;

/** Reads exactly `size` bytes (the size the ETag was taken with) into a fresh buffer. */
export async function readExactly(fd: number, size: number): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafe(size);
  let offset = 0;
  if (size <= DIRECT_READ_MAX_BYTES) {
    while (offset < size) {
      const bytesRead = readSync(fd, buffer, offset, size - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return new Uint8Array(buffer.buffer, buffer.byteOffset, offset);
  }
  while (offset < size) {
    const { bytesRead } = await readFd(fd, buffer, offset, size - offset, offset);
    if (bytesRead === 0) break;
    offset += bytesRead;
  }
  return new Uint8Array(buffer.buffer, buffer.byteOffset, offset);
}
