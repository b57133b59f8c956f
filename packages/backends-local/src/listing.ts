import type { BigIntStats, Dirent } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  compareKeys,
  type HoldfastError,
  holdfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
} from "@holdfast/conditional-store";
import { statFileSync } from "./files.js";
import { isLocalKey, LOCAL_INTERNAL_PREFIX, LOCAL_SELF_NAME } from "./layout.js";

/** Entries a listing stats before it yields to the event loop. */
const STAT_RUN = 250;

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
 * One page of the keys under `prefix`: at most `limit` objects in key order after
 * `startAfter` and after the page token's key (whichever is later), with a token for the
 * next page when more keys follow. A malformed page token is `invalid-input`.
 */
export async function listPage(
  root: string,
  prefix: string,
  options: ListOptions,
  limit: number,
  meta: (key: string, stats: BigIntStats) => ObjectMeta,
): Promise<ListPage> {
  let after = options.startAfter ?? "";
  if (options.pageToken !== undefined) {
    const fromToken = decodePageToken(options.pageToken);
    if (compareKeys(fromToken, after) > 0) after = fromToken;
  }
  const found: ListedFile[] = [];
  let more = false;
  for await (const entry of walk(root, "", { prefix, after })) {
    if (found.length === limit) {
      more = true;
      break;
    }
    found.push(entry);
  }
  const objects = await statListed(found, meta);
  const last = found.at(-1);
  return more && last !== undefined
    ? { objects, nextPageToken: encodePageToken(last.key) }
    : { objects };
}

/**
 * The metadata of the files a page found, in order; a key deleted since its folder was read
 * is simply not listed. Each `stat` is made directly, not through the thread pool: it names
 * an entry the listing has just read from its folder, so the kernel has the folder in its
 * cache and usually the inode too, and the call costs a few microseconds where a
 * thread-pool round trip costs several times that in CPU on the event loop (a cleanup
 * stats every manifest it lists, twice). Between runs of {@link STAT_RUN} entries the
 * listing yields, so timers and other requests are not held up for a whole page.
 */
