// Contract tests for the caller's AbortSignal and for batch deletes that partly fail.
import type { ObjectStore } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import { decode, expectKind, listKeys, text } from "./assertions.js";

/** Undoes what an `arrangeDeleteFailure` hook did (so the test's cleanup can delete the key). */
export type UndoDeleteFailure = () => Promise<void> | void;

/**
 * Makes a later delete of `key` fail on `store` (a blob under a lease, a locked file). The
 * object exists when it is called.
 */
export type ArrangeDeleteFailure = (
  store: ObjectStore,
  key: string,
) => Promise<UndoDeleteFailure> | UndoDeleteFailure;

/**
 * Every operation refuses a signal that is already aborted with kind `aborted`, and sends
 * nothing: a put writes nothing, a delete leaves the object. Callers (lease keepers,
 * cleanup) stop through signals and must never see a success or a write after aborting.
 */
export function describeAbortSignals(current: () => ObjectStore): void {
  describe("abort signals", () => {
    it("every operation rejects an already-aborted signal with kind aborted", async () => {
      const store = current();
      await store.put("s/present", text("kept"));
      const signal = AbortSignal.abort();
      await expectKind(store.get("s/present", { signal }), "aborted");
      await expectKind(store.head("s/present", { signal }), "aborted");
      await expectKind(store.list("s/", { signal }), "aborted");
      await expectKind(store.put("s/new", text("never"), { signal }), "aborted");
      await expectKind(
        store.put("s/new", text("never"), { signal, precondition: { ifNoneMatch: "*" } }),
        "aborted",
      );
      await expectKind(store.delete("s/present", { signal }), "aborted");
      await expectKind(store.deleteMany(["s/present"], { signal }), "aborted");
      expect(await listKeys(store, "")).toEqual(["s/present"]);
      expect(decode((await store.get("s/present"))!.body)).toBe("kept");
    });

    it("a signal that is not aborted changes nothing", async () => {
      const store = current();
      const signal = new AbortController().signal;
      const { etag } = await store.put("s/k", text("v"), { signal });
      expect((await store.head("s/k", { signal }))?.etag).toBe(etag);
      expect(decode((await store.get("s/k", { signal }))!.body)).toBe("v");
      expect((await store.list("s/", { signal })).objects.map((o) => o.key)).toEqual(["s/k"]);
      const result = await store.deleteMany(["s/k"], { signal });
      expect(result).toEqual({ deleted: ["s/k"], failed: [] });
    });
  });
}

/**
 * A batch delete in which one key fails reports that key in `failed` with a typed error
 * naming it, still deletes the others, and never claims the failed key deleted: cleanup
 * counts on `deleted` to mean gone.
 */
export function describePartialDelete(
  current: () => ObjectStore,
  arrange: ArrangeDeleteFailure | undefined,
): void {
  describe("batch delete that partly fails", () => {
    it("reports every requested key once, as deleted or failed", async () => {
      const store = current();
      for (const key of ["p/1", "p/2"]) await store.put(key, text(key));
      const result = await store.deleteMany(["p/1", "p/missing", "p/2"]);
      const reported = [...result.deleted, ...result.failed.map((f) => f.key)].sort();
      expect(reported).toEqual(["p/1", "p/2", "p/missing"]);
      expect(result.failed).toEqual([]);
    });

    // Registered only for backends that can stage a failure (the hook is their opt-in).
    if (arrange === undefined) return;
    it("reports the key whose delete failed, with a typed error, and deletes the rest", async () => {
      const store = current();
      for (const key of ["p/a", "p/stuck", "p/b"]) await store.put(key, text(key));
      const undo = await arrange(store, "p/stuck");
      try {
        const result = await store.deleteMany(["p/a", "p/stuck", "p/b", "p/missing"]);
        expect([...result.deleted].sort()).toEqual(["p/a", "p/b", "p/missing"]);
        expect(result.failed.map((f) => f.key)).toEqual(["p/stuck"]);
        const error = result.failed[0]!.error;
        expect({ name: error.name, key: error.key }).toEqual({
          name: "HoldfastError",
          key: "p/stuck",
        });
        expect(await listKeys(store, "")).toEqual(["p/stuck"]);
      } finally {
        await undo();
      }
    });
  });
}
