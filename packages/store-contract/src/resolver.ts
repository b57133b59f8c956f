// The lost-answer resolver against the real store.
import {
  deleteIfMatch,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
} from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import { decode, expectKind, text } from "./assertions.js";

/** The lost-answer resolver against the real store. */
export function describeResolver(current: () => ObjectStore): void {
  describe("resolver on the real store", () => {
    it("putIfAbsent twice: applied, then conflict", async () => {
      const store = current();
      const first = await putIfAbsent(store, "r/claim", text("writer A"));
      expect(first.status).toBe("applied");
      const second = await putIfAbsent(store, "r/claim", text("writer B"));
      expect(second.status).toBe("conflict");
      const got = await store.get("r/claim");
      expect(decode(got!.body)).toBe("writer A");
      if (first.status === "applied") expect(got!.etag).toBe(first.etag);
    });

    it("putIfMatch with the current ETag applies; with a stale one it conflicts", async () => {
      const store = current();
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
      const store = current();
      const base = await store.put("r/del", text("v1"));
      if (!store.capabilities.atomicConditionalDelete) {
        await expectKind(deleteIfMatch(store, "r/del", base.etag), "unsupported");
        return;
      }
      expect((await deleteIfMatch(store, "r/del", base.etag)).status).toBe("applied");
      expect(await store.head("r/del")).toBeNull();
    });
  });
}
