import { createHash } from "node:crypto";
import {
  DEFAULT_REISSUE_POLICY,
  deleteIfMatch,
  encodeJson,
  holdfastError,
  isUnresolved,
  MemoryStore,
  putIfAbsent,
  putIfMatch,
  resolveConditionalPut,
  seededIds,
  writerPayload,
} from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { describe, expect, it, vi } from "vitest";
import { enc, json, rejection, scripted, text } from "./helpers.js";

describe("C1 lost answer of an applied create", () => {
  it("C1 an applied create whose answer was lost resolves as applied (invariant 4)", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      precondition: "create",
      fault: { type: "apply-then-lose" },
    });
    const outcome = await putIfAbsent(store, "locks/cluster.json", enc("owner-a"), { sleep });
    const stored = await memory.get("locks/cluster.json");
    expect(outcome).toEqual({ status: "applied", etag: stored?.etag });
    expect(text(stored?.body)).toBe("owner-a");
    // First copy applied and was lost; the re-issue met its own object; a read decided.
    expect(store.requestCounts()).toMatchObject({ put: 2, get: 1 });
    expect(sleep.pauses).toEqual([200]);
  });

  it("C1 every answer lost after the first copy applied still resolves as applied", async () => {
    const { store, sleep } = scripted(
      "single-attempt",
      { operation: "put", fault: { type: "apply-then-lose" } },
      {
        operation: "put",
        nth: 2,
        times: Number.POSITIVE_INFINITY,
        fault: { type: "lose-before-apply" },
      },
    );
    const outcome = await putIfAbsent(store, "locks/cluster.json", enc("owner-a"), { sleep });
    expect(outcome.status).toBe("applied");
    expect(store.requestCounts().put).toBe(5);
    expect(sleep.pauses).toEqual([200, 400, 800, 1600]);
  });
});

describe("C2 equal bytes and writer identity", () => {
  it("C2 a second claimant of one token is refused because each claim names its writer (invariant 3)", async () => {
    const ids = seededIds(7);
    const first = writerPayload({ claim: "init", token: "tok-1" }, ids);
    const second = writerPayload({ claim: "init", token: "tok-1" }, ids);
    expect(first.writerId).not.toBe(second.writerId);

    // Repeating client: its first conflict is read back by bytes.
    const { memory, store, sleep } = scripted("repeating");
    expect((await putIfAbsent(store, "claims/init.json", first.bytes, { sleep })).status).toBe(
      "applied",
    );
    const outcome = await putIfAbsent(store, "claims/init.json", second.bytes, { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && json(outcome.current?.body ?? undefined)).toMatchObject(
      {
        writerId: first.writerId,
      },
    );
    expect(store.requestCounts().get).toBe(1);
    expect(text((await memory.get("claims/init.json"))?.body)).toBe(text(first.bytes));
  });

  it("C2 a second claimant whose answer was lost is still refused (invariant 3)", async () => {
    const ids = seededIds(8);
    const first = writerPayload({ claim: "init", token: "tok-1" }, ids);
    const second = writerPayload({ claim: "init", token: "tok-1" }, ids);
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      nth: 2,
      fault: { type: "lose-before-apply" },
    });
    await putIfAbsent(store, "claims/init.json", first.bytes, { sleep });
    const outcome = await putIfAbsent(store, "claims/init.json", second.bytes, { sleep });
    expect(outcome.status).toBe("conflict");
    expect(sleep.pauses).toEqual([200]);
    expect(text((await memory.get("claims/init.json"))?.body)).toBe(text(first.bytes));
  });

  it("C2 equal content-addressed bytes are the same effect", async () => {
    const content = enc("block of data");
    const key = `data/${createHash("sha256").update(content).digest("hex")}.bin`;
    const { store, sleep } = scripted("repeating");
    const a = await putIfAbsent(store, key, content, { sleep });
    const b = await putIfAbsent(store, key, content.slice(), { sleep });
    expect(a.status).toBe("applied");
    expect(b).toEqual({ status: "applied", etag: a.status === "applied" ? a.etag : "" });
  });

  it("C2 a shared payload cannot tell two claimants apart (why claims carry a ULID)", async () => {
    // The hazard the writer id exists for: without it, a lost answer makes both "win".
    const shared = encodeJson({ claim: "init", token: "tok-1" });
    const { store, sleep } = scripted("single-attempt", {
      operation: "put",
      nth: 2,
      fault: { type: "lose-before-apply" },
    });
    await putIfAbsent(store, "claims/init.json", shared, { sleep });
    const second = await putIfAbsent(store, "claims/init.json", shared.slice(), { sleep });
    expect(second.status).toBe("applied");
  });
});

