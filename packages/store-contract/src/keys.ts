// Last-Modified, awkward and invalid keys, large objects.
import { compareKeys, MAX_KEY_BYTES, type ObjectStore } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import { decode, expectKind, listKeys, listMeta, pseudoRandomBytes, text } from "./assertions.js";
import type { ContractSettings } from "./settings.js";

/** Last-Modified, awkward and invalid keys, large objects. */
export function describeKeysAndTimes(current: () => ObjectStore, settings: ContractSettings): void {
  const { tolerance, largeBytes, slow } = settings;
  describe("Last-Modified", () => {
    it("is never in the future and lies within the declared precision of the write", async () => {
      const store = current();
      const precision = store.capabilities.timestampPrecisionMs;
      const before = Date.now();
      await store.put("t/k", text("x"));
      const after = Date.now();
      const head = await store.head("t/k");
      const got = await store.get("t/k");
      const [listed] = await listMeta(store, "t/");
      for (const meta of [head!, got!, listed!]) {
        const lm = meta.lastModified.getTime();
        expect(Number.isFinite(lm)).toBe(true);
        expect(lm).toBeLessThanOrEqual(after + tolerance);
        expect(lm).toBeGreaterThan(before - precision - tolerance);
      }
    });

    it("does not go backwards across successive writes of a key", async () => {
      const store = current();
      await store.put("t/k", text("1"));
      const first = (await store.head("t/k"))!.lastModified.getTime();
      await store.put("t/k", text("2"));
      const second = (await store.head("t/k"))!.lastModified.getTime();
      expect(second).toBeGreaterThanOrEqual(first);
    });
  });

  describe("keys", () => {
    const awkward = [
      "with space/and more spaces.txt",
      "ünïcødé/日本語/😀 emoji.json",
      "deep/1/2/3/4/5/6/7/8/9/10/11/12/13/14/15/16/leaf",
      "punctuation/a+b=c&d;e,f'g(h)[i]{j}~k!l@m$n#o",
      "percent/%41%2F%",
      "dots/.hidden",
      "dots/trailing.",
      "dots/...three",
      "tree/x",
      "tree/x/y",
      // A long key of short segments (S3's 1,024-byte limit minus a margin).
      Array.from({ length: 10 }, (_, i) => `${i}`.repeat(99)).join("/"),
    ];

    it("awkward but valid keys round-trip and list in byte order", async () => {
      const store = current();
      for (const key of awkward) {
        await store.put(key, text(`body of ${key}`));
      }
      for (const key of awkward) {
        const got = await store.get(key);
        expect(got?.key).toBe(key);
        expect(decode(got!.body)).toBe(`body of ${key}`);
        expect((await store.head(key))?.key).toBe(key);
      }
      expect(await listKeys(store, "")).toEqual([...awkward].sort(compareKeys));
      expect(await listKeys(store, "ünïcødé/")).toEqual(["ünïcødé/日本語/😀 emoji.json"]);
      expect(await listKeys(store, "tree/x")).toEqual(["tree/x", "tree/x/y"]);
      expect(await listKeys(store, "tree/x/")).toEqual(["tree/x/y"]);
    });

    const invalid: [string, string][] = [
      ["empty", ""],
      ["dot-dot", ".."],
      ["dot-dot segment", "a/../b"],
      ["dot segment", "a/./b"],
      ["leading slash", "/abs"],
      ["trailing slash", "dir/"],
      ["empty segment", "a//b"],
      ["control character", "ctl\u0001x"],
      ["newline", "line\nbreak"],
      ["backslash", "back\\slash"],
      ["over 1024 bytes", "k".repeat(MAX_KEY_BYTES + 1)],
      ["over 1024 bytes in UTF-8", "é".repeat(MAX_KEY_BYTES / 2 + 1)],
    ];

    it("invalid keys are rejected with invalid-input on every operation, writing nothing", async () => {
      const store = current();
      for (const [, key] of invalid) {
        await expectKind(store.put(key, text("x")), "invalid-input");
        await expectKind(
          store.put(key, text("x"), { precondition: { ifNoneMatch: "*" } }),
          "invalid-input",
        );
        await expectKind(
          store.put(key, text("x"), { precondition: { ifMatch: "etag" } }),
          "invalid-input",
        );
        await expectKind(store.get(key), "invalid-input");
        await expectKind(store.head(key), "invalid-input");
        await expectKind(store.delete(key), "invalid-input");
      }
      await expectKind(store.list("/abs"), "invalid-input");
      await expectKind(store.list("../"), "invalid-input");
      expect(await listKeys(store, "")).toEqual([]);
    });
  });

  describe("large objects", () => {
    it(
      `a ${Math.round(largeBytes / 1024 / 1024)} MiB object round-trips byte-exact`,
      async () => {
        const store = current();
        const body = pseudoRandomBytes(largeBytes, 0x5eed);
        const { etag } = await store.put("large/object.bin", body);
        const got = await store.get("large/object.bin");
        expect(got?.size).toBe(largeBytes);
        expect(got?.etag).toBe(etag);
        expect(got!.body.byteLength).toBe(largeBytes);
        // Compare as Buffers: far faster than a deep-equal of 8 M elements.
        expect(Buffer.from(got!.body).equals(Buffer.from(body))).toBe(true);
        expect((await store.head("large/object.bin"))?.size).toBe(largeBytes);
        expect((await listMeta(store, "large/")).map((o) => o.size)).toEqual([largeBytes]);
      },
      slow,
    );
  });
}
