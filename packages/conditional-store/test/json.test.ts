import {
  encodeJson,
  type JsonSchema,
  MemoryStore,
  parseJsonAs,
  readJsonAs,
} from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import { enc, rejection } from "./helpers.js";

/** A schema without zod (this package does not depend on it): `{ ttlMs: number }`. */
const ttlSchema: JsonSchema<{ ttlMs: number }> = {
  safeParse(value) {
    const ttlMs = (value as { ttlMs?: unknown } | null)?.ttlMs;
    return typeof ttlMs === "number"
      ? { success: true, data: { ttlMs } }
      : { success: false, error: new Error("ttlMs must be a number") };
  },
};

describe("parseJsonAs", () => {
  it("returns the parsed value of JSON of the schema", () => {
    expect(parseJsonAs(encodeJson({ ttlMs: 5, extra: true }), ttlSchema)).toEqual({
      ok: true,
      value: { ttlMs: 5 },
    });
  });

  it("says why bytes that are not JSON, or JSON of another schema, do not parse", () => {
    const notJson = parseJsonAs(enc("{truncated"), ttlSchema);
    expect(notJson).toMatchObject({ ok: false, why: "not JSON" });
    expect(!notJson.ok && notJson.cause).toBeInstanceOf(SyntaxError);
    const other = parseJsonAs(encodeJson({ schema: 99 }), ttlSchema);
    expect(other).toMatchObject({ ok: false, why: "ttlMs must be a number" });
    expect(!other.ok && other.cause).toBeInstanceOf(Error);
  });
});

describe("readJsonAs", () => {
  it("reads and parses one object with one GET; null when absent, not JSON, or of another schema", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory);
    await memory.put("a/ok.json", encodeJson({ ttlMs: 7 }));
    await memory.put("a/garbage.json", enc("garbage"));
    await memory.put("a/other.json", encodeJson({ schema: 99 }));
    expect(await readJsonAs(store, "a/ok.json", ttlSchema)).toEqual({ ttlMs: 7 });
    expect(store.requestCounts().get).toBe(1);
    for (const key of ["a/absent.json", "a/garbage.json", "a/other.json"]) {
      expect(await readJsonAs(store, key, ttlSchema)).toBeNull();
    }
    expect(store.requestCounts().get).toBe(4);
  });

  it("lets a store failure through: an unreadable object is not an absent one", async () => {
    const memory = new MemoryStore();
    await memory.put("a/ok.json", encodeJson({ ttlMs: 7 }));
    const store = new FaultStore(memory);
    store.on({ operation: "get" }, { type: "lose-before-apply" });
    const error = await rejection(readJsonAs(store, "a/ok.json", ttlSchema));
    expect(error.kind).toBe("ambiguous");
    const aborted = AbortSignal.abort();
    expect(
      (await rejection(readJsonAs(memory, "a/ok.json", ttlSchema, { signal: aborted }))).kind,
    ).toBe("aborted");
  });
});
