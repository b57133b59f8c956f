import { randomUUID } from "node:crypto";
import type { BigIntStats, Dir, Dirent } from "node:fs";
import { opendir, stat } from "node:fs/promises";
import {
  compareKeys,
  type HoldfastError,
  holdfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
} from "@holdfast/conditional-store";
import { statFileSync } from "./files.js";
import { childPath, isLocalKey, LOCAL_INTERNAL_PREFIX, LOCAL_SELF_NAME } from "./layout.js";

/** Entries a listing stats before it yields to the event loop. */
const STAT_RUN = 250;

/** Entries of a folder a listing reads before it yields to the event loop (about 4 ms). */
const ENTRY_RUN = 2_000;

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

/** Most entries of one folder a listing holds in memory at once (see {@link FolderWindows}). */
export const DEFAULT_LIST_WINDOW = 100_000;

/** The folders read by a listing, and the windows kept for its next pages. */
export interface ListingFolders {
  /** Windows kept from earlier pages; `undefined` reads every folder afresh. */
  readonly windows?: FolderWindows | undefined;
  /** Most entries of one folder held at once. */
  readonly window: number;
  /** Called for every read of a folder (one pass over its entries). */
  readonly onRead?: ((dir: string) => void) | undefined;
}

/**
 * One page of the keys under `prefix`: at most `limit` objects in key order after
 * `startAfter` and after the page token's key (whichever is later), with a token for the
 * next page when more keys follow. A malformed page token is `invalid-input`.
 *
 * A folder is read in windows of its `window` smallest entries in the range: a page reads
 * each folder it enters once, keeps the window it stopped in for the next page (which
 * continues from the token), and reads the folder again only when it leaves that window.
 * A listing of one folder of n keys reads it ⌈n / window⌉ times, not once per page, and
 * holds at most one window per folder. A page after the first can be served from a window
 * read for an earlier page of the same listing, or read later (never one read before the
 * listing started, whose page token names its start): keys written since that read may be
 * missing from it (as a key written during any paged listing may be), and keys deleted since
 * are left out (their file is gone when its metadata is read). So every key written before
 * the listing started and not deleted is listed. The first page always reads afresh.
 */