describe("C5 lost answers of putIfAbsent and putIfMatch", () => {
  it("C5 putIfAbsent re-issues a copy lost before applying", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      fault: { type: "lose-before-apply" },
    });
    const outcome = await putIfAbsent(store, "a/b.json", enc("x"), { sleep });
    expect(outcome).toEqual({ status: "applied", etag: (await memory.head("a/b.json"))?.etag });
    expect(store.requestCounts()).toMatchObject({ put: 2, get: 0 });
  });

  it("C5 putIfAbsent whose every copy was lost before applying is unresolved (invariant 4)", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const error = await rejection(putIfAbsent(store, "a/b.json", enc("x"), { sleep }));
    expect(error).toMatchObject({
      kind: "unresolved",
      operation: "put",
      key: "a/b.json",
      precondition: { ifNoneMatch: "*" },
    });
    expect(isUnresolved(error)).toBe(true);
    expect(memory.size).toBe(0);
  });

  it("C5 putIfMatch whose answer was lost after applying resolves as applied", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      precondition: "if-match",
      fault: { type: "apply-then-lose" },
    });
    const { etag } = await memory.put("refs/tag.json", enc("v1"));
    const outcome = await putIfMatch(store, "refs/tag.json", enc("v2"), etag, { sleep });
    const stored = await memory.get("refs/tag.json");
    expect(outcome).toEqual({ status: "applied", etag: stored?.etag });
    expect(stored?.etag).not.toBe(etag);
    expect(store.requestCounts()).toMatchObject({ put: 2, get: 1 });
  });

  it("C5 putIfMatch still at the expected ETag after every loss is unresolved (invariant 4)", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      precondition: "if-match",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const { etag } = await memory.put("refs/tag.json", enc("v1"));
    const error = await rejection(putIfMatch(store, "refs/tag.json", enc("v2"), etag, { sleep }));
    expect(error).toMatchObject({ kind: "unresolved", precondition: { ifMatch: etag } });
    expect(text((await memory.get("refs/tag.json"))?.body)).toBe("v1");
  });

  it("C5 putIfMatch that lost its answer and then met another writer is a conflict", async () => {
    const { memory, store, sleep } = scripted(
      "single-attempt",
      { operation: "put", fault: { type: "lose-before-apply" } },
      { operation: "put", nth: 2, fault: { type: "foreign-put", body: enc("theirs") } },
    );
    const { etag } = await memory.put("refs/tag.json", enc("v1"));
    const outcome = await putIfMatch(store, "refs/tag.json", enc("mine"), etag, { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && text(outcome.current?.body)).toBe("theirs");
  });

  it("C5 a first conflict on a single-attempt client is read back once and stays a conflict", async () => {
    const { memory, store, sleep } = scripted("single-attempt");
    await memory.put("a/b.json", enc("theirs"));
    const outcome = await putIfAbsent(store, "a/b.json", enc("mine"), { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && text(outcome.current?.body)).toBe("theirs");
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 1 });
    expect(sleep.pauses).toEqual([]);
  });
});

