import type { Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { compareKeys } from "@holdfast/conditional-store";
import { isLocalKey, LOCAL_INTERNAL_PREFIX, LOCAL_SELF_NAME } from "./layout.js";

/** One object found by {@link walk}: its key and the file that holds it. */
export interface ListedFile {
  readonly key: string;
  readonly file: string;
}

/** The part of the key space a listing wants: keys starting with `prefix`, strictly after `after`. */
export interface ListRange {
  readonly prefix: string;
  readonly after: string;
}

/**
 * Yields the objects under `dir` in UTF-8 byte order of their keys. A file `seg` sorts by
 * `seg`, a directory by `seg/`; since segments hold no `/`, a depth-first walk in that
 * order is global key order. A directory's own object (its self file, when the key is
 * also the folder of other keys) sorts by `seg`: when no sibling sorts between `seg` and
 * `seg/`, the directory's own walk yields it first; otherwise it is looked up in place.
 * Subtrees outside the range, the backend's private folder, and entries that are neither
 * regular files nor directories (or whose names are no valid key) are skipped.
 */
export async function* walk(
  dir: string,
  keyPrefix: string,
  range: ListRange,
  selfYielded = false,
): AsyncGenerator<ListedFile> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // A directory removed (or replaced) since its parent was read holds nothing to list.
    if (code === "ENOENT" || code === "ENOTDIR") return;
    throw error;
  }
  // Only entries the range can reach are sorted: a listing from `startAfter` near the end
  // of a folder of 100,000 versions sorts a handful of names.
  const items: Item[] = [];
  let hasSelf = false;
  const add = (sortKey: string, name: string, kind: Item["kind"]) => {
    if (kind === "dir" ? reaches(sortKey, range) : before(sortKey, range)) {
      items.push({ sortKey, name, kind });
    }
  };
  for (const entry of entries) {
    const key = `${keyPrefix}${entry.name}`;
    if (entry.name === LOCAL_SELF_NAME) {
      hasSelf = entry.isFile();
    } else if (entry.isDirectory()) {
      if (`${key}/` === LOCAL_INTERNAL_PREFIX) continue;
      add(`${key}/`, entry.name, "dir");
      add(key, entry.name, "self");
    } else if (entry.isFile()) {
      add(key, entry.name, "file");
    }
  }
  if (hasSelf && !selfYielded && keyPrefix !== "") {
    const key = keyPrefix.slice(0, -1);
    if (inRange(key, range)) yield { key, file: join(dir, LOCAL_SELF_NAME) };
  }
  items.sort((a, b) => compareUtf8(a.sortKey, b.sortKey));
  const lookedUp = new Set<string>();
  for (const [i, item] of items.entries()) {
    const path = join(dir, item.name);
    if (item.kind === "dir") {
      yield* walk(path, item.sortKey, range, lookedUp.has(item.name));
    } else if (isLocalKey(item.sortKey)) {
      if (item.kind === "file") {
        yield { key: item.sortKey, file: path };
        continue;
      }
      // The directory's own object: when the directory itself comes next, its walk
      // yields the object first; otherwise siblings sort in between, so look it up here.
      const next = items[i + 1];
      if (next?.kind === "dir" && next.name === item.name) continue;
      lookedUp.add(item.name);
      const self = join(path, LOCAL_SELF_NAME);
      if (await isFile(self)) yield { key: item.sortKey, file: self };
    }
  }
}

interface Item {
  readonly sortKey: string;
  readonly name: string;
  readonly kind: "file" | "dir" | "self";
}

/** Whether the folder whose keys start with `sub` (ending in `/`) can hold a key of the range. */
function reaches(sub: string, range: ListRange): boolean {
  if (!sub.startsWith(range.prefix) && !range.prefix.startsWith(sub)) return false;
  return range.after === "" || compareUtf8(sub, range.after) >= 0 || range.after.startsWith(sub);
}

/** Whether `key` starts with the prefix and sorts after `after` (not yet whether it is a valid key). */
function before(key: string, range: ListRange): boolean {
  return key.startsWith(range.prefix) && (range.after === "" || compareUtf8(key, range.after) > 0);
}

function inRange(key: string, range: ListRange): boolean {
  return before(key, range) && isLocalKey(key); // a foreign file whose name is no valid key is not listed
}

/**
 * The keys' order by UTF-8 bytes ({@link compareKeys}) without encoding them: UTF-16 code
 * units order the same way except where both differing units are at or above U+D800
 * (a surrogate against U+E000..U+FFFF), which the exact comparison settles.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return x >= 0xd800 && y >= 0xd800 ? compareKeys(a, b) : x - y;
  }
  return a.length - b.length;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
