// Capabilities, round trips and listing: what every read and write must return.
import {
  assertStoreSupported,
  compareKeys,
  listAll,
  type ObjectMeta,
  type ObjectStore,
  type StoreCapabilities,
} from "@holdfast/conditional-store";
import pMap from "p-map";
import { describe, expect, it } from "vitest";
import { bytesOf, collect, decode, expectKind, listKeys, listMeta, text } from "./assertions.js";
import type { ContractSettings } from "./settings.js";

/** Capabilities, round trips and listing: what every read and write must return. */
export function describeBasics(current: () => ObjectStore, settings: ContractSettings): void {
  const { manyKeys, writeConcurrency, slow } = settings;
  describe("capabilities", () => {
    it("declares sane capabilities, matching the expected ones", () => {
      const store = current();
      const caps = store.capabilities;
      expect(typeof store.backend).toBe("string");
      expect(store.backend.length).toBeGreaterThan(0);
      expect(typeof store.location).toBe("string");
      expect(typeof caps.atomicConditionalUpdate).toBe("boolean");
      expect(typeof caps.atomicConditionalDelete).toBe("boolean");
      expect(typeof caps.etagIsContentHash).toBe("boolean");
      expect(caps.timestampPrecisionMs).toBeGreaterThan(0);
      expect(Number.isInteger(caps.maxBatchDelete)).toBe(true);
      expect(caps.maxBatchDelete).toBeGreaterThanOrEqual(1);
      expect(["single-attempt", "repeating", "completes-before-answer"]).toContain(
        caps.requestMode,
      );
      for (const [field, expected] of Object.entries(settings.capabilities ?? {})) {
        expect({ [field]: caps[field as keyof StoreCapabilities] }).toEqual({
          [field]: expected,
        });
      }
    });

    it("refuses a create-only put on an existing key", async () => {
      const store = current();
      const key = "_probe/create-only";
      await store.put(key, text("first"), { precondition: { ifNoneMatch: "*" } });
      await expectKind(
        store.put(key, text("second"), { precondition: { ifNoneMatch: "*" } }),
        "conflict",
      );
      expect(decode((await store.get(key))!.body)).toBe("first");
    });

    it("passes the start-up probe (assertStoreSupported) and leaves nothing behind", async () => {
      const store = current();
      const report = await assertStoreSupported(store);
      expect(report.createOnly).toBe("honoured");
      expect(report.conditionalUpdate).toBe("honoured");
      expect(report.conditionalDelete).toBe(
        store.capabilities.atomicConditionalDelete ? "honoured" : "not-declared",
      );
      expect(report.cleanedUp).toBe(true);
      // Precision findings are heuristic (a ms timestamp can land on a whole second);
      // findings about ignored preconditions are not.
      expect(report.warnings.filter((w) => /ignore|stale/i.test(w))).toEqual([]);
      expect(await listKeys(store, "")).toEqual([]);
    });
  });

  describe("round trips", () => {
    it("get and head of an absent key return null; deleting it succeeds", async () => {
      const store = current();
      expect(await store.get("absent/key")).toBeNull();
      expect(await store.head("absent/key")).toBeNull();
      await store.delete("absent/key");
      expect(await listKeys(store, "")).toEqual([]);
    });

    it("put, get, head and list agree on bytes, ETag and size", async () => {
      const store = current();
      const before = await store.list("");
      expect(before.objects).toEqual([]);
      const body = text("hello, holdfast");
      const { etag } = await store.put("dir/object.json", body);
      expect(typeof etag).toBe("string");
      expect(etag.length).toBeGreaterThan(0);

      const got = await store.get("dir/object.json");
      expect(got).not.toBeNull();
      expect(bytesOf(got!.body)).toEqual(bytesOf(body));
      expect(got!.key).toBe("dir/object.json");
      expect(got!.etag).toBe(etag);
      expect(got!.size).toBe(body.byteLength);
      expect(got!.lastModified).toBeInstanceOf(Date);

      const head = await store.head("dir/object.json");
      expect(head).toMatchObject({ key: "dir/object.json", etag, size: body.byteLength });

      const listed = await listMeta(store, "");
      expect(listed.map((o) => [o.key, o.etag, o.size])).toEqual([
        ["dir/object.json", etag, body.byteLength],
      ]);
    });

    it("an empty object round-trips", async () => {
      const store = current();
      await store.put("empty", new Uint8Array(0));
      const got = await store.get("empty");
      expect(got?.size).toBe(0);
      expect(got?.body.byteLength).toBe(0);
      expect((await store.head("empty"))?.size).toBe(0);
      expect((await listMeta(store, "")).map((o) => o.size)).toEqual([0]);
    });

    it("stores a copy: mutating the caller's buffer or a read result changes nothing", async () => {
      const store = current();
      const body = text("original");
      await store.put("copy", body);
      body.fill(0);
      const first = await store.get("copy");
      first!.body.fill(0);
      expect(decode((await store.get("copy"))!.body)).toBe("original");
    });

    it("overwrite replaces the bytes and changes the ETag", async () => {
      const store = current();
      const first = await store.put("k", text("one"));
      const second = await store.put("k", text("two, longer"));
      expect(second.etag).not.toBe(first.etag);
      const got = await store.get("k");
      expect(decode(got!.body)).toBe("two, longer");
      expect(got!.etag).toBe(second.etag);
      expect(got!.size).toBe(11);
    });

    it("rewriting identical bytes changes the ETag unless the store declares etagIsContentHash", async () => {
      const store = current();
      const first = await store.put("same", text("identical"));
      const second = await store.put("same", text("identical"));
      if (store.capabilities.etagIsContentHash) {
        // Declared ABA case (S3 content MD5): fencing writes must change bytes instead.
        expect(second.etag).toBe(first.etag);
      } else {
        expect(second.etag).not.toBe(first.etag);
      }
      expect((await store.head("same"))?.etag).toBe(second.etag);
    });

    it("durable: false writes and deletes like any other (stores durable on answer ignore it)", async () => {
      const store = current();
      const created = await store.put("quick/a", text("one"), {
        precondition: { ifNoneMatch: "*" },
        durable: false,
      });
      const swapped = await store.put("quick/a", text("two"), {
        precondition: { ifMatch: created.etag },
        durable: false,
      });
      await store.put("quick/b", text("three"), { durable: false });
      const got = await store.get("quick/a");
      expect(decode(got!.body)).toBe("two");
      expect(got!.etag).toBe(swapped.etag);
      await store.delete("quick/b", { durable: false });
      expect(await listKeys(store, "quick/")).toEqual(["quick/a"]);
    });

    it("delete removes the object from get, head and list", async () => {
      const store = current();
      await store.put("gone/soon", text("x"));
      await store.put("gone/stays", text("y"));
      await store.delete("gone/soon");
      expect(await store.get("gone/soon")).toBeNull();
      expect(await store.head("gone/soon")).toBeNull();
      expect(await listKeys(store, "gone/")).toEqual(["gone/stays"]);
    });
  });

  describe("listing", () => {
    it(
      `lists more than 1,000 keys across several pages, in byte order, each once`,
      async () => {
        const store = current();
        const keys = Array.from(
          { length: manyKeys },
          (_, i) => `many/${String(i).padStart(5, "0")}`,
        );
        await pMap(keys, (key) => store.put(key, text(key)), { concurrency: writeConcurrency });
        await store.put("other/outside", text("not in the prefix"));

        const pages: ObjectMeta[][] = [];
        let pageToken: string | undefined;
        do {
          const page = await store.list("many/", { pageToken });
          pages.push(page.objects);
          pageToken = page.nextPageToken;
          expect(pages.length).toBeLessThanOrEqual(manyKeys + 1);
        } while (pageToken !== undefined);
        expect(pages.length).toBeGreaterThan(1);
        const listed = pages.flat().map((o) => o.key);
        expect(listed).toEqual(keys);

        // A caller-chosen smaller page is honoured (backends may return fewer).
        const small: string[] = [];
        let smallPages = 0;
        for (let token: string | undefined, first = true; first || token !== undefined; ) {
          first = false;
          const page = await store.list("many/", { pageSize: 250, pageToken: token });
          expect(page.objects.length).toBeLessThanOrEqual(250);
          small.push(...page.objects.map((o) => o.key));
          token = page.nextPageToken;
          smallPages += 1;
        }
        expect(small).toEqual(keys);
        expect(smallPages).toBeGreaterThanOrEqual(Math.ceil(manyKeys / 250));

        const after = await collect(listAll(store, "many/", { startAfter: keys[499]! }));
        expect(after.map((o) => o.key)).toEqual(keys.slice(500));
      },
      slow,
    );

    it("lists by prefix without leaking neighbouring keys", async () => {
      const store = current();
      const keys = ["p/a", "p/b/c", "p/b/d/e", "pa", "p-x", "q/x", "a/b", "a/b/c"];
      for (const key of keys) await store.put(key, text(key));
      expect(await listKeys(store, "p/")).toEqual(["p/a", "p/b/c", "p/b/d/e"]);
      expect(await listKeys(store, "p")).toEqual(["p-x", "p/a", "p/b/c", "p/b/d/e", "pa"]);
      expect(await listKeys(store, "p/b/")).toEqual(["p/b/c", "p/b/d/e"]);
      expect(await listKeys(store, "p/b")).toEqual(["p/b/c", "p/b/d/e"]);
      expect(await listKeys(store, "q/")).toEqual(["q/x"]);
      expect(await listKeys(store, "nothing/")).toEqual([]);
      // `a/b` and `a/b/c` coexist: an object key may also be a "directory" of others.
      expect(await listKeys(store, "a/")).toEqual(["a/b", "a/b/c"]);
      expect(await listKeys(store, "")).toEqual([...keys].sort(compareKeys));
    });

    it("lists strictly after startAfter", async () => {
      const store = current();
      for (const key of ["s/1", "s/2", "s/3", "s/4"]) await store.put(key, text(key));
      const page = await store.list("s/", { startAfter: "s/2" });
      expect(page.objects.map((o) => o.key)).toEqual(["s/3", "s/4"]);
      expect(page.nextPageToken).toBeUndefined();
    });
  });
}
