import type { BigIntStats } from "node:fs";
import { readdir } from "node:fs/promises";
import { join, sep } from "node:path";
import {
  type HoldfastError,
  holdfastError,
  type StorageOperation,
  validateKey,
} from "@holdfast/conditional-store";

/**
 * The local backend's private folder under the root: temp files (`tmp/`) and lock files
 * (`locks/`). Keys under it are refused and listing never shows it, so nothing the
 * backend writes for its own bookkeeping is visible as an object or lives outside
 * `_holdfast/`.
 */
export const LOCAL_INTERNAL_PREFIX = "_holdfast/.local/";

/**
 * File name that holds the object of key `a/b` when the path `a/b` must be a directory
 * (because `a/b/c` exists too): `a/b/.holdfast-self`. A key with a segment of this name
 * is refused. Only keys that are also the "folder" of other keys ever use it.
 */
export const LOCAL_SELF_NAME = ".holdfast-self";

/** Suffix of object files of the old wrapped layout (before 0.2): their presence is refused. */
export const LOCAL_OLD_SUFFIX = ".hfobj";

/** Lock directory of the old wrapped layout, at the root. */
const OLD_LOCK_DIR = ".holdfast-locks";

/** NAME_MAX on Linux, macOS and Windows filesystems. */
const MAX_NAME_BYTES = 255;

/** Where a key lives on disk. */
export interface KeyPaths {
  /** `<root>/<key>`: the key's own path, a plain file unless other keys live below it. */
  readonly path: string;
  /** `<root>/<key>/.holdfast-self`: the object's file while `path` is a directory. */
  readonly self: string;
  /** Segments of the key, for walking its ancestors. */
  readonly segments: readonly string[];
}

/**
 * Validates `key` for this backend and maps it to its paths: the object is the plain file
 * `<root>/<key>`. Beyond the contract's key rules, a segment must fit a file name, must
 * not be the self-file name or end in the old `.hfobj` suffix, and the key must not lie
 * under the backend's private folder. All checked before anything touches the disk.
 */
export function keyPaths(root: string, key: string, operation: StorageOperation): KeyPaths {
  const segments = checkLocalKey(key, operation);
  const path = childPath(root, sep === "/" ? key : segments.join(sep));
  return { path, self: childPath(path, LOCAL_SELF_NAME), segments };
}

/**
 * `join(dir, name)` for a normalized absolute `dir` (the store's resolved root, or a path
 * built from it) and a `name` of checked segments (no empty, `.` or `..` segment): one
 * concatenation. `join` normalizes the whole path again, character by character, which
 * cost a cold cleanup about 15 µs per key (every key a cleanup reads or deletes).
 */
export function childPath(dir: string, name: string): string {
  return dir.endsWith(sep) ? `${dir}${name}` : `${dir}${sep}${name}`;
}

/** The key's segments, after the checks {@link keyPaths} documents (throws `invalid-input`). */
function checkLocalKey(key: string, operation: StorageOperation): string[] {
  validateKey(key, operation);
  const segments = key.split("/");
  if (key.startsWith(LOCAL_INTERNAL_PREFIX) || `${key}/` === LOCAL_INTERNAL_PREFIX) {
    throw refuseKey(
      key,
      operation,
      `lies under ${LOCAL_INTERNAL_PREFIX}`,
      "that folder is the local backend's own",
    );
  }
  for (const segment of segments) {
    // A UTF-16 unit is at most 3 UTF-8 bytes: short segments skip the byte count.
    if (
      segment.length * 3 > MAX_NAME_BYTES &&
      Buffer.byteLength(segment, "utf8") > MAX_NAME_BYTES
    ) {
      throw refuseKey(
        key,
        operation,
        "has a path segment too long for a file name",
        `each segment must fit in ${MAX_NAME_BYTES} bytes`,
      );
    }
    if (segment === LOCAL_SELF_NAME) {
      throw refuseKey(key, operation, `has a segment named ${LOCAL_SELF_NAME}`);
    }
    if (segment.endsWith(LOCAL_OLD_SUFFIX)) {
      throw refuseKey(
        key,
        operation,
        `has a segment ending in ${LOCAL_OLD_SUFFIX} (the old layout's marker)`,
      );
    }
  }
  return segments;
}

function refuseKey(
  key: string,
  operation: StorageOperation,
  why: string,
  hint?: string,
): HoldfastError {
  return holdfastError("invalid-input", operation, `key ${JSON.stringify(key)} ${why}`, {
    key,
    code: "INVALID_LOCAL_KEY",
    hint,
  });
}

/**
 * The ETag of the file a stat describes: inode number, size and mtime in nanoseconds.
 *
 * Why it changes on every holdfast write, identical bytes included: a write never
 * changes a file in place; it fills a fresh temp file and then links or renames it into
 * place, and that temp file is created while the file it replaces still exists, so the
 * two cannot share an inode number. A compare-and-swap therefore always sees the ETag
 * change, and a fencing rewrite of the same bytes fences (docs/protocol.md §1.2). The mtime is the
 * writer's clock reading plus a random sub-millisecond part, so an older ETag could only come back
 * if the filesystem reused a freed inode number for an object of the same size stamped in the same
 * millisecond with the same random part. ctime is left out on purpose: linking and unlinking the
 * temp name changes it after the object is visible, which would change an ETag without a write.
 */
export function etagOf(stats: BigIntStats): string {
  // Joined, not concatenated: a concatenation is a rope of four nodes over its parts, and a
  // listing's ETags are held (a Lance table's whole `_versions/`, a record's manifests),
  // where each rope cost three times the flat string's memory.
  return [stats.ino.toString(36), stats.size.toString(36), stats.mtimeNs.toString(36)].join("-");
}

/** Milliseconds since the epoch of a stat's mtime, floored to `precisionMs`. */
export function lastModifiedOf(stats: BigIntStats, precisionMs: number): Date {
  const ms = Number(stats.mtimeNs / 1_000_000n);
  return new Date(Math.floor(ms / precisionMs) * precisionMs);
}

/**
 * Refuses a root written by the old wrapped layout (each object a `<key>.hfobj` file with
 * a 37-byte header). Every such store has a `.hfobj` file at its root or under
 * `_holdfast/` (a dataset's `_holdfast/dataset.json.hfobj`), or the old lock directory.
 * Only those two directories are read, so opening a large dataset stays cheap.
 */
export async function assertNotOldLayout(root: string, operation: StorageOperation): Promise<void> {
  const found = [
    ...(await namesIn(root)).filter((n) => n.endsWith(LOCAL_OLD_SUFFIX) || n === OLD_LOCK_DIR),
    ...(await namesIn(join(root, "_holdfast")))
      .filter((n) => n.endsWith(LOCAL_OLD_SUFFIX))
      .map((n) => `_holdfast/${n}`),
  ];
  if (found.length > 0) throw oldLayoutError(root, operation, found[0]!);
}

function oldLayoutError(root: string, operation: StorageOperation, name: string): HoldfastError {
  return holdfastError(
    "unsupported",
    operation,
    `${root} holds objects in the old wrapped layout (${name}), which this version cannot read`,
    {
      code: "LOCAL_OLD_LAYOUT",
      hint: "objects are now plain files at their own paths; recreate the store with this version (no migration exists)",
    },
  );
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return [];
    throw error;
  }
}

/** True when `key` is a key this backend accepts (used to skip foreign file names). */
export function isLocalKey(key: string): boolean {
  try {
    checkLocalKey(key, "list");
    return true;
  } catch {
    return false;
  }
}
