import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { isHoldfastError } from "@holdfast/conditional-store";
import { startFaultProxy } from "@holdfast/fault-proxy";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import {
  bareEtag,
  createS3Store,
  openS3Store,
  probeS3Store,
  S3_BACKEND,
  toHoldfastError,
} from "../src/index.js";
import { claim, emptyStore, fast } from "./fault-setup.js";
import { rejection } from "./rejection.js";
import { rgwEnv, rgwOptions } from "./rgw-env.js";

function thrown(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (error) {
    expect(isHoldfastError(error), String(error)).toBe(true);
    return error as unknown as Record<string, unknown>;
  }
  return expect.fail("expected a HoldfastError");
}

/** An SDK-shaped service error: `name` is S3's code, the status sits in `$metadata`. */
function sdkError(name: string, status?: number): Error {
  const error = new Error("") as Error & { $metadata: { httpStatusCode?: number } };
  error.name = name;
  error.$metadata = status === undefined ? {} : { httpStatusCode: status };
  return error;
}

function networkError(code: string): Error {
  return Object.assign(new Error(`socket: ${code}`), { code });
}

describe("toHoldfastError (the one S3 error mapping)", () => {
  const put = { operation: "put", key: "k", precondition: { ifNoneMatch: "*" } } as const;
  const cases: [string, unknown, object, string][] = [
    ["412 PreconditionFailed", sdkError("PreconditionFailed", 412), put, "conflict"],
    ["412 with an empty RGW body", sdkError("UnknownError", 412), put, "conflict"],
    [
      "409 ConditionalRequestConflict",
      sdkError("ConditionalRequestConflict", 409),
      put,
      "in-flight",
    ],
    ["409 without a code on a put", sdkError("UnknownError", 409), put, "in-flight"],
    [
      "404 NoSuchKey on get",
      sdkError("NoSuchKey", 404),
      { operation: "get", key: "k" },
      "not-found",
    ],
    [
      "404 NotFound on head",
      sdkError("NotFound", 404),
      { operation: "head", key: "k" },
      "not-found",
    ],
    [
      "404 NoSuchKey on an if-match put (AWS)",
      sdkError("NoSuchKey", 404),
      { operation: "put", key: "k", precondition: { ifMatch: "e" } },
      "conflict",
    ],
    ["404 NoSuchBucket", sdkError("NoSuchBucket", 404), { operation: "get", key: "k" }, "refused"],
    ["403 AccessDenied", sdkError("AccessDenied", 403), put, "auth"],
    ["403 SignatureDoesNotMatch", sdkError("SignatureDoesNotMatch", 403), put, "auth"],
    ["401", sdkError("Unauthorized", 401), put, "auth"],
    ["400 ExpiredToken", sdkError("ExpiredToken", 400), put, "auth"],
    ["400 InvalidArgument", sdkError("InvalidArgument", 400), put, "refused"],
    ["400 RequestTimeout", sdkError("RequestTimeout", 400), put, "ambiguous"],
    ["501 NotImplemented", sdkError("NotImplemented", 501), put, "unsupported"],
    ["503 SlowDown", sdkError("SlowDown", 503), put, "ambiguous"],
    ["429 throttling", sdkError("TooManyRequests", 429), put, "ambiguous"],
    ["500 InternalError", sdkError("InternalError", 500), put, "ambiguous"],
    ["500 from RGW's cancelled racing write", sdkError("UnknownError", 500), put, "ambiguous"],
    ["ECONNRESET", networkError("ECONNRESET"), put, "ambiguous"],
    ["socket timeout", sdkError("TimeoutError"), put, "ambiguous"],
    ["a non-error value", "boom", put, "ambiguous"],
    ["AbortError", sdkError("AbortError"), put, "aborted"],
  ];
  for (const [name, error, context, kind] of cases) {
    it(`${name} → ${kind}`, () => {
      const mapped = toHoldfastError(error, context as Parameters<typeof toHoldfastError>[1]);
      expect(isHoldfastError(mapped)).toBe(true);
      expect(mapped.kind).toBe(kind);
      expect(mapped.cause).toBe(error);
      expect(mapped.operation).toBe((context as { operation: string }).operation);
    });
  }

  it("keeps status, code, key and precondition as fields", () => {
    const mapped = toHoldfastError(sdkError("PreconditionFailed", 412), put);
    expect(mapped).toMatchObject({
      kind: "conflict",
      operation: "put",
      key: "k",
      precondition: { ifNoneMatch: "*" },
      status: 412,
      code: "PreconditionFailed",
    });
    const reset = toHoldfastError(networkError("ECONNRESET"), put);
    expect(reset).toMatchObject({ code: "ECONNRESET", status: undefined });
  });

  it("passes a HoldfastError through unchanged", () => {
    const original = toHoldfastError(sdkError("SlowDown", 503), put);
    expect(toHoldfastError(original, { operation: "get" })).toBe(original);
  });
});

