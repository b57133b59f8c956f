import { isHoldfastError, MemoryStore } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";

describe("memory store", () => {
  it("refuses a create-only put on an existing key", async () => {
    const store = new MemoryStore();
    await store.put("a/b", new TextEncoder().encode("x"), { precondition: { ifNoneMatch: "*" } });
    const err = await store
      .put("a/b", new TextEncoder().encode("y"), { precondition: { ifNoneMatch: "*" } })
      .catch((e: unknown) => e);
    expect(isHoldfastError(err, "conflict")).toBe(true);
  });
});
