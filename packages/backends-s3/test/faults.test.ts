import { bytesEqual, isHoldfastError, putIfAbsent, putIfMatch } from "@holdfast/conditional-store";
import { type RecordedRequest, s3Error, slowDown } from "@holdfast/fault-proxy";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { createS3Store, openS3Store } from "../src/index.js";
import { claim, fast, rgwBehindProxy } from "./fault-setup.js";

// Faults injected by @holdfast/fault-proxy between the SDK and a real Ceph RGW: every
// "lost answer" below is a request RGW really applied (or really did not).

async function rejection(promise: Promise<unknown>): Promise<{ kind: string; key?: string }> {
  try {
    await promise;
  } catch (error) {
    expect(isHoldfastError(error), String(error)).toBe(true);
    return error as { kind: string };
  }
  return expect.fail("expected a HoldfastError");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const puts = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === "PUT").map((r) => [r.action, r.status]);

describe("lost answers on real RGW", () => {
  it("C1 an applied create whose answer was lost resolves as applied (invariant 4)", async () => {
    await using rgw = await rgwBehindProxy({}, [
      { method: "PUT", withHeaders: ["if-none-match"], nth: 1, action: { type: "drop-response" } },
    ]);
    const body = claim(ulid());
    const outcome = await putIfAbsent(rgw.viaProxy, "claims/c1.json", body, fast);
    expect(outcome.status).toBe("applied");
    const stored = await rgw.direct.get("claims/c1.json");
    expect(bytesEqual(stored!.body, body)).toBe(true);
    if (outcome.status === "applied") expect(outcome.etag).toBe(stored!.etag);
    // The first copy landed (RGW answered 200, lost), the re-issue met 412, the read-back decided.
    expect(puts(rgw.proxy.requests)).toEqual([
      ["drop-response", 200],
      ["forward", 412],
    ]);
  });

  it("C1 a create reset before it reached the store is re-issued and applies", async () => {
    await using rgw = await rgwBehindProxy({}, [
      { method: "PUT", withHeaders: ["if-none-match"], nth: 1, action: { type: "reset" } },
    ]);
    const body = claim(ulid());
    const outcome = await putIfAbsent(rgw.viaProxy, "claims/reset.json", body, fast);
    expect(outcome.status).toBe("applied");
    expect(bytesEqual((await rgw.direct.get("claims/reset.json"))!.body, body)).toBe(true);
    expect(puts(rgw.proxy.requests)).toEqual([
      ["reset", undefined],
      ["forward", 200],
    ]);
  });

  it("C5 putIfMatch resolves a lost answer by re-issue and read-back", async () => {
    await using rgw = await rgwBehindProxy({}, [
      { method: "PUT", withHeaders: ["if-match"], nth: 1, action: { type: "drop-response" } },
    ]);
    const base = await rgw.direct.put("refs/c5.json", claim("base"));
    const next = claim(ulid());
    const outcome = await putIfMatch(rgw.viaProxy, "refs/c5.json", next, base.etag, fast);
    expect(outcome.status).toBe("applied");
    const stored = await rgw.direct.get("refs/c5.json");
    expect(bytesEqual(stored!.body, next)).toBe(true);
    if (outcome.status === "applied") expect(outcome.etag).toBe(stored!.etag);
    expect(puts(rgw.proxy.requests)).toEqual([
      ["drop-response", 200],
      ["forward", 412],
    ]);
  });

  it("C5 another writer's CAS after our lost answer reads back as conflict", async () => {
    await using rgw = await rgwBehindProxy({}, [
      { method: "PUT", withHeaders: ["if-match"], nth: 1, action: { type: "drop-request" } },
    ]);
    const base = await rgw.direct.put("refs/c5b.json", claim("base"));
    // Another writer moves the key on; our first copy is then lost in transit, the re-issue
    // meets 412, and only the read-back can say whose write that was.
    const theirs = claim("another writer");
    await rgw.direct.put("refs/c5b.json", theirs);
    const outcome = await putIfMatch(rgw.viaProxy, "refs/c5b.json", claim(ulid()), base.etag, fast);
    expect(outcome.status).toBe("conflict");
    expect(bytesEqual((await rgw.direct.get("refs/c5b.json"))!.body, theirs)).toBe(true);
    expect(puts(rgw.proxy.requests)).toEqual([
      ["drop-request", undefined],
      ["forward", 412],
    ]);
  });

  it("C5 a throttled create (503 SlowDown) is re-issued and applies", async () => {
    await using rgw = await rgwBehindProxy({}, [
      { method: "PUT", withHeaders: ["if-none-match"], nth: [1, 2], action: slowDown() },
    ]);
    const body = claim(ulid());
    const outcome = await putIfAbsent(rgw.viaProxy, "claims/slow.json", body, fast);
    expect(outcome.status).toBe("applied");
    expect(puts(rgw.proxy.requests)).toEqual([
      ["respond", 503],
      ["respond", 503],
      ["forward", 200],
    ]);
  });

  it("C5 a timed-out create is re-issued; the late first copy then meets 412", async () => {
    await using rgw = await rgwBehindProxy({ requestTimeoutMs: 150 }, [
      {
        method: "PUT",
        withHeaders: ["if-none-match"],
        nth: 1,
        action: { type: "delay", ms: 600 },
      },
    ]);
    const body = claim(ulid());
    const seen: unknown[] = [];
    const outcome = await putIfAbsent(rgw.viaProxy, "claims/slow-answer.json", body, {
      ...fast,
      onReissue: (_, error) => seen.push(error),
    });
    expect(outcome.status).toBe("applied");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ kind: "ambiguous", operation: "put" });
    expect(bytesEqual((await rgw.direct.get("claims/slow-answer.json"))!.body, body)).toBe(true);
    // The held first copy reaches RGW after the re-issue applied: refused, nothing overwritten.
    while (rgw.proxy.requests[0]?.status === undefined) await sleep(20);
    expect(puts(rgw.proxy.requests)).toEqual([
      ["delay", 412],
      ["forward", 200],
    ]);
  });

  it("C5 every copy lost before applying leaves the create unresolved, never failed (invariant 4)", async () => {
    await using rgw = await rgwBehindProxy({}, [
      { method: "PUT", withHeaders: ["if-none-match"], action: { type: "drop-request" } },
    ]);
    const error = await rejection(
      putIfAbsent(rgw.viaProxy, "claims/lost.json", claim(ulid()), fast),
    );
    expect(error).toMatchObject({ kind: "unresolved", key: "claims/lost.json" });
    expect(await rgw.direct.head("claims/lost.json")).toBeNull();
    // The first copy and four re-issues, then one read-back.
    expect(puts(rgw.proxy.requests)).toHaveLength(5);
    expect(rgw.proxy.requests.filter((r) => r.method === "GET")).toHaveLength(1);
  });

  it("C6 a repeating client reads back its own earlier copy after a first conflict", async () => {
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "PUT", withHeaders: ["if-none-match"], nth: 1, action: { type: "drop-response" } },
    ]);
    expect(rgw.viaProxy.capabilities.requestMode).toBe("repeating");
    const body = claim(ulid());
    const reissues: number[] = [];
    const outcome = await putIfAbsent(rgw.viaProxy, "claims/c6.json", body, {
      ...fast,
      onReissue: (attempt) => reissues.push(attempt),
    });
    expect(outcome.status).toBe("applied");
    expect(bytesEqual((await rgw.direct.get("claims/c6.json"))!.body, body)).toBe(true);
    // The SDK re-sent the create itself and got 412 for its own first copy; the resolver
    // never re-issued: its read-back found our bytes.
    expect(puts(rgw.proxy.requests)).toEqual([
      ["drop-response", 200],
      ["forward", 412],
    ]);
    expect(reissues).toEqual([]);
  });

  it("C6 a repeating client's first conflict with another writer's bytes stays a conflict", async () => {
    await using rgw = await rgwBehindProxy({ client: "repeating" });
    const theirs = claim("another writer");
    await rgw.direct.put("claims/c6b.json", theirs);
    const outcome = await putIfAbsent(rgw.viaProxy, "claims/c6b.json", claim(ulid()), fast);
    expect(outcome.status).toBe("conflict");
    if (outcome.status === "conflict") expect(bytesEqual(outcome.current!.body, theirs)).toBe(true);
  });
});