export async function listPage(
  root: string,
  prefix: string,
  options: ListOptions,
  limit: number,
  meta: (key: string, stats: BigIntStats) => ObjectMeta,
  folders: ListingFolders = { window: DEFAULT_LIST_WINDOW },
): Promise<ListPage> {
  let after = options.startAfter ?? "";
  const { windows } = folders;
  // When the listing started, on the windows' clock: a window read since then holds every
  // key written before it started. A token of another store (or none) starts a listing.
  let startedAt: number | undefined;
  if (options.pageToken !== undefined) {
    const token = decodePageToken(options.pageToken);
    if (compareKeys(token.key, after) > 0) after = token.key;
    if (windows !== undefined && token.windows === windows.id) startedAt = token.startedAt;
  }
  const reuse = startedAt !== undefined;
  startedAt ??= windows?.tick() ?? 0;
  const found: ListedFile[] = [];
  const reading: FolderReading = {
    window: folders.window,
    firstWindow: Math.min(folders.window, Math.max(FIRST_WINDOW_MIN, FIRST_WINDOW_PAGES * limit)),
    windows,
    startedAt: reuse ? startedAt : undefined,
    onRead: folders.onRead,
  };
  // One entry past the page tells whether more follow.
  const more = await walk(root, "", { prefix, after }, false, reading, found, limit + 1);
  if (more) found.length = limit;
  const objects = await statListed(found, meta);
  const last = found.at(-1);
  return more && last !== undefined
    ? {
        objects,
        nextPageToken: encodePageToken({ windows: windows?.id ?? "", startedAt, key: last.key }),
      }
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

/** What a page token carries: the store whose windows may serve the listing, its start, the last key. */
interface PageToken {
  readonly windows: string;
  readonly startedAt: number;
  readonly key: string;
}

function encodePageToken({ windows, startedAt, key }: PageToken): string {
  return Buffer.from(`${windows}\u0000${startedAt}\u0000${key}`, "utf8").toString("base64url");
}

function decodePageToken(token: string): PageToken {
  const [windows, startedAt, ...rest] = Buffer.from(token, "base64url")
    .toString("utf8")
    .split("\u0000");
  const decoded = {
    windows: windows ?? "",
    startedAt: Number(startedAt),
    key: rest.join("\u0000"),
  };
  if (
    token === "" ||
    rest.length === 0 ||
    !/^\d{1,15}$/.test(startedAt ?? "") ||
    encodePageToken(decoded) !== token
  ) {
    throw holdfastError("invalid-input", "list", "malformed page token");
  }
  return decoded;
}

/**
 * The first window of a folder a page reads holds 16 pages (at least 1,000 entries); each
 * next one twice the last, up to `listWindow`: a probe of one key holds 1,000 names, not
 * 100,000, and a long listing reaches full windows after a few reads.
 */
const FIRST_WINDOW_PAGES = 16;
const FIRST_WINDOW_MIN = 1_000;

/** How {@link walk} reads folders during one page. */
interface FolderReading {
  /** Most entries of a window. */
  readonly window: number;
  /** Entries of the first window a page reads of a folder. */
  readonly firstWindow: number;
  readonly windows: FolderWindows | undefined;
  /**
   * A continuation's start on the windows' clock: a window kept from an earlier page may
   * serve it when it was read after that; `undefined` for a first page (every folder read).
   */
  readonly startedAt: number | undefined;
  readonly onRead: ((dir: string) => void) | undefined;
}

/**
 * Part of one folder's entries in key order: every entry the range `after` reached when
 * it was read (files after it, folders that can hold a key after it) whose sort key is at
 * least `lower`, up to `window` of them. `complete` when no such entry was left out.
 */
interface Window {
  /** When it was read, on the windows' clock. */
  readonly readAt: number;
  readonly after: string;
  readonly lower: string;
  readonly items: readonly Item[];
  readonly complete: boolean;
  readonly hasSelf: boolean;
}

/**
 * The windows a store keeps between the pages of its listings: the last window read of a
 * few folders (by folder and prefix), each at most `window` entries, the least recently
 * used dropped first. Only windows of folders holding more entries than a few pages are kept.
 */
export class FolderWindows {
  /** Names this store's windows in its page tokens (a token of another store reads afresh). */
  readonly id = randomUUID();
  readonly #kept = new Map<string, Window>();
  readonly #most: number;
  #clock = 0;

  constructor(most = 4) {
    this.#most = most;
  }

  /** The next tick of the windows' clock (a listing's start, a folder's read). */
  tick(): number {
    this.#clock += 1;
    return this.#clock;
  }

  /**
   * The window of `dir` that holds every entry the range reaches from its `after` on, read
   * after `startedAt` (so it lists every key written before the listing started).
   */
  find(dir: string, range: ListRange, startedAt: number): Window | undefined {
    const id = `${dir}\u0000${range.prefix}`;
    const kept = this.#kept.get(id);
    if (kept === undefined) return undefined;
    const last = kept.items.at(-1);
    const covers =
      kept.readAt > startedAt &&
      compareKeys(range.after, kept.after) >= 0 &&
      compareKeys(range.after, kept.lower) >= 0 &&
      (kept.complete || (last !== undefined && compareKeys(range.after, last.sortKey) < 0));
    if (!covers) return undefined;
    this.#kept.delete(id);
    this.#kept.set(id, kept);
    return kept;
  }

  keep(dir: string, range: ListRange, window: Window): void {
    const id = `${dir}\u0000${range.prefix}`;
    this.#kept.delete(id);
    this.#kept.set(id, window);
    while (this.#kept.size > this.#most) {
      const oldest = this.#kept.keys().next().value as string;
      this.#kept.delete(oldest);
    }
  }
}

/** Folders with no more entries than this are read again rather than kept. */
const KEEP_ABOVE = 1_000;

/**
 * Reads the window of `dir` from `lower` on (inclusive): one pass over the folder's
 * entries, keeping the `window` least in a bounded heap. `null` when the folder is gone.
 * Every entry the range reaches is checked (invariant 8), in the window or not.
 */
async function readWindow(
  dir: string,
  keyPrefix: string,
  range: ListRange,
  lower: string,
  reading: FolderReading,
  size: number,
): Promise<Window | null> {
  let folder: Dir;
  try {
    folder = await opendir(dir, { bufferSize: 512 });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // A directory removed (or replaced) since its parent was read holds nothing to list.
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
  reading.onRead?.(dir);
  const readAt = reading.windows?.tick() ?? 0;
  const scan = new FolderScan(keyPrefix, range, lower, size);
  // The entries come from the Dir's buffer (one getdents per 512) with direct calls: an
  // async iteration costs a promise per entry, three times the whole read (folder reads
  // are most of a local cleanup's listings). It yields every ENTRY_RUN entries.
  try {
    while (!scan.run(folder, ENTRY_RUN)) await new Promise((resume) => setImmediate(resume));
  } finally {
    folder.closeSync();
  }
  const { kept, hasSelf } = scan;
  const items = kept.sorted();
  const window = { readAt, after: range.after, lower, items, complete: !kept.overflowed, hasSelf };
  // A folder's last window is kept too: its first did not fit.
  const large = kept.overflowed || lower !== "" || items.length > KEEP_ABOVE;
  if (reading.windows !== undefined && large) {
    reading.windows.keep(dir, range, window);
  }
  return window;
}

/** One pass over a folder's entries, in runs: what {@link readWindow} keeps of them. */
class FolderScan {
  readonly kept: BoundedItems;
  hasSelf = false;

  constructor(
    private readonly keyPrefix: string,
    private readonly range: ListRange,
    private readonly lower: string,
    size: number,
  ) {
    this.kept = new BoundedItems(size);
  }

  /** Reads up to `count` entries of `folder`: `true` when it has no more. */
  run(folder: Dir, count: number): boolean {
    for (let i = 0; i < count; i += 1) {
      const entry = folder.readSync();
      if (entry === null) return true;
      this.#entry(entry);
    }
    return false;
  }

  #entry(entry: Dirent): void {
    const { keyPrefix, range } = this;
    const key = `${keyPrefix}${entry.name}`;
    if (entry.name === LOCAL_SELF_NAME && entry.isFile() && keyPrefix !== "") {
      this.hasSelf = true;
    } else if (entry.isDirectory()) {
      if (`${key}/` === LOCAL_INTERNAL_PREFIX) return;
      if (!isLocalKey(key)) {
        if (reaches(`${key}/`, range)) throw unmappable(key, "a folder whose name");
        return;
      }
      if (reaches(`${key}/`, range)) this.#add(`${key}/`, "dir");
      if (before(key, range)) this.#add(key, "self");
    } else if (before(key, range)) {
      // Invariant 8: nothing under a listed folder is skipped. A file whose name maps to no
      // key (the old layout's `.hfobj`, a self-file name where no key can own it, a
      // backslash or control character) or an entry that is no regular file (a symlink,
      // a socket) would be invisible: a census would miss what it protects.
      if (!entry.isFile())
        throw unmappable(key, "an entry that is no regular file or folder, which");
      if (!isLocalKey(key)) throw unmappable(key, "a file whose name");
      this.#add(key, "file");
    }
  }

  #add(sortKey: string, kind: Item["kind"]): void {
    if (this.lower === "" || compareKeys(sortKey, this.lower) >= 0) {
      this.kept.add({ sortKey, kind });
    }
  }
}