describe("C6 repeating clients", () => {
  it("C6 a repeating client reads back its own earlier copy after a first conflict", async () => {
    const { memory, store, sleep } = scripted("repeating", {
      operation: "put",
      fault: { type: "repeat" },
    });
    const outcome = await putIfAbsent(store, "locks/l.json", enc("lock-01J"), { sleep });
    expect(outcome).toEqual({ status: "applied", etag: (await memory.head("locks/l.json"))?.etag });
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 1 });
    expect(sleep.pauses).toEqual([]);
  });

  it("C6 a create repeated below a single-attempt client is this writer's (a repeated request)", async () => {
    // The client sent one copy; something on the way (a proxy retrying a POST) sent two.
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      fault: { type: "repeat" },
    });
    const outcome = await putIfAbsent(store, "locks/l.json", enc("lock-01J"), { sleep });
    expect(outcome).toEqual({ status: "applied", etag: (await memory.head("locks/l.json"))?.etag });
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 1 });
    expect(sleep.pauses).toEqual([]);
  });

  it("C6 a compare-and-swap repeated below a single-attempt client is this writer's", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      precondition: "if-match",
      fault: { type: "repeat" },
    });
    const { etag } = await memory.put("refs/t.json", enc("v1"));
    const outcome = await putIfMatch(store, "refs/t.json", enc("v2-01J"), etag, { sleep });
    expect(outcome).toEqual({ status: "applied", etag: (await memory.head("refs/t.json"))?.etag });
    expect(text((await memory.get("refs/t.json"))?.body)).toBe("v2-01J");
  });

  it("C6 a conditional delete repeated below a single-attempt client is applied", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "delete",
      fault: { type: "repeat" },
    });
    const { etag } = await memory.put("leases/l.json", enc("lease-01J"));
    expect(await deleteIfMatch(store, "leases/l.json", etag, { sleep })).toEqual({
      status: "applied",
    });
    expect(await memory.head("leases/l.json")).toBeNull();
    expect(store.requestCounts()).toMatchObject({ delete: 1, get: 1 });
  });

  it("C6 a repeating client's first conflict with another writer's bytes is a conflict", async () => {
    const { memory, store, sleep } = scripted("repeating");
    await memory.put("locks/l.json", enc("lock-other"));
    const outcome = await putIfAbsent(store, "locks/l.json", enc("lock-mine"), { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && text(outcome.current?.body)).toBe("lock-other");
  });
});

describe("C7 the client decides what a failed copy says", () => {
  it("C7 a local error is not re-issued", async () => {
    const { memory, store, sleep } = scripted("completes-before-answer", {
      operation: "put",
      fault: { type: "lose-before-apply" },
    });
    const error = await rejection(putIfAbsent(store, "a/b.json", enc("x"), { sleep }));
    expect(error.kind).not.toBe("unresolved");
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 0 });
    expect(sleep.pauses).toEqual([]);
    expect(memory.size).toBe(0);
  });

  it("C7 a repeating client's auth error is re-issued and read back", async () => {
    const auth = holdfastError("auth", "put", "403 after a retried copy", {
      status: 403,
      code: "AccessDenied",
    });
    const { memory, store, sleep } = scripted("repeating", {
      operation: "put",
      fault: { type: "apply-then-lose", error: auth },
    });
    const outcome = await putIfAbsent(store, "a/b.json", enc("mine"), { sleep });
    expect(outcome).toEqual({ status: "applied", etag: (await memory.head("a/b.json"))?.etag });
    expect(store.requestCounts().put).toBe(2);
    expect(sleep.pauses).toEqual([200]);
  });

  it("C7 a single-attempt client's auth error is refused at once", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      fault: { type: "refuse", kind: "auth" },
    });
    const error = await rejection(putIfAbsent(store, "a/b.json", enc("mine"), { sleep }));
    expect(error).toMatchObject({ kind: "auth", status: 403 });
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 0 });
    expect(memory.size).toBe(0);
  });

  it("C7 an S3 409 over an absent key stays unresolved", async () => {
    const { memory, store, sleep } = scripted("repeating", {
      operation: "put",
      fault: { type: "in-flight" },
    });
    const error = await rejection(putIfAbsent(store, "a/b.json", enc("mine"), { sleep }));
    expect(error).toMatchObject({ kind: "unresolved", key: "a/b.json" });
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 1 });
    expect(memory.size).toBe(0);
  });

  it("C7 an if-match 409 is re-issued", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "put",
      fault: { type: "in-flight" },
    });
    const { etag } = await memory.put("a/b.json", enc("v1"));
    const outcome = await putIfMatch(store, "a/b.json", enc("v2"), etag, { sleep });
    expect(outcome.status).toBe("applied");
    expect(store.requestCounts()).toMatchObject({ put: 2, get: 0 });
  });

  it("C7 another writer's equal bytes read back as applied", async () => {
    const { store, sleep } = scripted("repeating", {
      operation: "put",
      fault: { type: "foreign-put", body: enc("same") },
    });
    const outcome = await putIfAbsent(store, "a/b.json", enc("same"), { sleep });
    expect(outcome.status).toBe("applied");
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 1 });
  });

  it("C7 a first refusal is final but a refused re-issue is re-issued", async () => {
    const { store, sleep } = scripted(
      "single-attempt",
      { operation: "put", fault: { type: "lose-before-apply" } },
      { operation: "put", nth: 2, fault: { type: "refuse" } },
    );
    const outcome = await putIfAbsent(store, "a/b.json", enc("x"), { sleep });
    expect(outcome.status).toBe("applied");
    expect(store.requestCounts().put).toBe(3);
    expect(sleep.pauses).toEqual([200, 400]);
  });
});

