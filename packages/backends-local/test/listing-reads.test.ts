// How often a listing reads a large folder (docs/protocol.md §1, "On a local file system"):
// each page continues from the window of the folder the last page stopped in, so a listing
// of n keys reads the folder about n / listWindow times, not once per page.
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { compareKeys, type ObjectStore } from "@holdfast/conditional-store";
import { afterAll, describe, expect, it } from "vitest";

const base = mkdtempSync(join(tmpdir(), "holdfast-local-reads-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

const KEYS = 5_000;
const PAGE = 100;
const WINDOW = 1_200;

/** A root whose folder `big/` holds KEYS files written by another program, and a store on it. */
function bigFolder(listWindow: number) {
  n += 1;
  const root = join(base, `root-${n}`);
  mkdirSync(join(root, "big"), { recursive: true });
  mkdirSync(join(root, "other"), { recursive: true });
  writeFileSync(join(root, "other", "x"), "x");
  const keys: string[] = [];
  // Written in an order that is not key order, so the folder's own order is not key order.
  for (let i = 0; i < KEYS; i += 1) {
    const name = `v${String((i * 7919) % KEYS).padStart(6, "0")}`;
    writeFileSync(join(root, "big", name), name);
    keys.push(`big/${name}`);
  }
  keys.sort(compareKeys);
  const reads: string[] = [];
  const store = createLocalStore({
    root,
    pageSize: PAGE,
    listWindow,
    onFolderRead: (dir) => reads.push(dir),
  });
  return { root, store, keys, bigReads: () => reads.filter((d) => d.endsWith("big")).length };
}

async function listAllKeys(
  store: ObjectStore,
  prefix: string,
  between?: (page: number) => void,
): Promise<string[]> {
  const listed: string[] = [];
  let token: string | undefined;
  let page = 0;
  do {
    const answer = await store.list(prefix, { pageToken: token });
    listed.push(...answer.objects.map((o) => o.key));
    token = answer.nextPageToken;
    page += 1;
    between?.(page);
  } while (token !== undefined);
  return listed;
}

describe("a listing reads a large folder once per window, not once per page", () => {
  it(`lists ${KEYS} keys in ${KEYS / PAGE} pages with ${Math.ceil(KEYS / (WINDOW - 1))} reads of the folder`, async () => {
    const { store, keys, bigReads } = bigFolder(WINDOW);
    expect(await listAllKeys(store, "big/")).toEqual(keys);
    // Each window starts at the last entry of the one before: 5,000 keys in windows of
    // 1,200 are 5 reads. Reading the folder for every page would be 50.
    expect(bigReads()).toBe(Math.ceil(KEYS / (WINDOW - 1)));
  });

  it("windows grow from 16 pages, doubling up to listWindow: 3 reads of 5,000 keys", async () => {
    const { store, keys, bigReads } = bigFolder(KEYS * 2);
    expect(await listAllKeys(store, "")).toEqual([...keys, "other/x"]);
    // 1,600 entries (16 pages of 100), then 3,200 from the last of those, then the rest.
    expect(bigReads()).toBe(3);
  });

  it("a one-key probe reads a window of 1,000 entries, and its next page the following 2,000", async () => {
    const { store, keys, bigReads } = bigFolder(KEYS * 2);
    const probe = await store.list("big/", { pageSize: 1 });
    expect(probe.objects.map((o) => o.key)).toEqual([keys[0]]);
    let token = probe.nextPageToken;
    const listed = [keys[0]];
    for (let page = 0; page < 1_500; page += 1) {
      const next = await store.list("big/", { pageSize: 1, pageToken: token });
      listed.push(...next.objects.map((o) => o.key));
      token = next.nextPageToken;
    }
    expect(listed).toEqual(keys.slice(0, 1_501));
    expect(bigReads()).toBe(2);
  });

  it("a key deleted between pages is not listed; the first page of a new listing reads afresh", async () => {
    const { root, store, keys, bigReads } = bigFolder(WINDOW);
    const gone = keys[2_500]!;
    const listed = await listAllKeys(store, "big/", (page) => {
      if (page === 3) unlinkSync(join(root, gone));
    });
    expect(listed).toEqual(keys.filter((k) => k !== gone));
    // A key written after that listing sorts first: a new listing must see it, although
    // the store still keeps a window of the folder that does not hold it.
    writeFileSync(join(root, "big", "a-new"), "new");
    const readsBefore = bigReads();
    const first = await store.list("big/");
    expect(first.objects[0]?.key).toBe("big/a-new");
    expect(bigReads()).toBe(readsBefore + 1);
  });

  it("a continuation from startAfter before the kept window reads the folder again, in order", async () => {
    const { store, keys } = bigFolder(WINDOW);
    await listAllKeys(store, "big/");
    const from = keys[10]!;
    const page = await store.list("big/", { startAfter: from });
    const second = await store.list("big/", { pageToken: page.nextPageToken, startAfter: from });
    expect([...page.objects, ...second.objects].map((o) => o.key)).toEqual(
      keys.slice(11, 11 + 2 * PAGE),
    );
  });

  it("a window kept from an earlier listing never serves a later one: a key written between them is listed", async () => {
    const { root, store, keys } = bigFolder(WINDOW);
    // The first listing leaves its last window of the folder kept (the tail, complete).
    await listAllKeys(store, "big/");
    writeFileSync(join(root, "big", "v999999"), "late");
    // A second listing from near the end: its first page reads a small window (not kept);
    // its second page continues where the first listing's kept window would serve it.
    const from = keys[KEYS - 150]!;
    const listed: string[] = [];
    let token: string | undefined;
    do {
      const page = await store.list("big/", { startAfter: from, pageToken: token });
      listed.push(...page.objects.map((o) => o.key));
      token = page.nextPageToken;
    } while (token !== undefined);
    expect(listed).toEqual([...keys.slice(KEYS - 149), "big/v999999"]);
  });

  it("keys with code units from U+D800 up come out in UTF-8 byte order across windows", async () => {
    n += 1;
    const root = join(base, `root-${n}`);
    mkdirSync(join(root, "w"), { recursive: true });
    // U+FF21 sorts below U+1F600 (a surrogate pair) in UTF-16, above it in UTF-8.
    const names = ["a", "b", "\uff21", "\u{1f600}", "z", "\u00e9", "\uffee", "\u{10000}"];
    // Written after a few plain names, so the windows switch comparison midway.
    for (const name of names) writeFileSync(join(root, "w", name), name);
    const store = createLocalStore({ root, pageSize: 2, listWindow: 3 });
    const want = names.map((name) => `w/${name}`).sort(compareKeys);
    expect(await listAllKeys(store, "w/")).toEqual(want);
    // Byte order puts U+FF21 first; code-unit order would put the emoji first.
    expect(want.indexOf("w/\uff21")).toBeLessThan(want.indexOf("w/\u{1f600}"));
  });
});