/**
 * Appends the objects under `dir` to `found` in UTF-8 byte order of their keys, until it
 * holds `most` (then `true`) or the range is spent (`false`). A file `seg` sorts by `seg`,
 * a directory by `seg/`; since segments hold no `/`, a depth-first walk in that order is
 * global key order. A directory's own object (its self file, when the key is also the
 * folder of other keys) sorts by `seg`: when no sibling sorts between `seg` and `seg/`, the
 * directory's own walk finds it first; otherwise it is looked up in place. Subtrees outside
 * the range and the backend's private folder are skipped; an entry in the range that maps
 * to no key (see {@link unmappable}) stops the listing. Each folder is read in windows of
 * its least entries (see {@link listPage}). A run of files is taken without a pause (see
 * {@link FolderCursor.takeFiles}): the walk awaits only folder reads, subfolders and self
 * lookups, never once per key.
 */
async function walk(
  dir: string,
  keyPrefix: string,
  range: ListRange,
  selfFound: boolean,
  reading: FolderReading,
  found: ListedFile[],
  most: number,
): Promise<boolean> {
  const first =
    (reading.startedAt === undefined
      ? undefined
      : reading.windows?.find(dir, range, reading.startedAt)) ??
    (await readWindow(dir, keyPrefix, range, "", reading, reading.firstWindow));
  if (first === null) return false;
  if (first.hasSelf && !selfFound && keyPrefix !== "") {
    const key = keyPrefix.slice(0, -1);
    if (inRange(key, range)) {
      found.push({ key, file: childPath(dir, LOCAL_SELF_NAME) });
      if (found.length >= most) return true;
    }
  }
  const cursor = new FolderCursor(dir, keyPrefix, range, reading, first);
  const lookedUp = new Set<string>();
  for (;;) {
    if (cursor.takeFiles(found, most)) return true;
    const item = await cursor.next();
    if (item === undefined) return false;
    const name = nameOf(item, keyPrefix);
    const path = childPath(dir, name);
    if (item.kind === "dir") {
      if (await walk(path, item.sortKey, range, lookedUp.has(name), reading, found, most)) {
        return true;
      }
      continue;
    }
    if (item.kind === "file") {
      found.push({ key: item.sortKey, file: path });
      if (found.length >= most) return true;
      continue;
    }
    // The directory's own object: when the directory itself comes next, its walk finds
    // the object first; otherwise siblings sort in between, so look it up here.
    const following = await cursor.peek();
    if (following?.kind === "dir" && following.sortKey === `${item.sortKey}/`) continue;
    lookedUp.add(name);
    const self = childPath(path, LOCAL_SELF_NAME);
    if (await isFile(self)) {
      found.push({ key: item.sortKey, file: self });
      if (found.length >= most) return true;
    }
  }
}

