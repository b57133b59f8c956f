import {
  batches,
  compareKeys,
  joinKey,
  listAll,
  listPages,
  MAX_KEY_BYTES,
  MemoryStore,
  putIfAbsent,
  validateKey,
  validatePrefix,
} from "@holdfast/conditional-store";
import { FakeTime } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import { enc, rejection } from "./helpers.js";

describe("validateKey", () => {
  const bad: [string, string][] = [
    ["empty", ""],
    ["leading slash", "/a"],
    ["trailing slash", "a/"],
    ["empty segment", "a//b"],
    ["dot segment", "a/./b"],
    ["dot-dot segment", "a/../b"],
    ["backslash", "a\\b"],
    ["control character", "a\u0000b"],
    ["newline", "a\nb"],
    ["DEL", "a\u007fb"],
    ["lone surrogate", "a\ud800b"],
    ["too long", "k".repeat(MAX_KEY_BYTES + 1)],
    ["too long in UTF-8 bytes", "é".repeat(MAX_KEY_BYTES / 2 + 1)],
  ];
  for (const [why, key] of bad) {
    it(`rejects a key with ${why} as invalid-input`, () => {
      let thrown: unknown;
      try {
        validateKey(key, "put");
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ kind: "invalid-input", operation: "put", key });
    });
  }

  it("accepts ordinary keys and returns them", () => {
    for (const key of ["a", "a/b.json", "_versions/main/00000000000000000001.json", "ü/名前"]) {
      expect(validateKey(key)).toBe(key);
    }
    expect(validateKey("k".repeat(MAX_KEY_BYTES))).toHaveLength(MAX_KEY_BYTES);
  });

  it("rejects and writes nothing, through the store and through the resolver", async () => {
    const store = new MemoryStore();
    for (const key of ["", "/x", "a/../b", "a\\b"]) {
      await rejection(store.put(key, enc("x")));
      await rejection(putIfAbsent(store, key, enc("x")));
    }
    expect(store.size).toBe(0);
  });

  it("validates prefixes: empty or a key, optionally ending with a slash", () => {
    expect(validatePrefix("")).toBe("");
    expect(validatePrefix("a/b/")).toBe("a/b/");
    expect(() => validatePrefix("a//")).toThrow();
    expect(() => validatePrefix("/a")).toThrow();
  });

  it("joins keys without doubled separators", () => {
    expect(joinKey("a/", "/b/", "", "c")).toBe("a/b/c");
  });
});

