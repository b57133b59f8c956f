// Requests that reach the store twice (docs/guarantees.md, "Conditional requests": a
// repeated request), against the real store.
import {
  deleteIfMatch,
  listAll,
  type ObjectStore,
  PROBE_PREFIX,
  probeStore,
  putIfAbsent,
  putIfMatch,
} from "@holdfast/conditional-store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decode, text } from "./assertions.js";

/** Which write requests a harness makes reach the store twice. */
export type RepeatedWrite =
  /** A create-only put (`ifNoneMatch: "*"`). */
  | "create"
  /** A compare-and-swap put (`ifMatch`). */
  | "if-match"
  /** A put without precondition. */
  | "put"
  /** A delete with `ifMatch`. */
  | "conditional-delete"
  /** A delete without precondition. */
  | "delete";

/**
 * A store whose chosen write requests reach the store twice, the second answer being the
 * one the client sees: through a fault proxy between the client and the server
 * (`@holdfast/fault-proxy`'s `repeat`), or, for a store no proxy can stand before (a
 * local filesystem), a fault store's `repeat` around the real store.
 */
export interface RepeatingStoreHarness {
  readonly store: ObjectStore;
  /** From now on, every write request of these kinds reaches the store twice. */
  repeat(kinds: readonly RepeatedWrite[]): void;
  /** Requests reach the store once again. */
  stop(): void;
  /** How many requests were repeated so far (the test asserts its faults really fired). */
  repeated(): number;
  /** Stops the proxy and removes what the store holds. */
  close(): Promise<void>;
}

/** Options of {@link describeRepeatedRequestContract}. */
export interface RepeatedRequestContractOptions {
  /** A harness over a fresh, empty location; called once per test. */
  create: () => Promise<RepeatingStoreHarness>;
  /** Timeout of each test, in ms (the probe test sends a dozen requests). @default 60_000 */
  timeoutMs?: number;
}

/**
 * Registers the repeated-request part of the backend contract: a request that reaches the
 * store twice is settled as the one request it is. No double apply (one object, this
 * request's bytes, the ETag the outcome names), no false conflict (a repeated create,
 * compare-and-swap or delete of this writer is applied), no false success (another
 * writer's object is still a conflict), and no leaked object (nothing left but what the
 * test wrote, the store probe included).
 */
export function describeRepeatedRequestContract(
  name: string,
  options: RepeatedRequestContractOptions,
): void {
  const timeout = options.timeoutMs ?? 60_000;
  describe(`repeated requests: ${name}`, () => {
    let harness: RepeatingStoreHarness | undefined;
    let store: ObjectStore;
    beforeEach(async () => {
      harness = await options.create();
      store = harness.store;
    }, timeout);
    afterEach(async () => {
      await harness?.close();
      harness = undefined;
    }, timeout);
    const keys = async () => {
      const found: string[] = [];
      for await (const meta of listAll(store, "")) found.push(meta.key);
      return found.sort();
    };

    it(
      "a repeated create of this writer's bytes is applied, once (no false conflict, no double apply)",
      async () => {
        harness!.repeat(["create"]);
        const outcome = await putIfAbsent(store, "rr/claim", text("writer A 01J"));
        expect(harness!.repeated()).toBeGreaterThanOrEqual(1);
        expect(outcome.status).toBe("applied");
        harness!.stop();
        const got = await store.get("rr/claim");
        expect(decode(got!.body)).toBe("writer A 01J");
        if (outcome.status === "applied") expect(got!.etag).toBe(outcome.etag);
        expect(await keys()).toEqual(["rr/claim"]);
      },
      timeout,
    );

    it(
      "a repeated create over another writer's object is still a conflict (no false success)",
      async () => {
        await store.put("rr/claim", text("writer B 01J"));
        harness!.repeat(["create"]);
        const outcome = await putIfAbsent(store, "rr/claim", text("writer A 01J"));
        expect(harness!.repeated()).toBeGreaterThanOrEqual(1);
        expect(outcome.status).toBe("conflict");
        harness!.stop();
        expect(decode((await store.get("rr/claim"))!.body)).toBe("writer B 01J");
      },
      timeout,
    );

    it(
      "a repeated compare-and-swap of this writer is applied, once",
      async () => {
        const base = await store.put("rr/cas", text("v1"));
        harness!.repeat(["if-match"]);
        const outcome = await putIfMatch(store, "rr/cas", text("v2 writer A 01J"), base.etag);
        expect(harness!.repeated()).toBeGreaterThanOrEqual(1);
        expect(outcome.status).toBe("applied");
        harness!.stop();
        const got = await store.get("rr/cas");
        expect(decode(got!.body)).toBe("v2 writer A 01J");
        if (outcome.status === "applied") expect(got!.etag).toBe(outcome.etag);
        // The swap happened once: the base ETag no longer matches.
        expect((await putIfMatch(store, "rr/cas", text("v3"), base.etag)).status).toBe("conflict");
        expect(await keys()).toEqual(["rr/cas"]);
      },
      timeout,
    );

    it(
      "a repeated delete is applied: conditional where the store honours it, else unconditional",
      async () => {
        const a = await store.put("rr/a", text("a"));
        await store.put("rr/b", text("b"));
        if (store.capabilities.atomicConditionalDelete) {
          harness!.repeat(["conditional-delete"]);
          expect(await deleteIfMatch(store, "rr/a", a.etag)).toEqual({ status: "applied" });
          expect(harness!.repeated()).toBeGreaterThanOrEqual(1);
          harness!.stop();
        }
        harness!.repeat(["delete"]);
        const before = harness!.repeated();
        await store.delete("rr/b");
        if (!store.capabilities.atomicConditionalDelete) await store.delete("rr/a");
        expect(harness!.repeated()).toBeGreaterThan(before);
        harness!.stop();
        expect(await keys()).toEqual([]);
      },
      timeout,
    );

    it(
      "a repeated unconditional put leaves one object with its bytes",
      async () => {
        harness!.repeat(["put"]);
        const { etag } = await store.put("rr/plain", text("plain bytes"));
        expect(harness!.repeated()).toBeGreaterThanOrEqual(1);
        harness!.stop();
        const got = await store.get("rr/plain");
        expect(decode(got!.body)).toBe("plain bytes");
        expect(got!.etag).toBe(etag);
        expect(await keys()).toEqual(["rr/plain"]);
      },
      timeout,
    );

    it(
      "the store probe with every write repeated finds the store supported and leaves no probe object",
      async () => {
        harness!.repeat(["create", "if-match", "put", "conditional-delete", "delete"]);
        const report = await probeStore(store);
        expect(harness!.repeated()).toBeGreaterThanOrEqual(4);
        harness!.stop();
        expect(report).toMatchObject({
          createOnly: "honoured",
          conditionalUpdate: "honoured",
          currentEtagUpdate: "applied",
          cleanedUp: true,
        });
        const left: string[] = [];
        for await (const meta of listAll(store, PROBE_PREFIX)) left.push(meta.key);
        expect(left).toEqual([]);
      },
      timeout,
    );
  });
}