describe("createS3Store (no requests)", () => {
  it("declares its capabilities from the options", () => {
    const store = createS3Store({ bucket: "my-bucket", prefix: "/data/sets/" });
    expect(store.backend).toBe(S3_BACKEND);
    expect(store.location).toBe("s3://my-bucket/data/sets");
    expect(store.capabilities).toEqual({
      atomicConditionalUpdate: true,
      atomicConditionalDelete: false,
      timestampPrecisionMs: 1000,
      maxBatchDelete: 1000,
      requestMode: "repeating",
      etagIsContentHash: true,
    });
    const single = createS3Store({ bucket: "my-bucket", client: "single-attempt" });
    expect(single.capabilities.requestMode).toBe("single-attempt");
    expect(single.location).toBe("s3://my-bucket");
    expect(
      createS3Store({ bucket: "b-1", conditionalDelete: true }).capabilities
        .atomicConditionalDelete,
    ).toBe(true);
  });

  it("rejects bad options with invalid-input", () => {
    for (const bucket of ["", "ab", "Upper", "a..b", "-lead", "192.168.1.1", "x".repeat(64)]) {
      expect(thrown(() => createS3Store({ bucket })).kind).toBe("invalid-input");
    }
    expect(thrown(() => createS3Store({ bucket: "ok-bucket", prefix: "a/../b" })).kind).toBe(
      "invalid-input",
    );
    expect(thrown(() => createS3Store({ bucket: "ok-bucket", endpoint: "not a url" })).kind).toBe(
      "invalid-input",
    );
  });

  it("sends nothing until used, and rejects bad input before sending", async () => {
    await using proxy = await startFaultProxy({ target: "http://127.0.0.1:9" });
    const store = createS3Store({
      bucket: "ok-bucket",
      prefix: "p".repeat(40),
      endpoint: proxy.url,
      forcePathStyle: true,
      credentials: { accessKeyId: "a", secretAccessKey: "b" },
    });
    expect((await rejection(store.put("a//b", claim("x")))).kind).toBe("invalid-input");
    expect((await rejection(store.get("../x"))).kind).toBe("invalid-input");
    // Valid on its own, too long under the prefix: refused locally, not by S3.
    expect((await rejection(store.put("k".repeat(1000), claim("x")))).kind).toBe("invalid-input");
    const tooMany = Array.from({ length: 1001 }, (_, i) => `k/${i}`);
    expect((await rejection(store.deleteMany(tooMany))).kind).toBe("invalid-input");
    expect((await rejection(store.deleteMany(["ok", "bad/"]))).kind).toBe("invalid-input");
    expect(await store.deleteMany([])).toEqual({ deleted: [], failed: [] });
    // Conditional delete is not declared: refused, never sent as a precondition RGW ignores.
    const refused = await rejection(store.delete("k", { ifMatch: "abc" }));
    expect(refused).toMatchObject({ kind: "unsupported", precondition: { ifMatch: "abc" } });
    expect(proxy.requests).toEqual([]);
  });

  it("bareEtag strips quotes and the weak prefix", () => {
    expect(bareEtag('"abc"')).toBe("abc");
    expect(bareEtag('W/"abc"')).toBe("abc");
    expect(bareEtag("abc")).toBe("abc");
  });

  it("C9 the backend has exactly one PutObject call site", () => {
    const dir = new URL("../src/", import.meta.url);
    const sites = readdirSync(dir)
      .filter((name) => name.endsWith(".ts"))
      .flatMap(
        (name) => readFileSync(new URL(name, dir), "utf8").match(/new PutObjectCommand\(/g) ?? [],
      );
    expect(sites).toHaveLength(1);
  });
});

describe("on real RGW", () => {
  it("the probe finds bare If-Match ETags, atomic CAS, and If-Match on DELETE ignored", async () => {
    const options = rgwOptions({ client: "single-attempt" });
    const report = await probeS3Store({ ...options, probe: fast });
    expect(report).toMatchObject({
      quoteIfMatch: false,
      conditionalUpdate: true,
      conditionalDelete: false,
    });
    expect(report.key.startsWith("_holdfast/probe/")).toBe(true);
    const store = createS3Store(options);
    expect((await store.list("")).objects).toEqual([]);
  });

  it("openS3Store refuses a conditionalDelete claim the store does not honour", async () => {
    const error = await rejection(
      openS3Store({ ...rgwOptions(), conditionalDelete: true, probe: fast }),
    );
    expect(error.kind).toBe("unsupported");
  });

  it("openS3Store with quoted If-Match forced declares no compare-and-swap on RGW", async () => {
    const store = await openS3Store({ ...rgwOptions(), quoteIfMatch: true, probe: fast });
    expect(store.capabilities.atomicConditionalUpdate).toBe(false);
    expect(store.capabilities.atomicConditionalDelete).toBe(false);
  });

  it("openS3Store keeps a capability the caller declines", async () => {
    const store = await openS3Store({ ...rgwOptions(), conditionalUpdate: false, probe: fast });
    expect(store.capabilities.atomicConditionalUpdate).toBe(false);
  });

  it("a missing bucket is refused, at open and per request", async () => {
    const options = rgwOptions({ bucket: `missing-${ulid().toLowerCase()}` });
    expect((await rejection(openS3Store({ ...options, probe: fast }))).kind).toBe("refused");
    const store = createS3Store(options);
    expect(await rejection(store.get("k"))).toMatchObject({ kind: "refused", status: 404 });
    expect((await rejection(store.list(""))).kind).toBe("refused");
  });

  it("ETags are bare and identical across put, get, head and list (the content MD5)", async () => {
    const store = await openS3Store({ ...rgwOptions(), probe: fast });
    try {
      const body = claim("etag check");
      const md5 = createHash("md5").update(body).digest("hex");
      const { etag } = await store.put("e/k.json", body);
      expect(etag).toBe(md5);
      expect((await store.get("e/k.json"))?.etag).toBe(md5);
      expect((await store.head("e/k.json"))?.etag).toBe(md5);
      expect((await store.list("e/")).objects.map((o) => o.etag)).toEqual([md5]);
      // What get returns is what If-Match accepts.
      const next = await store.put("e/k.json", claim("next"), { precondition: { ifMatch: etag } });
      expect(next.etag).not.toContain('"');
    } finally {
      await emptyStore(store);
    }
  });

  it("keys are relative to the prefix: neighbours stay invisible, pages follow tokens", async () => {
    const options = rgwOptions();
    const store = createS3Store({ ...options, quoteIfMatch: false });
    const neighbour = createS3Store({ ...options, prefix: `${options.prefix}-neighbour` });
    try {
      for (const key of ["a/1", "a/2", "a/3", "b"]) await store.put(key, claim(key));
      await neighbour.put("a/1", claim("neighbour"));
      const seen: string[] = [];
      let pageToken: string | undefined;
      let pages = 0;
      do {
        const page = await store.list("", { pageSize: 2, pageToken });
        seen.push(...page.objects.map((o) => o.key));
        pageToken = page.nextPageToken;
        pages += 1;
      } while (pageToken !== undefined);
      expect(seen).toEqual(["a/1", "a/2", "a/3", "b"]);
      expect(pages).toBe(2);
      expect((await store.list("a/", { startAfter: "a/1" })).objects.map((o) => o.key)).toEqual([
        "a/2",
        "a/3",
      ]);
      const result = await store.deleteMany(["a/1", "a/2", "never-there"]);
      expect(result).toEqual({ deleted: ["a/1", "a/2", "never-there"], failed: [] });
      expect((await neighbour.get("a/1"))?.key).toBe("a/1");
    } finally {
      await emptyStore(store);
      await emptyStore(neighbour);
    }
  });

  it("HEAD reports whole seconds, within the declared 1000 ms precision", async () => {
    const store = createS3Store(rgwOptions());
    try {
      await store.put("t/k", claim("time"));
      const head = await store.head("t/k");
      expect(head!.lastModified.getTime() % 1000).toBe(0);
      const [listed] = (await store.list("t/")).objects;
      const gap = listed!.lastModified.getTime() - head!.lastModified.getTime();
      expect(gap).toBeGreaterThanOrEqual(0);
      expect(gap).toBeLessThan(store.capabilities.timestampPrecisionMs);
    } finally {
      await emptyStore(store);
    }
  });

  it("an aborted request reports kind aborted", async () => {
    const store = createS3Store(rgwOptions());
    const error = await rejection(store.get("k", { signal: AbortSignal.abort() }));
    expect(error.kind).toBe("aborted");
  });

  it("RGW's endpoint from the env file is the one the scripts write", () => {
    expect(rgwEnv().endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