describe("what a failed copy says", () => {
  it("C7 an S3 409 over an absent key stays unresolved", async () => {
    await using rgw = await rgwBehindProxy({}, [
      {
        method: "PUT",
        withHeaders: ["if-none-match"],
        action: s3Error(409, "ConditionalRequestConflict"),
      },
    ]);
    const error = await rejection(putIfAbsent(rgw.viaProxy, "claims/c7.json", claim(ulid()), fast));
    expect(error).toMatchObject({ kind: "unresolved", key: "claims/c7.json" });
    expect(await rgw.direct.head("claims/c7.json")).toBeNull();
  });

  it("C7 an if-match 409 (write in flight) is re-issued and applies", async () => {
    await using rgw = await rgwBehindProxy({}, [
      {
        method: "PUT",
        withHeaders: ["if-match"],
        nth: 1,
        action: s3Error(409, "ConditionalRequestConflict"),
      },
    ]);
    const base = await rgw.direct.put("refs/c7.json", claim("base"));
    const next = claim(ulid());
    const outcome = await putIfMatch(rgw.viaProxy, "refs/c7.json", next, base.etag, fast);
    expect(outcome.status).toBe("applied");
    expect(puts(rgw.proxy.requests)).toEqual([
      ["respond", 409],
      ["forward", 200],
    ]);
  });

  it("C7 a single-attempt client's auth error is refused at once", async () => {
    await using rgw = await rgwBehindProxy({ client: "single-attempt" });
    const badKeys = createS3Store({
      ...rgw.options,
      credentials: { accessKeyId: "HOLDFASTTESTKEY00001", secretAccessKey: "not-the-secret" },
    });
    const error = await rejection(putIfAbsent(badKeys, "claims/auth.json", claim(ulid()), fast));
    expect(error).toMatchObject({ kind: "auth", status: 403, code: "SignatureDoesNotMatch" });
    expect(puts(rgw.proxy.requests)).toEqual([["forward", 403]]);
    expect(rgw.proxy.requests).toHaveLength(1);
  });

  it("C7 a repeating client's auth error is re-issued, then left unresolved", async () => {
    await using rgw = await rgwBehindProxy({ client: "repeating" });
    const badKeys = createS3Store({
      ...rgw.options,
      credentials: { accessKeyId: "HOLDFASTTESTKEY00001", secretAccessKey: "not-the-secret" },
    });
    const error = await rejection(putIfAbsent(badKeys, "claims/auth.json", claim(ulid()), fast));
    // A repeating SDK may have applied an earlier copy before being refused: unknown.
    expect(error).toMatchObject({ kind: "unresolved" });
    expect(puts(rgw.proxy.requests)).toHaveLength(5);
  });
});

