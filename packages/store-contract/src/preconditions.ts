// Create-only and if-match writes, conditional and batch deletes: the writes holdfast coordinates through.
import { deleteIfMatch, type ObjectStore } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import {
  assertOneWinner,
  CONTRACT_RACERS,
  decode,
  expectKind,
  listKeys,
  racerBodies,
  text,
} from "./assertions.js";
import type { ContractSettings } from "./settings.js";

/** Create-only and if-match writes, conditional and batch deletes: the writes holdfast coordinates through. */
export function describePreconditions(
  current: () => ObjectStore,
  settings: ContractSettings,
): void {
  const { rounds, loserKinds, slow } = settings;
  describe("preconditions", () => {
    it("create-only on an absent key applies", async () => {
      const store = current();
      const { etag } = await store.put("c/new", text("v1"), {
        precondition: { ifNoneMatch: "*" },
      });
      expect((await store.head("c/new"))?.etag).toBe(etag);
    });

    it("create-only on an existing key is a conflict and writes nothing", async () => {
      const store = current();
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
      const store = current();
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
      const store = current();
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
      const store = current();
      const other = await store.put("m/elsewhere", text("x"));
      await expectKind(
        store.put("m/absent", text("v"), { precondition: { ifMatch: other.etag } }),
        "conflict",
      );
      expect(await store.head("m/absent")).toBeNull();
      expect(await listKeys(store, "m/")).toEqual(["m/elsewhere"]);
    });

    it(
      `invariant 3: ${CONTRACT_RACERS} concurrent create-only puts of one key: exactly one winner, every round`,
      async () => {
        const store = current();
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
      `invariant 3: ${CONTRACT_RACERS} concurrent if-match puts on one ETag: exactly one winner, every round`,
      async () => {
        const store = current();
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
      const store = current();
      const first = await store.put("d/k", text("v1"));
      const second = await store.put("d/k", text("v2"));
      if (!store.capabilities.atomicConditionalDelete) {
        // Opt-out out loud: the resolver refuses instead of trusting an ignored If-Match.
        expect(settings.capabilities?.atomicConditionalDelete).toBe(false);
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
      const store = current();
      for (const key of ["b/1", "b/2", "b/3", "b/keep"]) await store.put(key, text(key));
      const result = await store.deleteMany(["b/1", "b/2", "b/3", "b/missing", "b/also-missing"]);
      expect(result.failed).toEqual([]);
      expect([...result.deleted].sort()).toEqual(
        ["b/1", "b/2", "b/3", "b/also-missing", "b/missing"].sort(),
      );
      expect(await listKeys(store, "")).toEqual(["b/keep"]);
    });

    it("rejects a batch larger than maxBatchDelete with invalid-input, deleting nothing", async () => {
      const store = current();
      const max = store.capabilities.maxBatchDelete;
      await store.put("b/keep", text("keep"));
      const keys = ["b/keep", ...Array.from({ length: max }, (_, i) => `b/none/${i}`)];
      await expectKind(store.deleteMany(keys), "invalid-input");
      expect(await listKeys(store, "")).toEqual(["b/keep"]);
    });

    it("deletes a batch of exactly maxBatchDelete keys", async () => {
      const store = current();
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
      const store = current();
      await store.put("b/keep", text("keep"));
      await expectKind(store.deleteMany(["b/keep", "../escape"]), "invalid-input");
      expect(await listKeys(store, "")).toEqual(["b/keep"]);
    });
  });
}