/**
 * A folder's wanted entries in key order, window after window: a kept window may start
 * before the range (it was read for an earlier page), so what the range no longer reaches
 * is passed.
 */
class FolderCursor {
  #window: Window;
  #index: number;

  constructor(
    private readonly dir: string,
    private readonly keyPrefix: string,
    private readonly range: ListRange,
    private readonly reading: FolderReading,
    first: Window,
  ) {
    this.#window = first;
    this.#index = firstWanted(first.items, range);
  }

  /**
   * Appends the files that come next in the window read, up to the first entry of another
   * kind or the window's end: `true` once `found` holds `most`. A plain loop in a small
   * function: a folder of many files is taken without a promise per key.
   */
  takeFiles(found: ListedFile[], most: number): boolean {
    const items = this.#window.items;
    for (; this.#index < items.length; this.#index += 1) {
      const item = items[this.#index]!;
      if (item.kind !== "file") return false;
      if (!before(item.sortKey, this.range)) continue;
      found.push({
        key: item.sortKey,
        file: childPath(this.dir, item.sortKey.slice(this.keyPrefix.length)),
      });
      if (found.length >= most) {
        this.#index += 1;
        return true;
      }
    }
    return false;
  }

  /** The next wanted entry, taken. */
  async next(): Promise<Item | undefined> {
    const item = await this.peek();
    if (item !== undefined) this.#index += 1;
    return item;
  }

  /** The next wanted entry, not taken: the rest of the window, then the next windows. */
  async peek(): Promise<Item | undefined> {
    for (;;) {
      const items = this.#window.items;
      while (this.#index < items.length) {
        const item = items[this.#index]!;
        if (
          item.kind === "dir" ? reaches(item.sortKey, this.range) : before(item.sortKey, this.range)
        ) {
          return item;
        }
        this.#index += 1;
      }
      const last = items.at(-1);
      if (this.#window.complete || last === undefined) return undefined;
      const size = Math.min(this.reading.window, 2 * items.length);
      const read = await readWindow(
        this.dir,
        this.keyPrefix,
        this.range,
        last.sortKey,
        this.reading,
        size,
      );
      if (read === null) return undefined;
      this.#window = read;
      // The new window starts at the last entry of the old one (inclusive): pass it.
      this.#index = read.items[0]?.sortKey === last.sortKey ? 1 : 0;
    }
  }
}

/** One entry of a folder: its sort key (the folder's key prefix, its name, `/` for a folder). */
interface Item {
  readonly sortKey: string;
  readonly kind: "file" | "dir" | "self";
}

/**
 * Where the range starts in a window's items (sorted by key): the first item sorting after
 * `after`, or the folder just before it when the range starts inside that folder. A kept
 * window serves every page of a long listing, so passing its earlier items one by one made
 * a listing of n keys in pages of p cost n²/p comparisons. Items before the index are
 * outside the range; the walk still checks every item from it on.
 */
function firstWanted(items: readonly Item[], range: ListRange): number {
  if (range.after === "") return 0;
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(items[mid]!.sortKey, range.after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  // A folder `x/` holding `after` (`x/y`) sorts before it and still reaches the range.
  const previous = items[lo - 1];
  return previous !== undefined && previous.kind === "dir" && reaches(previous.sortKey, range)
    ? lo - 1
    : lo;
}

/** The entry's name in its folder (a window holds only sort keys: about 100 bytes an entry). */
function nameOf(item: Item, keyPrefix: string): string {
  return item.sortKey.slice(keyPrefix.length, item.kind === "dir" ? -1 : undefined);
}

/** Whether `a` sorts before `b` in UTF-8 byte order of their keys. */
type Less = (a: Item, b: Item) => boolean;

const keyLess: Less = (a, b) => compareKeys(a.sortKey, b.sortKey) < 0;

/**
 * The engine's own string comparison (UTF-16 code units): UTF-8 byte order as long as no
 * key compared holds a code unit from U+D800 up (a surrogate sorts below U+E000-U+FFFF in
 * UTF-16, above in UTF-8). It costs a fraction of {@link keyLess}'s character loop.
 */
const unitLess: Less = (a, b) => a.sortKey < b.sortKey;

const WIDE_UNIT = /[\ud800-\uffff]/;

/**
 * The `most` least items added (a binary max-heap by key: an item below the greatest kept
 * replaces it), so one pass over a folder of n entries holds at most `most` of them. Items
 * compare by {@link unitLess} until one holds a wide code unit, then by {@link keyLess}: the
 * two agree on items without one, so the heap stays ordered when it switches.
 */
class BoundedItems {
  readonly #items: Item[] = [];
  readonly #most: number;
  #less: Less = unitLess;
  overflowed = false;

  constructor(most: number) {
    this.#most = most;
  }

  add(item: Item): void {
    if (this.#less === unitLess && WIDE_UNIT.test(item.sortKey)) this.#less = keyLess;
    const items = this.#items;
    if (items.length < this.#most) {
      items.push(item);
      this.#up(items.length - 1);
      return;
    }
    this.overflowed = true;
    if (!this.#less(item, items[0]!)) return;
    items[0] = item;
    this.#down(0);
  }

  /** The items kept, least first (the heap is spent). */
  sorted(): Item[] {
    const less = this.#less;
    return this.#items.sort((a, b) => (less(a, b) ? -1 : less(b, a) ? 1 : 0));
  }

  #up(from: number): void {
    const items = this.#items;
    const less = this.#less;
    let i = from;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!less(items[parent]!, items[i]!)) return;
      const moved = items[i]!;
      items[i] = items[parent]!;
      items[parent] = moved;
      i = parent;
    }
  }

  #down(from: number): void {
    const items = this.#items;
    const less = this.#less;
    const n = items.length;
    let i = from;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let most = i;
      if (left < n && less(items[most]!, items[left]!)) most = left;
      if (right < n && less(items[most]!, items[right]!)) most = right;
      if (most === i) return;
      const moved = items[i]!;
      items[i] = items[most]!;
      items[most] = moved;
      i = most;
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
