import { CountingStore, MemoryStore } from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import { enc, rejection, text } from "./helpers.js";

describe("FaultStore", () => {
  it("counts requests by operation, faulted ones included", async () => {
    const store = new FaultStore(new MemoryStore(), {
      rules: [{ operation: "get", fault: { type: "lose-before-apply" } }],
    });
    await store.put("a", enc("1"));
    await rejection(store.get("a"));
    await store.get("a");
    await store.head("a");
    await store.list("");
    await store.delete("a");
    await store.deleteMany(["b", "c"]);
    expect(store.requestCounts()).toEqual({
      get: 2,
      head: 1,
      put: 1,
      delete: 1,
      deleteMany: 1,
      list: 1,
    });
    store.resetCounts();
    expect(store.requestCounts().get).toBe(0);
    expect(store.requests()).toEqual([]);
  });

  it("matches by operation, key, precondition and nth call, for `times` calls", async () => {
    const store = new FaultStore(new MemoryStore());
    store.on(
      { operation: "put", key: /^locks\//, precondition: "create", nth: 2, times: 2 },
      { type: "lose-before-apply" },
    );
    const create = (key: string) =>
      store.put(key, enc("x"), { precondition: { ifNoneMatch: "*" } });
    await create("locks/1"); // 1st match: not yet
    await store.put("locks/plain", enc("x")); // not a create: no match
    await create("data/1"); // key does not match
    await rejection(create("locks/2")); // 2nd match: fires
    await rejection(create("locks/3")); // 3rd match: fires (times 2)
    await create("locks/4"); // spent
    expect(store.pendingRules()).toEqual([]);
    expect(store.requests().map((r) => [r.key, r.faults])).toEqual([
      ["locks/1", []],
      ["locks/plain", []],
      ["data/1", []],
      ["locks/2", ["lose-before-apply"]],
      ["locks/3", ["lose-before-apply"]],
      ["locks/4", []],
    ]);
  });

  it("applies then loses the answer, or loses it before applying", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory)
      .on({ key: "after" }, { type: "apply-then-lose" })
      .on({ key: "before" }, { type: "lose-before-apply" });
    expect((await rejection(store.put("after", enc("x")))).kind).toBe("ambiguous");
    expect((await rejection(store.put("before", enc("x")))).kind).toBe("ambiguous");
    expect(memory.keys()).toEqual(["after"]);
  });

  it("refuses, answers S3's 409, or throws a given error without forwarding", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory)
      .on({ key: "r" }, { type: "refuse" })
      .on({ key: "a" }, { type: "refuse", kind: "auth" })
      .on({ key: "i" }, { type: "in-flight" })
      .on({ key: "t" }, { type: "throw", error: new TypeError("boom") });
    expect(await rejection(store.put("r", enc("x")))).toMatchObject({
      kind: "refused",
      status: 404,
    });
    expect(await rejection(store.put("a", enc("x")))).toMatchObject({ kind: "auth", status: 403 });
    expect(await rejection(store.put("i", enc("x")))).toMatchObject({
      kind: "in-flight",
      status: 409,
      code: "ConditionalRequestConflict",
    });
    await expect(store.put("t", enc("x"))).rejects.toThrow(TypeError);
    expect(memory.size).toBe(0);
  });

  it("lets another writer in first", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory).on(
      { operation: "put" },
      { type: "foreign-put", body: enc("theirs") },
    );
    const error = await rejection(
      store.put("k", enc("mine"), { precondition: { ifNoneMatch: "*" } }),
    );
    expect(error.kind).toBe("conflict");
    expect(text((await memory.get("k"))?.body)).toBe("theirs");
  });

  it("repeats a put as a retrying SDK does and answers the second copy", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory).on({ operation: "put" }, { type: "repeat" });
    const error = await rejection(store.put("k", enc("x"), { precondition: { ifNoneMatch: "*" } }));
    expect(error.kind).toBe("conflict");
    expect(text((await memory.get("k"))?.body)).toBe("x");
    expect(store.requestCounts().put).toBe(1);
  });

  it("delays an answer on the injected sleep", async () => {
    const time = new FakeTime();
    const store = new FaultStore(new MemoryStore(), { sleep: time.sleep }).on(
      { operation: "head" },
      { type: "delay", ms: 1000 },
    );
    let answered = false;
    const pending = store.head("k").then(() => {
      answered = true;
    });
    await time.advance(999);
    expect(answered).toBe(false);
    await time.advance(1);
    await pending;
    expect(answered).toBe(true);
  });

  it("chains steps: a delay, then another writer, then a lost answer", async () => {
    const sleep = recordingSleep();
    const memory = new MemoryStore();
    const store = new FaultStore(memory, { sleep }).on({ operation: "put", key: "k" }, [
      { type: "delay", ms: 50 },
      { type: "foreign-put", key: "other", body: enc("o") },
      { type: "apply-then-lose" },
    ]);
    await rejection(store.put("k", enc("x")));
    expect(sleep.pauses).toEqual([50]);
    expect(memory.keys()).toEqual(["k", "other"]);
  });

  it("declares a request mode and capabilities other than the inner store's", () => {
    const memory = new MemoryStore();
    expect(new FaultStore(memory).capabilities.requestMode).toBe("single-attempt");
    const store = new FaultStore(memory, {
      requestMode: "repeating",
      capabilities: { atomicConditionalDelete: false },
    });
    expect(store.capabilities).toMatchObject({
      requestMode: "repeating",
      atomicConditionalDelete: false,
      maxBatchDelete: memory.capabilities.maxBatchDelete,
    });
  });

  it("strips a precondition as a store that ignores it would", async () => {
    const memory = new MemoryStore();
    await memory.put("k", enc("old"));
    const store = new FaultStore(memory).on(
      { precondition: "create" },
      { type: "strip-precondition" },
    );
    await store.put("k", enc("new"), { precondition: { ifNoneMatch: "*" } });
    expect(text((await memory.get("k"))?.body)).toBe("new");
  });
});

describe("CountingStore", () => {
  it("forwards unchanged and counts requests by type", async () => {
    const memory = new MemoryStore();
    const store = new CountingStore(memory);
    expect(store.capabilities).toBe(memory.capabilities);
    await store.put("a", enc("1"));
    await rejection(store.put("a", enc("2"), { precondition: { ifNoneMatch: "*" } }));
    expect(text((await store.get("a"))?.body)).toBe("1");
    await store.head("a");
    await store.list("");
    await store.deleteMany(["a"]);
    await store.delete("a");
    expect(store.requestCounts()).toEqual({
      get: 1,
      head: 1,
      put: 2,
      delete: 1,
      deleteMany: 1,
      list: 1,
    });
    expect(store.totalRequests()).toBe(7);
    store.resetCounts();
    expect(store.totalRequests()).toBe(0);
  });
});
