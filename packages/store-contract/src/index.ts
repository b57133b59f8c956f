import {
  assertStoreSupported,
  batches,
  compareKeys,
  deleteIfMatch,
  type HoldfastErrorKind,
  listAll,
  MAX_KEY_BYTES,
  type ObjectMeta,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type StoreCapabilities,
} from "@holdfast/conditional-store";
import pMap from "p-map";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  assertOneWinner,
  bytesOf,
  CONTRACT_RACERS,
  collect,
  decode,
  expectKind,
  listKeys,
  listMeta,
  pseudoRandomBytes,
  racerBodies,
  text,
} from "./assertions.js";
import {
  type ArrangeDeleteFailure,
  describeAbortSignals,
  describePartialDelete,
} from "./cancellation.js";

export type { ArrangeDeleteFailure, UndoDeleteFailure } from "./cancellation.js";

/** Options of {@link describeObjectStoreContract}. */
export interface ObjectStoreContractOptions {
  /**
   * Returns a store over a fresh, empty, isolated location (a new temp directory, bucket
   * prefix or container prefix). Called once per test.
   */
  create: () => Promise<ObjectStore> | ObjectStore;
  /**
   * Capability values the backend is expected to declare. Each given field is asserted
   * against `store.capabilities`, so a backend opts out of a behaviour out loud.
   * @default {} (the suite adapts to whatever the store declares)
   */
  capabilities?: Partial<StoreCapabilities>;
  /**
   * Called after each test with the store it used. The default deletes every object the
   * store lists under the empty prefix, in `maxBatchDelete` batches.
   * @default deleteEverything
   */
  cleanup?: (store: ObjectStore) => Promise<void> | void;
  /** Rounds of the 8-writer races (create-only and if-match). @default 20 */
  concurrencyRounds?: number;
  /**
   * Error kinds a losing racer may report. A backend adds `ambiguous` where the store answers
   * some losers with a 5xx (Ceph RGW: 500 for a cancelled racing If-Match put); the suite
   * still requires exactly one winner and the winner's bytes stored.
   * @default ["conflict", "in-flight"]
   */
  raceLoserKinds?: readonly HoldfastErrorKind[];
  /**
   * Allowed difference between the store's clock and this host's clock, in ms, on top of
   * the declared `timestampPrecisionMs`, when Last-Modified is compared with the write.
   * @default 250
   */
  clockToleranceMs?: number;
  /** Number of keys of the multi-page listing test (more than 1,000). @default 1100 */
  manyKeys?: number;
  /** Concurrent requests used to write many keys. @default 16 */
  writeConcurrency?: number;
  /** Size of the large object round-trip, in bytes. @default 8 MiB */
  largeObjectBytes?: number;
  /** Timeout of the heavy tests (many keys, races, large object), in ms. @default 120_000 */
  slowTestTimeoutMs?: number;
  /**
   * Makes a later delete of one key fail on this store (e.g. a blob under a lease) and
   * returns how to undo it. When given, the suite checks that `deleteMany` reports that key
   * in `failed` with a typed error and still deletes the others.
   * @default undefined (that test is not registered)
   */
  arrangeDeleteFailure?: ArrangeDeleteFailure;
}

/**
 * Registers the shared backend contract suite (vitest `describe`) for one store
 * configuration: round trips, pagination, preconditions, races with exactly one winner,
 * batch delete, ETags, Last-Modified, key validation and the resolver on the real store.
 */