describe("DeleteObjects answers per key", () => {
  it("maps each key's own error and reports keys the answer left out as ambiguous", async () => {
    await using rgw = await rgwBehindProxy();
    const root = `${rgw.options.prefix}/`;
    rgw.proxy.addRule({
      method: "POST",
      path: /[?&]delete/,
      action: {
        type: "respond",
        status: 200,
        headers: { "content-type": "application/xml" },
        body:
          `<?xml version="1.0" encoding="UTF-8"?><DeleteResult>` +
          `<Deleted><Key>${root}gone</Key></Deleted>` +
          `<Error><Key>${root}locked</Key><Code>AccessDenied</Code><Message></Message></Error>` +
          `</DeleteResult>`,
      },
    });
    const result = await rgw.viaProxy.deleteMany(["gone", "locked", "unanswered"]);
    expect(result.deleted).toEqual(["gone"]);
    expect(result.failed.map((f) => [f.key, f.error.kind, f.error.code])).toEqual([
      ["locked", "auth", "AccessDenied"],
      ["unanswered", "ambiguous", undefined],
    ]);
  });
});

describe("capability probe through the proxy", () => {
  it("refuses a store that ignores create-only (If-None-Match stripped) as unsupported", async () => {
    await using rgw = await rgwBehindProxy({}, [
      {
        method: "PUT",
        withHeaders: ["if-none-match"],
        action: { type: "strip-header", headers: ["if-none-match"] },
      },
    ]);
    const error = await rejection(
      openS3Store({ ...rgw.options, quoteIfMatch: undefined, probe: fast }),
    );
    expect(error.kind).toBe("unsupported");
    // Both create-only probes reached RGW without the header and were applied (the re-signed
    // requests were accepted: no 403).
    expect(puts(rgw.proxy.requests).slice(0, 2)).toEqual([
      ["strip-header", 200],
      ["strip-header", 200],
    ]);
    // The probe removed its object.
    expect((await rgw.direct.list("")).objects).toEqual([]);
  });

  it("declares no compare-and-swap when If-Match is stripped, and refuses a claim of it", async () => {
    const stripIfMatch = {
      method: "PUT",
      withHeaders: ["if-match"],
      action: { type: "strip-header", headers: ["if-match"] },
    } as const;
    await using rgw = await rgwBehindProxy({}, [stripIfMatch]);
    const store = await openS3Store({
      ...rgw.options,
      quoteIfMatch: undefined,
      conditionalUpdate: undefined,
      probe: fast,
    });
    expect(store.capabilities.atomicConditionalUpdate).toBe(false);
    await expect(
      store.put("refs/x.json", claim("x"), { precondition: { ifMatch: "abc" } }),
    ).rejects.toMatchObject({ kind: "unsupported" });
    const claimed = await rejection(
      openS3Store({ ...rgw.options, conditionalUpdate: true, probe: fast }),
    );
    expect(claimed.kind).toBe("unsupported");
  });
});