async function statListed(
  found: readonly ListedFile[],
  meta: (key: string, stats: BigIntStats) => ObjectMeta,
): Promise<ObjectMeta[]> {
  const objects: ObjectMeta[] = [];
  for (let i = 0; i < found.length; i += 1) {
    if (i > 0 && i % STAT_RUN === 0) await new Promise((resume) => setImmediate(resume));
    const { key, file } = found[i]!;
    const stats = statFileSync(file);
    if (stats !== null) objects.push(meta(key, stats));
  }
  return objects;
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

/**
 * Yields the objects under `dir` in UTF-8 byte order of their keys. A file `seg` sorts by
 * `seg`, a directory by `seg/`; since segments hold no `/`, a depth-first walk in that
 * order is global key order. A directory's own object (its self file, when the key is
 * also the folder of other keys) sorts by `seg`: when no sibling sorts between `seg` and
 * `seg/`, the directory's own walk yields it first; otherwise it is looked up in place.
 * Subtrees outside the range and the backend's private folder are skipped; an entry in
 * the range that maps to no key (see {@link unmappable}) stops the listing.
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
    if (entry.name === LOCAL_SELF_NAME && entry.isFile() && keyPrefix !== "") {
      hasSelf = true;
    } else if (entry.isDirectory()) {
      if (`${key}/` === LOCAL_INTERNAL_PREFIX) continue;
      if (!isLocalKey(key)) {
        if (reaches(`${key}/`, range)) throw unmappable(key, "a folder whose name");
        continue;
      }
      add(`${key}/`, entry.name, "dir");
      add(key, entry.name, "self");
    } else if (before(key, range)) {
      // Invariant 8: nothing under a listed folder is skipped. A file whose name maps to no
      // key (the old layout's `.hfobj`, a self-file name where no key can own it, a
      // backslash or control character) or an entry that is no regular file (a symlink,
      // a socket) would be invisible: a census would miss what it protects.
      if (!entry.isFile())
        throw unmappable(key, "an entry that is no regular file or folder, which");
      if (!isLocalKey(key)) throw unmappable(key, "a file whose name");
      add(key, entry.name, "file");
    }
  }
  if (hasSelf && !selfYielded && keyPrefix !== "") {
    const key = keyPrefix.slice(0, -1);
    if (inRange(key, range)) yield { key, file: join(dir, LOCAL_SELF_NAME) };
  }
  // In key order, lazily: a page of 1,000 keys from a folder of 100,000 takes 1,000 items
  // off a heap instead of sorting the whole folder for every page.
  const ordered = new ItemHeap(items, items.some(isWide) ? keyLess : unitLess);
  const lookedUp = new Set<string>();
  for (let item = ordered.pop(); item !== undefined; item = ordered.pop()) {
    const path = join(dir, item.name);
    if (item.kind === "dir") {
      yield* walk(path, item.sortKey, range, lookedUp.has(item.name));
    } else {
      if (item.kind === "file") {
        yield { key: item.sortKey, file: path };
        continue;
      }
      // The directory's own object: when the directory itself comes next, its walk
      // yields the object first; otherwise siblings sort in between, so look it up here.
      const next = ordered.peek();
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

/** Whether `a` sorts before `b` in UTF-8 byte order of their keys. */
type Less = (a: Item, b: Item) => boolean;

const keyLess: Less = (a, b) => compareKeys(a.sortKey, b.sortKey) < 0;

/**
 * The engine's own string comparison (UTF-16 code units). The items of one folder share its
 * key prefix, so they differ only within their names; UTF-16 order is UTF-8 byte order
 * unless a name holds a code unit from U+D800 up (a surrogate sorts below U+E000-U+FFFF
 * in UTF-16, above in UTF-8), and then the folder takes {@link keyLess}. The built-in
 * comparison costs a fraction of a character loop, most of all before the code is
 * optimized (a cleanup lists a handful of folders once each).
 */
const unitLess: Less = (a, b) => a.sortKey < b.sortKey;

const WIDE_UNIT = /[\ud800-\uffff]/;

function isWide(item: Item): boolean {
  return WIDE_UNIT.test(item.name);
}

/** A binary min-heap of items by key (built in linear time), taken off one at a time. */
class ItemHeap {
  readonly #items: Item[];
  readonly #less: Less;

  constructor(items: Item[], less: Less) {
    this.#items = items;
    this.#less = less;
    for (let i = (items.length >> 1) - 1; i >= 0; i -= 1) this.#down(i);
  }

  peek(): Item | undefined {
    return this.#items[0];
  }

  pop(): Item | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      this.#down(0);
    }
    return top;
  }

  #down(from: number): void {
    const items = this.#items;
    const less = this.#less;
    const n = items.length;
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < n && less(items[left]!, items[least]!)) least = left;
      if (right < n && less(items[right]!, items[least]!)) least = right;
      if (least === i) return;
      const moved = items[i]!;
      items[i] = items[least]!;
      items[least] = moved;
      i = least;
    }
  }
}

/** Whether the folder whose keys start with `sub` (ending in `/`) can hold a key of the range. */
function reaches(sub: string, range: ListRange): boolean {
  if (!sub.startsWith(range.prefix) && !range.prefix.startsWith(sub)) return false;
  return range.after === "" || compareKeys(sub, range.after) >= 0 || range.after.startsWith(sub);
}

/** Whether `key` starts with the prefix and sorts after `after` (not yet whether it is a valid key). */
function before(key: string, range: ListRange): boolean {
  return key.startsWith(range.prefix) && (range.after === "" || compareKeys(key, range.after) > 0);
}

function inRange(key: string, range: ListRange): boolean {
  return before(key, range);
}

/** Code of the listing error for a file or folder the backend cannot name as a key. */
export const LOCAL_UNMAPPABLE_NAME = "LOCAL_UNMAPPABLE_NAME";

/**
 * A listing that met a file or folder it cannot map to a key: `invalid-input`, code
 * LOCAL_UNMAPPABLE_NAME, `key` the file's path relative to the root. The listing stops
 * rather than leave it out, so a cleanup never decides without it (invariant 8).
 */
function unmappable(path: string, what: string): HoldfastError {
  return holdfastError(
    "invalid-input",
    "list",
    `${path} is ${what} the local backend cannot map to an object key; the listing stops rather than skip it`,
    {
      key: path,
      code: LOCAL_UNMAPPABLE_NAME,
      hint: "move or rename that file (holdfast never writes such names); nothing was decided or deleted",
    },
  );
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
