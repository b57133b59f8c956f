import {
  deleteIfMatch,
  MemoryStore,
  putIfAbsent,
  putIfMatch,
  StorageScope,
} from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import { enc, rejection, text } from "./helpers.js";

const lostForever = {
  operation: "put",
  times: Number.POSITIVE_INFINITY,
  fault: { type: "lose-before-apply" },
} as const;

/** A scope over a scripted single-attempt store, the server's arrangement. */
function scoped() {
  const memory = new MemoryStore();
  const faults = new FaultStore(memory);
  const scope = new StorageScope(faults);
  return { memory, faults, scope, sleep: recordingSleep() };
}

describe("C3 unsettled keys admit only their re-issue", () => {
  it("C3 a same-precondition re-issue is admitted by the scope; other requests are refused", async () => {
    const { memory, faults, scope, sleep } = scoped();
    faults.script(lostForever);
    await rejection(putIfAbsent(scope, "locks/l.json", enc("mine"), { sleep }));
    expect(scope.isUnsettled("locks/l.json")).toBe(true);
    expect(scope.unsettledKeys().get("locks/l.json")).toEqual({ ifNoneMatch: "*" });
    const sentBefore = faults.requestCounts();

    // Every other write on the key is refused by the scope itself, without a request.
    const other = await rejection(scope.put("locks/l.json", enc("other")));
    expect(other).toMatchObject({ kind: "refused", code: "UNSETTLED_KEY", key: "locks/l.json" });
    await rejection(scope.put("locks/l.json", enc("x"), { precondition: { ifMatch: "m1" } }));
    await rejection(scope.delete("locks/l.json"));
    const batch = await scope.deleteMany(["locks/l.json", "locks/other.json"]);
    expect(batch.failed.map((f) => [f.key, f.error.kind])).toEqual([["locks/l.json", "refused"]]);
    expect(batch.deleted).toEqual(["locks/other.json"]);
    expect(faults.requestCounts().put).toBe(sentBefore.put);
    expect(faults.requestCounts().delete).toBe(sentBefore.delete);

    // The owner's re-issue (same precondition) is admitted and its success settles the key.
    faults.clearScript();
    const reissued = await scope.put("locks/l.json", enc("mine"), {
      precondition: { ifNoneMatch: "*" },
    });
    expect(reissued.etag).toBe((await memory.head("locks/l.json"))?.etag);
    expect(scope.isUnsettled("locks/l.json")).toBe(false);
    await scope.put("locks/l.json", enc("now-allowed"));
  });

  it("C3 a scoped conditional write settles through its re-issue and read-back", async () => {
    const { faults, scope, sleep } = scoped();
    faults.script({ operation: "put", fault: { type: "apply-then-lose" } });
    const outcome = await putIfAbsent(scope, "locks/l.json", enc("mine"), { sleep });
    // The re-issue met the first copy's object (412 does not settle); the read-back did.
    expect(outcome.status).toBe("applied");
    expect(scope.isUnsettled("locks/l.json")).toBe(false);
    expect(faults.requestCounts()).toMatchObject({ put: 2, get: 1 });

    faults.script({ operation: "put", fault: { type: "lose-before-apply" } });
    expect((await putIfAbsent(scope, "locks/m.json", enc("mine"), { sleep })).status).toBe(
      "applied",
    );
    expect(scope.isUnsettled("locks/m.json")).toBe(false);
  });

  it("C3 a read showing the precondition no longer holds settles the key", async () => {
    const { memory, faults, scope, sleep } = scoped();
    faults.script(lostForever);
    await rejection(putIfAbsent(scope, "locks/l.json", enc("mine"), { sleep }));
    expect(scope.isUnsettled("locks/l.json")).toBe(true);
    await memory.put("locks/l.json", enc("theirs"));
    await scope.head("locks/l.json");
    expect(scope.isUnsettled("locks/l.json")).toBe(false);
  });

  it("C3 a read still satisfying the precondition leaves the key unsettled", async () => {
    const { faults, scope, sleep } = scoped();
    faults.script(lostForever);
    await rejection(putIfAbsent(scope, "locks/l.json", enc("mine"), { sleep }));
    expect(await scope.get("locks/l.json")).toBeNull();
    expect(scope.isUnsettled("locks/l.json")).toBe(true);
  });

  it("C3 a re-issue answered 409 does not settle the key", async () => {
    const { faults, scope, sleep } = scoped();
    const { etag } = await scope.put("refs/r.json", enc("v1"));
    faults.script({ ...lostForever, precondition: "if-match" });
    await rejection(putIfMatch(scope, "refs/r.json", enc("v2"), etag, { sleep }));
    expect(scope.unsettledKeys().get("refs/r.json")).toEqual({ ifMatch: etag });
    faults.clearScript().script({ operation: "put", fault: { type: "in-flight" } });
    await rejection(scope.put("refs/r.json", enc("v2"), { precondition: { ifMatch: etag } }));
    expect(scope.isUnsettled("refs/r.json")).toBe(true);
  });

  it("C3 a conditional delete's re-issue is admitted, a put with its precondition is not", async () => {
    const { memory, faults, scope, sleep } = scoped();
    const { etag } = await memory.put("leases/a.json", enc("lease"));
    faults.script({
      operation: "delete",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    await rejection(deleteIfMatch(scope, "leases/a.json", etag, { sleep }));
    expect(scope.unsettledKeys().get("leases/a.json")).toEqual({ ifMatch: etag });
    await rejection(scope.put("leases/a.json", enc("x"), { precondition: { ifMatch: etag } }));
    faults.clearScript();
    const outcome = await deleteIfMatch(scope, "leases/a.json", etag, { sleep });
    expect(outcome.status).toBe("applied");
    expect(scope.isUnsettled("leases/a.json")).toBe(false);
    expect(await memory.head("leases/a.json")).toBeNull();
  });

  it("C3 an unconditional write whose answer was lost is unsettled until re-issued", async () => {
    const { faults, scope } = scoped();
    faults.script({ operation: "put", fault: { type: "lose-before-apply" } });
    await rejection(scope.put("clock/p", enc("t")));
    expect(scope.unsettledKeys().get("clock/p")).toBeNull();
    await rejection(scope.put("clock/p", enc("t"), { precondition: { ifNoneMatch: "*" } }));
    await scope.put("clock/p", enc("t"));
    expect(scope.isUnsettled("clock/p")).toBe(false);
  });
});

describe("C4 refusals settle", () => {
  it("C4 a request refused before applying leaves its key settled", async () => {
    const { faults, scope, sleep } = scoped();
    faults.script({ operation: "put", fault: { type: "refuse" } });
    const error = await rejection(putIfAbsent(scope, "locks/l.json", enc("mine"), { sleep }));
    expect(error).toMatchObject({ kind: "refused", code: "NoSuchBucket" });
    expect(scope.isUnsettled("locks/l.json")).toBe(false);
    expect(faults.requestCounts().put).toBe(1);
    // Any later request is admitted.
    expect((await putIfAbsent(scope, "locks/l.json", enc("other"), { sleep })).status).toBe(
      "applied",
    );
  });

  it("C4 a single-attempt auth refusal leaves its key settled", async () => {
    const { faults, scope, sleep } = scoped();
    faults.script({ operation: "put", fault: { type: "refuse", kind: "auth" } });
    await rejection(putIfAbsent(scope, "locks/l.json", enc("mine"), { sleep }));
    expect(scope.isUnsettled("locks/l.json")).toBe(false);
  });

  it("C4 a repeating client's auth error leaves its key unsettled", async () => {
    const memory = new MemoryStore();
    const faults = new FaultStore(memory, { requestMode: "repeating" });
    const scope = new StorageScope(faults);
    faults.script({ operation: "put", fault: { type: "refuse", kind: "auth" } });
    await rejection(scope.put("locks/l.json", enc("x"), { precondition: { ifNoneMatch: "*" } }));
    expect(scope.isUnsettled("locks/l.json")).toBe(true);
  });

  it("C4 a refused re-issue does not settle an earlier unknown outcome", async () => {
    const { memory, faults, scope } = scoped();
    faults.script({ operation: "put", fault: { type: "apply-then-lose" } });
    await rejection(scope.put("locks/l.json", enc("mine"), { precondition: { ifNoneMatch: "*" } }));
    faults.script({ operation: "put", fault: { type: "refuse" } });
    await rejection(scope.put("locks/l.json", enc("mine"), { precondition: { ifNoneMatch: "*" } }));
    // The first copy did land; only a read (or the re-issue's success) may settle.
    expect(scope.isUnsettled("locks/l.json")).toBe(true);
    await rejection(scope.put("locks/l.json", enc("theirs")));
    expect(text((await memory.get("locks/l.json"))?.body)).toBe("mine");
  });

  it("C4 a local store's error never unsettles a key", async () => {
    const memory = new MemoryStore();
    const faults = new FaultStore(memory, { requestMode: "completes-before-answer" });
    const scope = new StorageScope(faults);
    faults.script({ operation: "put", fault: { type: "lose-before-apply" } });
    await rejection(scope.put("a/b", enc("x"), { precondition: { ifNoneMatch: "*" } }));
    expect(scope.isUnsettled("a/b")).toBe(false);
  });
});

describe("scope batch deletes", () => {
  it("a lost batch-delete answer unsettles every admitted key", async () => {
    const { faults, scope } = scoped();
    faults.script({ operation: "deleteMany", fault: { type: "apply-then-lose" } });
    await rejection(scope.deleteMany(["a/1", "a/2"]));
    expect([...scope.unsettledKeys().keys()].sort()).toEqual(["a/1", "a/2"]);
    // Their re-issue (unconditional delete) is admitted.
    await scope.delete("a/1");
    expect(scope.isUnsettled("a/1")).toBe(false);
  });
});