describe("C8 a commit whose re-issue meets a conflict", () => {
  const manifest = (txnId: string) =>
    encodeJson({ branch: "main", version: 7, parent: 6, files: ["data/a.bin"], txnId });
  const key = "_versions/main/00000000000000000007.json";

  it("C8 a re-issue conflict with another writer's manifest is a conflict", async () => {
    const { store, sleep } = scripted(
      "single-attempt",
      { operation: "put", fault: { type: "lose-before-apply" } },
      { operation: "put", nth: 2, fault: { type: "foreign-put", body: manifest("txn-theirs") } },
    );
    const outcome = await putIfAbsent(store, key, manifest("txn-mine"), { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && json(outcome.current?.body)).toMatchObject({
      txnId: "txn-theirs",
    });
  });

  it("C8 a re-issue conflict with our own manifest is applied (committed)", async () => {
    const { store, sleep } = scripted("single-attempt", {
      operation: "put",
      fault: { type: "apply-then-lose" },
    });
    const outcome = await putIfAbsent(store, key, manifest("txn-mine"), { sleep });
    expect(outcome.status).toBe("applied");
  });

  it("C8 a re-issue answered 409 over an absent manifest stays unresolved", async () => {
    const { memory, store, sleep } = scripted(
      "single-attempt",
      { operation: "put", fault: { type: "lose-before-apply" } },
      { operation: "put", nth: 2, fault: { type: "in-flight" } },
    );
    const error = await rejection(putIfAbsent(store, key, manifest("txn-mine"), { sleep }));
    expect(error.kind).toBe("unresolved");
    expect(await memory.head(key)).toBeNull();
  });

  it("C8 a first conflict with no earlier lost answer is read back: another txnId is a conflict", async () => {
    const { memory, store, sleep } = scripted("single-attempt");
    await memory.put(key, manifest("txn-theirs"));
    const outcome = await putIfAbsent(store, key, manifest("txn-mine"), { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && json(outcome.current?.body)).toMatchObject({
      txnId: "txn-theirs",
    });
    expect(store.requestCounts().get).toBe(1);
  });

  it("C8 a first conflict over our own manifest, repeated on the way, is committed", async () => {
    const { store, sleep } = scripted("single-attempt", {
      operation: "put",
      fault: { type: "repeat" },
    });
    const outcome = await putIfAbsent(store, key, manifest("txn-mine"), { sleep });
    expect(outcome.status).toBe("applied");
    expect(store.requestCounts()).toMatchObject({ put: 1, get: 1 });
  });
});

describe("C10 bounded re-issue", () => {
  it("C10 the pauses are 200/400/800/1600 ms and at most five copies are sent", async () => {
    const { store, sleep } = scripted("single-attempt", {
      operation: "put",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const reissues: number[] = [];
    await rejection(
      putIfAbsent(store, "a/b.json", enc("x"), {
        sleep,
        onReissue: (attempt) => reissues.push(attempt),
      }),
    );
    expect(DEFAULT_REISSUE_POLICY.pausesMs).toEqual([200, 400, 800, 1600]);
    expect(sleep.pauses).toEqual([200, 400, 800, 1600]);
    expect(reissues).toEqual([1, 2, 3, 4]);
    expect(store.requestCounts()).toMatchObject({ put: 5, get: 1 });
  });

  it("C10 re-issues happen exactly when the pauses end (fake time)", async () => {
    const time = new FakeTime();
    const store = new FaultStore(new MemoryStore({ clock: time }), {
      rules: [
        {
          operation: "put",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "lose-before-apply" },
        },
      ],
    });
    const done = putIfAbsent(store, "a/b.json", enc("x"), { sleep: time.sleep }).catch(
      (e: unknown) => e,
    );
    const puts = () => store.requestCounts().put;
    await time.advance(0);
    expect(puts()).toBe(1);
    await time.advance(199);
    expect(puts()).toBe(1);
    await time.advance(1);
    expect(puts()).toBe(2);
    await time.advance(400);
    expect(puts()).toBe(3);
    await time.advance(800);
    expect(puts()).toBe(4);
    await time.advance(1599);
    expect(puts()).toBe(4);
    await time.advance(1);
    expect(puts()).toBe(5);
    expect(isUnresolved(await done)).toBe(true);
    await time.advance(60_000);
    expect(puts()).toBe(5);
  });

  it("C10 the default sleep waits the real pauses (vitest fake timers)", async () => {
    vi.useFakeTimers();
    try {
      const { store } = scripted("single-attempt", {
        operation: "put",
        times: Number.POSITIVE_INFINITY,
        fault: { type: "lose-before-apply" },
      });
      const done = putIfAbsent(store, "a/b.json", enc("x")).catch((e: unknown) => e);
      const puts = () => store.requestCounts().put;
      await vi.advanceTimersByTimeAsync(199);
      expect(puts()).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(puts()).toBe(2);
      await vi.advanceTimersByTimeAsync(400 + 800 + 1599);
      expect(puts()).toBe(4);
      await vi.advanceTimersByTimeAsync(1);
      expect(puts()).toBe(5);
      expect(isUnresolved(await done)).toBe(true);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("C10 an abort (a fence) during a pause reports unresolved at once and never re-issues", async () => {
    const time = new FakeTime();
    const fence = new AbortController();
    const store = new FaultStore(new MemoryStore({ clock: time }), {
      rules: [
        {
          operation: "put",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "lose-before-apply" },
        },
      ],
    });
    let settled: unknown;
    void putIfAbsent(store, "a/b.json", enc("x"), { sleep: time.sleep, signal: fence.signal }).then(
      (v) => {
        settled = v;
      },
      (e: unknown) => {
        settled = e;
      },
    );
    await time.advance(200 + 100); // second copy sent, 100 ms into the 400 ms pause
    expect(store.requestCounts().put).toBe(2);
    fence.abort(new Error("lease fence"));
    await time.advance(0);
    expect(isUnresolved(settled)).toBe(true);
    await time.advance(10_000);
    expect(store.requestCounts()).toMatchObject({ put: 2, get: 0 });
    expect(time.pendingTimers).toBe(0);
  });

  it("C10 an abort inside an injected sleep that ignores signals still stops re-issue", async () => {
    const fence = new AbortController();
    const ignoringSleep = recordingSleep((_ms, index) => {
      if (index === 1) fence.abort();
    });
    const { store } = scripted("single-attempt", {
      operation: "put",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const error = await rejection(
      putIfAbsent(store, "a/b.json", enc("x"), { sleep: ignoringSleep, signal: fence.signal }),
    );
    expect(error.kind).toBe("unresolved");
    expect(ignoringSleep.pauses).toEqual([200, 400]);
    expect(store.requestCounts().put).toBe(2);
  });

  it("C10 a signal aborted before the first copy sends nothing", async () => {
    const { store, sleep } = scripted("single-attempt");
    const error = await rejection(
      putIfAbsent(store, "a/b.json", enc("x"), { sleep, signal: AbortSignal.abort() }),
    );
    expect(error.kind).toBe("aborted");
    expect(store.requestCounts().put).toBe(0);
  });

  it("C10 a custom policy bounds the copies by its pauses", async () => {
    const { store, sleep } = scripted("single-attempt", {
      operation: "put",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    await rejection(
      resolveConditionalPut(
        store,
        "a/b.json",
        enc("x"),
        { ifNoneMatch: "*" },
        {
          sleep,
          policy: { pausesMs: [5] },
        },
      ),
    );
    expect(store.requestCounts().put).toBe(2);
    expect(sleep.pauses).toEqual([5]);
  });
});

describe("resolver input validation", () => {
  it("rejects a malformed key before sending anything", async () => {
    const { memory, store, sleep } = scripted("single-attempt");
    const error = await rejection(putIfAbsent(store, "../escape", enc("x"), { sleep }));
    expect(error).toMatchObject({ kind: "invalid-input", key: "../escape" });
    expect(store.requestCounts().put).toBe(0);
    expect(memory.size).toBe(0);
  });

  it("rejects an empty ETag before sending anything", async () => {
    const { store, sleep } = scripted("single-attempt");
    const error = await rejection(putIfMatch(store, "a/b.json", enc("x"), "", { sleep }));
    expect(error.kind).toBe("invalid-input");
    expect(store.requestCounts().put).toBe(0);
  });

  it("reports a failed read-back as unresolved", async () => {
    const { store, sleep } = scripted(
      "single-attempt",
      { operation: "put", times: Number.POSITIVE_INFINITY, fault: { type: "lose-before-apply" } },
      { operation: "get", fault: { type: "lose-before-apply" } },
    );
    const error = await rejection(putIfAbsent(store, "a/b.json", enc("x"), { sleep }));
    expect(error.kind).toBe("unresolved");
  });
});

describe("deleteIfMatch", () => {
  it("C5 a conditional delete whose answer was lost after applying resolves as applied", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "delete",
      fault: { type: "apply-then-lose" },
    });
    const { etag } = await memory.put("leases/l.json", enc("x"));
    expect(await deleteIfMatch(store, "leases/l.json", etag, { sleep })).toEqual({
      status: "applied",
    });
    // The re-issue met an absent key (a conflict an earlier copy explains), then a read decided.
    expect(store.requestCounts()).toMatchObject({ delete: 2, get: 1 });
    expect(memory.size).toBe(0);
  });

  it("a stale ETag on the first copy is a conflict and deletes nothing", async () => {
    const { memory, store, sleep } = scripted("single-attempt");
    await memory.put("leases/l.json", enc("x"));
    expect(await deleteIfMatch(store, "leases/l.json", "stale", { sleep })).toMatchObject({
      status: "conflict",
      current: { key: "leases/l.json" },
    });
    expect(memory.size).toBe(1);
  });

  it("a 404 answer is a failed precondition read back, not a refusal", async () => {
    const notFound = holdfastError("not-found", "delete", "404 NoSuchKey", { status: 404 });
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "delete",
      times: 2,
      fault: { type: "throw", error: notFound },
    });
    // Absent: the object at that ETag is gone, which is what the delete asked for.
    expect(await deleteIfMatch(store, "leases/l.json", "e1", { sleep })).toEqual({
      status: "applied",
    });
    // Present at another ETag: a conflict, and nothing deleted.
    await memory.put("leases/l.json", enc("other"));
    const outcome = await deleteIfMatch(store, "leases/l.json", "e1", { sleep });
    expect(outcome.status).toBe("conflict");
    expect(outcome.status === "conflict" && text(outcome.current?.body)).toBe("other");
    expect(memory.size).toBe(1);
    expect(store.requestCounts()).toMatchObject({ delete: 2, get: 2 });
  });

  it("still at the ETag after every lost answer is unresolved", async () => {
    const { memory, store, sleep } = scripted("single-attempt", {
      operation: "delete",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const { etag } = await memory.put("leases/l.json", enc("x"));
    const error = await rejection(deleteIfMatch(store, "leases/l.json", etag, { sleep }));
    expect(error).toMatchObject({ kind: "unresolved", operation: "delete" });
    expect(sleep.pauses).toEqual([200, 400, 800, 1600]);
    expect(store.requestCounts().delete).toBe(5);
  });

  it("is refused on a store that ignores conditional delete", async () => {
    const store = new MemoryStore({ conditionalDelete: false });
    const { etag } = await store.put("k", enc("x"));
    const error = await rejection(deleteIfMatch(store, "k", etag));
    expect(error.kind).toBe("unsupported");
    expect(store.size).toBe(1);
  });

  it("C10 an abort stops a conditional delete's re-issue", async () => {
    const fence = new AbortController();
    const sleep = recordingSleep(() => fence.abort());
    const { store } = scripted("single-attempt", {
      operation: "delete",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const error = await rejection(deleteIfMatch(store, "k", "e1", { sleep, signal: fence.signal }));
    expect(error.kind).toBe("unresolved");
    expect(store.requestCounts().delete).toBe(1);
  });
});