describe("MemoryStore", () => {
  it("paginates more than 1000 keys in byte order and listAll streams them all", async () => {
    const store = new MemoryStore();
    const keys = Array.from({ length: 2345 }, (_, i) => `v/${String(i).padStart(5, "0")}`);
    for (const key of [...keys].reverse()) await store.put(key, enc(key));
    await store.put("w/outside", enc("x"));

    const first = await store.list("v/");
    expect(first.objects).toHaveLength(1000);
    expect(first.nextPageToken).toBeDefined();
    const second = await store.list("v/", { pageToken: first.nextPageToken });
    expect(second.objects[0]?.key).toBe(keys[1000]);
    const third = await store.list("v/", { pageToken: second.nextPageToken });
    expect(third.objects).toHaveLength(345);
    expect(third.nextPageToken).toBeUndefined();

    const listed: string[] = [];
    for await (const object of listAll(store, "v/")) listed.push(object.key);
    expect(listed).toEqual(keys);

    const small: string[] = [];
    for await (const object of listAll(store, "v/", { pageSize: 7 })) small.push(object.key);
    expect(small).toEqual(keys);

    // listPages: the same objects, one store page at a time.
    const pages: string[][] = [];
    for await (const page of listPages(store, "v/")) pages.push(page.map((o) => o.key));
    expect(pages.map((p) => p.length)).toEqual([1000, 1000, 345]);
    expect(pages.flat()).toEqual(keys);
    let requests = 0;
    const counted = new Proxy(store, {
      get: (target, prop, receiver) =>
        prop === "list"
          ? (...args: Parameters<MemoryStore["list"]>) => {
              requests += 1;
              return target.list(...args);
            }
          : Reflect.get(target, prop, receiver),
    });
    const sevens: number[] = [];
    for await (const page of listPages(counted, "v/", { pageSize: 7 })) sevens.push(page.length);
    expect(sevens).toHaveLength(Math.ceil(2345 / 7));
    expect(requests).toBe(Math.ceil(2345 / 7));
  });

  it("lists exactly what a naive prefix filter would, for any prefix and startAfter", async () => {
    const store = new MemoryStore({ pageSize: 3 });
    const keys = ["a", "a/b", "a/b/c", "a0", "a/\u00e9", "b", "ab", "a/c", "z/a", "\u00e9/x"];
    for (const key of keys) await store.put(key, enc(key));
    await store.delete("a/c");
    const present = keys.filter((k) => k !== "a/c").sort(compareKeys);
    for (const prefix of ["", "a", "a/", "a/b", "b", "c", "\u00e9/"]) {
      for (const startAfter of [undefined, "", "a", "a/b", "a0", "zz"]) {
        const expected = present.filter(
          (k) =>
            k.startsWith(prefix) && (startAfter === undefined || compareKeys(k, startAfter) > 0),
        );
        const listed: string[] = [];
        for await (const o of listAll(store, prefix, { startAfter })) listed.push(o.key);
        expect(listed, `prefix ${prefix} after ${startAfter}`).toEqual(expected);
      }
    }
  });

  it("lists after startAfter and in UTF-8 byte order", async () => {
    const store = new MemoryStore();
    for (const key of ["p/b", "p/a", "p/\u00e9", "p/z"]) await store.put(key, enc(key));
    const all = (await store.list("p/")).objects.map((o) => o.key);
    expect(all).toEqual(["p/a", "p/b", "p/z", "p/\u00e9"]);
    expect([...all].sort(compareKeys)).toEqual(all);
    expect((await store.list("p/", { startAfter: "p/b" })).objects.map((o) => o.key)).toEqual([
      "p/z",
      "p/\u00e9",
    ]);
  });

  it("compareKeys is UTF-8 byte order without encoding: a code point above U+FFFF sorts after U+FFFF (surrogates)", () => {
    const keys = [
      "a",
      "a/\u{1F600}",
      "a/\uFFFF",
      "a/\uE000",
      "a/\u00e9",
      "a/z",
      "a/",
      "ab",
      "a/\u{10000}x",
    ];
    const bytes = (k: string) => Buffer.from(k, "utf8");
    const expected = [...keys].sort((x, y) => Buffer.compare(bytes(x), bytes(y)));
    expect([...keys].sort(compareKeys)).toEqual(expected);
    for (const x of keys) {
      for (const y of keys) {
        expect(Math.sign(compareKeys(x, y)), `${x} vs ${y}`).toBe(
          Math.sign(Buffer.compare(bytes(x), bytes(y))),
        );
      }
    }
  });

  it("keeps its sorted key index through puts, overwrites and deletes: keys(prefix) is the prefix's range", async () => {
    const store = new MemoryStore();
    for (const key of ["v/3", "v/1", "w/1", "v/2", "u", "v/1"]) await store.put(key, enc(key));
    await store.deleteMany(["v/2", "missing"]);
    await store.delete("u");
    expect(store.keys()).toEqual(["v/1", "v/3", "w/1"]);
    expect(store.keys("v/")).toEqual(["v/1", "v/3"]);
    expect(store.keys("x/")).toEqual([]);
    expect((await store.list("")).objects.map((o) => o.key)).toEqual(["v/1", "v/3", "w/1"]);
  });

  it("truncates Last-Modified to its precision and keeps content-MD5 ETags on equal bytes", async () => {
    const time = new FakeTime(Date.UTC(2026, 0, 1, 0, 0, 0, 750));
    const store = new MemoryStore({ clock: time, etagMode: "content-md5" });
    const a = await store.put("k", enc("same"));
    const b = await store.put("k", enc("same"));
    expect(a.etag).toBe(b.etag);
    expect((await store.head("k"))?.lastModified.getTime()).toBe(Date.UTC(2026, 0, 1));
    expect(store.capabilities.etagIsContentHash).toBe(true);
    const unique = new MemoryStore();
    expect((await unique.put("k", enc("same"))).etag).not.toBe(
      (await unique.put("k", enc("same"))).etag,
    );
  });

  it("honours if-match on delete only when conditional delete is declared", async () => {
    const honours = new MemoryStore();
    await honours.put("k", enc("x"));
    await rejection(honours.delete("k", { ifMatch: "stale" }));
    expect(honours.size).toBe(1);
    const ignores = new MemoryStore({ conditionalDelete: false });
    await ignores.put("k", enc("x"));
    await ignores.delete("k", { ifMatch: "stale" });
    expect(ignores.size).toBe(0);
  });

  it("refuses a batch larger than its batch-delete size", async () => {
    const store = new MemoryStore({ maxBatchDelete: 3 });
    const error = await rejection(store.deleteMany(["a", "b", "c", "d"]));
    expect(error.kind).toBe("invalid-input");
    const result = await store.deleteMany(["a", "b"]);
    expect(result).toEqual({ deleted: ["a", "b"], failed: [] });
  });
});

describe("batches", () => {
  it("splits into chunks of the batch size", () => {
    expect([...batches([1, 2, 3, 4, 5], 2)]).toEqual([[1, 2], [3, 4], [5]]);
    expect([...batches([], 1000)]).toEqual([]);
  });
});