export function describeObjectStoreContract(
  name: string,
  options: ObjectStoreContractOptions,
): void {
  const rounds = options.concurrencyRounds ?? 20;
  const loserKinds = options.raceLoserKinds ?? ["conflict", "in-flight"];
  const tolerance = options.clockToleranceMs ?? 250;
  const manyKeys = options.manyKeys ?? 1100;
  const writeConcurrency = options.writeConcurrency ?? 16;
  const largeBytes = options.largeObjectBytes ?? 8 * 1024 * 1024;
  const slow = options.slowTestTimeoutMs ?? 120_000;
  const cleanup = options.cleanup ?? deleteEverything;

  describe(`object store contract: ${name}`, () => {
    let store: ObjectStore;
    let created: ObjectStore | undefined;

    beforeEach(async () => {
      created = await options.create();
      store = created;
    });

    // Emptying the store after the 1,100-key listing test takes many requests; on a
    // loaded machine that outlasts vitest's 10 s hook default.
    afterEach(async () => {
      if (created !== undefined) await cleanup(created);
      created = undefined;
    }, slow);

    describe("capabilities", () => {
      it("declares sane capabilities, matching the expected ones", () => {
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
        for (const [field, expected] of Object.entries(options.capabilities ?? {})) {
          expect({ [field]: caps[field as keyof StoreCapabilities] }).toEqual({
            [field]: expected,
          });
        }
      });

      it("refuses a create-only put on an existing key", async () => {
        const key = "_probe/create-only";
        await store.put(key, text("first"), { precondition: { ifNoneMatch: "*" } });
        await expectKind(
          store.put(key, text("second"), { precondition: { ifNoneMatch: "*" } }),
          "conflict",
        );
        expect(decode((await store.get(key))!.body)).toBe("first");
      });

      it("passes the start-up probe (assertStoreSupported) and leaves nothing behind", async () => {
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
        expect(await store.get("absent/key")).toBeNull();
        expect(await store.head("absent/key")).toBeNull();
        await store.delete("absent/key");
        expect(await listKeys(store, "")).toEqual([]);
      });

      it("put, get, head and list agree on bytes, ETag and size", async () => {
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
        await store.put("empty", new Uint8Array(0));
        const got = await store.get("empty");
        expect(got?.size).toBe(0);
        expect(got?.body.byteLength).toBe(0);
        expect((await store.head("empty"))?.size).toBe(0);
        expect((await listMeta(store, "")).map((o) => o.size)).toEqual([0]);
      });

      it("stores a copy: mutating the caller's buffer or a read result changes nothing", async () => {
        const body = text("original");
        await store.put("copy", body);
        body.fill(0);
        const first = await store.get("copy");
        first!.body.fill(0);
        expect(decode((await store.get("copy"))!.body)).toBe("original");
      });

      it("overwrite replaces the bytes and changes the ETag", async () => {
        const first = await store.put("k", text("one"));
        const second = await store.put("k", text("two, longer"));
        expect(second.etag).not.toBe(first.etag);
        const got = await store.get("k");
        expect(decode(got!.body)).toBe("two, longer");
        expect(got!.etag).toBe(second.etag);
        expect(got!.size).toBe(11);
      });

      it("rewriting identical bytes changes the ETag unless the store declares etagIsContentHash", async () => {
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

      it("delete removes the object from get, head and list", async () => {
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
        for (const key of ["s/1", "s/2", "s/3", "s/4"]) await store.put(key, text(key));
        const page = await store.list("s/", { startAfter: "s/2" });
        expect(page.objects.map((o) => o.key)).toEqual(["s/3", "s/4"]);
        expect(page.nextPageToken).toBeUndefined();
      });
    });

    describe("preconditions", () => {
      it("create-only on an absent key applies", async () => {
        const { etag } = await store.put("c/new", text("v1"), {
          precondition: { ifNoneMatch: "*" },
        });
        expect((await store.head("c/new"))?.etag).toBe(etag);
      });

      it("create-only on an existing key is a conflict and writes nothing", async () => {
        const { etag } = await store.put("c/k", text("v1"));
        const error = await expectKind(
          store.put("c/k", text("v2"), { precondition: { ifNoneMatch: "*" } }),
          "conflict",
        );
        expect(error.key).toBe("c/k");
        const got = await store.get("c/k");
        expect(decode(got!.body)).toBe("v1");
        expect(got!.etag).toBe(etag);
      });

      it("if-match with the current ETag applies and returns the new ETag", async () => {
        const first = await store.put("m/k", text("v1"));
        const second = await store.put("m/k", text("v2"), {
          precondition: { ifMatch: first.etag },
        });
        expect(second.etag).not.toBe(first.etag);
        const got = await store.get("m/k");
        expect(decode(got!.body)).toBe("v2");
        expect(got!.etag).toBe(second.etag);
      });

      it("if-match with a stale ETag is a conflict and writes nothing", async () => {
        const first = await store.put("m/k", text("v1"));
        const second = await store.put("m/k", text("v2"));
        await expectKind(
          store.put("m/k", text("v3"), { precondition: { ifMatch: first.etag } }),
          "conflict",
        );
        const got = await store.get("m/k");
        expect(decode(got!.body)).toBe("v2");
        expect(got!.etag).toBe(second.etag);
      });

      it("if-match on an absent key is a conflict and creates nothing", async () => {
        const other = await store.put("m/elsewhere", text("x"));
        await expectKind(
          store.put("m/absent", text("v"), { precondition: { ifMatch: other.etag } }),
          "conflict",
        );
        expect(await store.head("m/absent")).toBeNull();
        expect(await listKeys(store, "m/")).toEqual(["m/elsewhere"]);
      });

      it(
        `${CONTRACT_RACERS} concurrent create-only puts of one key: exactly one winner, every round`,
        async () => {
          for (let round = 0; round < rounds; round += 1) {
            const key = `race/create/${round}`;
            const bodies = racerBodies(round);
            const results = await Promise.allSettled(
              bodies.map((body) => store.put(key, body, { precondition: { ifNoneMatch: "*" } })),
            );
            const winners = assertOneWinner(results, round, loserKinds);
            const stored = await store.get(key);
            expect(decode(stored!.body)).toBe(decode(bodies[winners]!));
            expect(stored!.etag).toBe(
              (results[winners] as PromiseFulfilledResult<{ etag: string }>).value.etag,
            );
          }
        },
        slow,
      );

      it(
        `${CONTRACT_RACERS} concurrent if-match puts on one ETag: exactly one winner, every round`,
        async () => {
          for (let round = 0; round < rounds; round += 1) {
            const key = `race/cas/${round}`;
            const base = await store.put(key, text(`base ${round}`));
            const bodies = racerBodies(round);
            const results = await Promise.allSettled(
              bodies.map((body) => store.put(key, body, { precondition: { ifMatch: base.etag } })),
            );
            const winners = assertOneWinner(results, round, loserKinds);
            const stored = await store.get(key);
            expect(decode(stored!.body)).toBe(decode(bodies[winners]!));
            expect(stored!.etag).toBe(
              (results[winners] as PromiseFulfilledResult<{ etag: string }>).value.etag,
            );
          }
        },
        slow,
      );
    });

    describe("conditional delete", () => {
      it("deletes at the current ETag and refuses a stale one, or declares it unsupported", async () => {
        const first = await store.put("d/k", text("v1"));
        const second = await store.put("d/k", text("v2"));
        if (!store.capabilities.atomicConditionalDelete) {
          // Opt-out out loud: the resolver refuses instead of trusting an ignored If-Match.
          expect(options.capabilities?.atomicConditionalDelete).toBe(false);
          await expectKind(deleteIfMatch(store, "d/k", second.etag), "unsupported");
          expect((await store.head("d/k"))?.etag).toBe(second.etag);
          return;
        }
        await expectKind(store.delete("d/k", { ifMatch: first.etag }), "conflict");
        expect((await store.head("d/k"))?.etag).toBe(second.etag);
        await store.delete("d/k", { ifMatch: second.etag });
        expect(await store.head("d/k")).toBeNull();
      });
    });

    describe("batch delete", () => {
      it("deletes present keys and reports missing ones deleted", async () => {
        for (const key of ["b/1", "b/2", "b/3", "b/keep"]) await store.put(key, text(key));
        const result = await store.deleteMany(["b/1", "b/2", "b/3", "b/missing", "b/also-missing"]);
        expect(result.failed).toEqual([]);
        expect([...result.deleted].sort()).toEqual(
          ["b/1", "b/2", "b/3", "b/also-missing", "b/missing"].sort(),
        );
        expect(await listKeys(store, "")).toEqual(["b/keep"]);
      });

      it("rejects a batch larger than maxBatchDelete with invalid-input, deleting nothing", async () => {
        const max = store.capabilities.maxBatchDelete;
        await store.put("b/keep", text("keep"));
        const keys = ["b/keep", ...Array.from({ length: max }, (_, i) => `b/none/${i}`)];
        await expectKind(store.deleteMany(keys), "invalid-input");
        expect(await listKeys(store, "")).toEqual(["b/keep"]);
      });

      it("deletes a batch of exactly maxBatchDelete keys", async () => {
        const max = store.capabilities.maxBatchDelete;
        const present = Array.from({ length: Math.min(max, 20) }, (_, i) => `b/full/${i}`);
        for (const key of present) await store.put(key, text(key));
        const keys = [
          ...present,
          ...Array.from({ length: max - present.length }, (_, i) => `b/ghost/${i}`),
        ];
        const result = await store.deleteMany(keys);
        expect(result.failed).toEqual([]);
        expect(result.deleted.length).toBe(max);
        expect(await listKeys(store, "")).toEqual([]);
      });

      it("rejects a batch with an invalid key with invalid-input, deleting nothing", async () => {
        await store.put("b/keep", text("keep"));
        await expectKind(store.deleteMany(["b/keep", "../escape"]), "invalid-input");
        expect(await listKeys(store, "")).toEqual(["b/keep"]);
      });
    });

    describePartialDelete(() => store, options.arrangeDeleteFailure);
    describeAbortSignals(() => store);

    describe("Last-Modified", () => {
      it("is never in the future and lies within the declared precision of the write", async () => {
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

    describe("resolver on the real store", () => {
      it("putIfAbsent twice: applied, then conflict", async () => {
        const first = await putIfAbsent(store, "r/claim", text("writer A"));
        expect(first.status).toBe("applied");
        const second = await putIfAbsent(store, "r/claim", text("writer B"));
        expect(second.status).toBe("conflict");
        const got = await store.get("r/claim");
        expect(decode(got!.body)).toBe("writer A");
        if (first.status === "applied") expect(got!.etag).toBe(first.etag);
      });

      it("putIfMatch with the current ETag applies; with a stale one it conflicts", async () => {
        const base = await store.put("r/cas", text("v1"));
        const applied = await putIfMatch(store, "r/cas", text("v2"), base.etag);
        expect(applied.status).toBe("applied");
        const stale = await putIfMatch(store, "r/cas", text("v3"), base.etag);
        expect(stale.status).toBe("conflict");
        const got = await store.get("r/cas");
        expect(decode(got!.body)).toBe("v2");
        if (applied.status === "applied") expect(got!.etag).toBe(applied.etag);
      });

      it("deleteIfMatch with the current ETag applies where conditional delete is atomic", async () => {
        const base = await store.put("r/del", text("v1"));
        if (!store.capabilities.atomicConditionalDelete) {
          await expectKind(deleteIfMatch(store, "r/del", base.etag), "unsupported");
          return;
        }
        expect((await deleteIfMatch(store, "r/del", base.etag)).status).toBe("applied");
        expect(await store.head("r/del")).toBeNull();
      });
    });
  });
}

/** The default cleanup: delete every object the store lists, in declared batch sizes. */
async function deleteEverything(store: ObjectStore): Promise<void> {
  const keys: string[] = [];
  for await (const meta of listAll(store, "")) keys.push(meta.key);
  for (const batch of batches(keys, store.capabilities.maxBatchDelete)) {
    const result = await store.deleteMany(batch);
    if (result.failed.length > 0) throw result.failed[0]!.error;
  }
}
