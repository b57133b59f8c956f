// Azure-only behaviour beyond the shared contract: options, error mapping, batch results,
// pagination tokens and ETag forms, against a real Azurite.
import {
  AnonymousCredential,
  BlobServiceClient,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import {
  deleteIfMatch,
  type HoldfastErrorKind,
  isHoldfastError,
  listAll,
} from "@holdfast/conditional-store";
import { azureError, type FaultAction, startFaultProxy } from "@holdfast/fault-proxy";
import { afterEach, describe, expect, it } from "vitest";
import {
  AZURE_BACKEND,
  AZURE_MAX_BATCH_DELETE,
  type AzureStoreOptions,
  createAzureStore,
  openAzureStore,
} from "../src/index.js";
import { azuriteTarget, ensureContainer, freshPrefix, withOrigin } from "./azurite.js";

const target = azuriteTarget();
// Top-level: a missing Azurite fails the file outright instead of skipping its tests.
await ensureContainer(target);

const text = (s: string) => new TextEncoder().encode(s);

function store(overrides: Partial<AzureStoreOptions> = {}) {
  return createAzureStore({
    container: target.container,
    prefix: freshPrefix("azure"),
    connectionString: target.connectionString,
    client: "single-attempt",
    ...overrides,
  });
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a failure");
    },
    (error: unknown) => error,
  );
}

function expectKind(error: unknown, kind: HoldfastErrorKind, fields: Record<string, unknown> = {}) {
  expect(isHoldfastError(error), String(error)).toBe(true);
  expect(error).toMatchObject({ kind, ...fields });
}

describe("createAzureStore options", () => {
  const saved = process.env.AZURE_STORAGE_CONNECTION_STRING;
  afterEach(() => {
    if (saved === undefined) delete process.env.AZURE_STORAGE_CONNECTION_STRING;
    else process.env.AZURE_STORAGE_CONNECTION_STRING = saved;
  });

  it("declares Azure's capabilities, repeating by default", () => {
    const s = createAzureStore({ container: "c-1", connectionString: target.connectionString });
    expect(s.backend).toBe(AZURE_BACKEND);
    expect(s.capabilities).toEqual({
      atomicConditionalUpdate: true,
      atomicConditionalDelete: true,
      timestampPrecisionMs: 1000,
      maxBatchDelete: 256,
      requestMode: "repeating",
      etagIsContentHash: false,
    });
    expect(store({ client: "single-attempt" }).capabilities.requestMode).toBe("single-attempt");
  });

  it("prints its location without credentials, with and without a prefix", () => {
    const bare = createAzureStore({ container: "data", connectionString: target.connectionString });
    expect(bare.location).toBe("az://data");
    const nested = createAzureStore({
      container: "data",
      prefix: "/team/set/",
      connectionString: target.connectionString,
    });
    expect(nested.location).toBe("az://data/team/set");
    expect(nested.location).not.toContain("AccountKey");
  });

  it.each([
    ["an invalid container name", { container: "Bad_Name" }],
    ["a container name with a double hyphen", { container: "a--b" }],
    ["a prefix with a '..' segment", { prefix: "a/../b" }],
    ["an accountUrl without a credential", { accountUrl: "http://127.0.0.1:1/devstoreaccount1" }],
    ["an unknown client mode", { client: "sometimes" }],
  ])("rejects %s with invalid-input before sending anything", (_label, overrides) => {
    let error: unknown;
    try {
      store(overrides as Partial<AzureStoreOptions>);
    } catch (e) {
      error = e;
    }
    expectKind(error, "invalid-input", { operation: "open" });
  });

  it("rejects a missing connection string with invalid-input and a hint", () => {
    delete process.env.AZURE_STORAGE_CONNECTION_STRING;
    let error: unknown;
    try {
      createAzureStore({ container: target.container });
    } catch (e) {
      error = e;
    }
    expectKind(error, "invalid-input", { operation: "open" });
    expect((error as { hint?: string }).hint).toContain("AZURE_STORAGE_CONNECTION_STRING");
  });

  it("takes the connection string from AZURE_STORAGE_CONNECTION_STRING by default", async () => {
    process.env.AZURE_STORAGE_CONNECTION_STRING = target.connectionString;
    const s = createAzureStore({ container: target.container, prefix: freshPrefix("env") });
    await s.put("a.txt", text("from env"));
    expect((await s.get("a.txt"))?.body).toEqual(text("from env"));
  });

  it("authenticates with accountUrl and a StorageSharedKeyCredential", async () => {
    const name = /AccountName=([^;]+)/.exec(target.connectionString)?.[1] ?? "";
    const key = /AccountKey=([^;]+)/.exec(target.connectionString)?.[1] ?? "";
    const accountUrl = /BlobEndpoint=([^;]+)/.exec(target.connectionString)?.[1] ?? "";
    const s = createAzureStore({
      container: target.container,
      prefix: freshPrefix("shared-key"),
      accountUrl,
      credential: new StorageSharedKeyCredential(name, key),
    });
    await s.put("k", text("v"));
    expect((await s.head("k"))?.size).toBe(1);
  });

  it("reports a malformed connection string as invalid-input on first use", async () => {
    const s = createAzureStore({
      container: target.container,
      connectionString: "not=a;connection",
    });
    expectKind(await failure(s.get("k")), "invalid-input", { operation: "open" });
  });

  it("builds its client lazily: creating a store for an unreachable account sends nothing", async () => {
    const s = createAzureStore({
      container: "unreachable",
      accountUrl: "http://127.0.0.1:9/devstoreaccount1",
      credential: new AnonymousCredential(),
      client: "single-attempt",
    });
    // Only the first request finds out; no answer at all is ambiguous, never a refusal.
    expectKind(await failure(s.get("k")), "ambiguous", { operation: "get", key: "k" });
  });
});

describe("Azure answers mapped to holdfast kinds", () => {
  it("a missing container is refused on every operation, with its code", async () => {
    const options = {
      container: "holdfast-no-such-container",
      prefix: freshPrefix("no-container"),
      connectionString: target.connectionString,
      client: "single-attempt",
    } as const;
    const s = createAzureStore(options);
    const hint = expect.stringContaining("create the container");
    for (const op of [
      () => s.get("k"),
      () => s.head("k"),
      () => s.put("k", text("x"), { precondition: { ifNoneMatch: "*" } }),
      () => s.list(""),
    ]) {
      expectKind(await failure(op()), "refused", { status: 404, code: "ContainerNotFound", hint });
    }
    // The probe's first create is refused before applying: reported as such, not as unsupported.
    expectKind(await failure(openAzureStore(options)), "refused", {
      code: "ContainerNotFound",
    });
  });

  it("create-only on an existing blob is a conflict carrying BlobAlreadyExists", async () => {
    const s = store();
    await s.put("k", text("1"));
    expectKind(
      await failure(s.put("k", text("2"), { precondition: { ifNoneMatch: "*" } })),
      "conflict",
      {
        status: 409,
        code: "BlobAlreadyExists",
        precondition: { ifNoneMatch: "*" },
      },
    );
    expect((await s.get("k"))?.body).toEqual(text("1"));
  });

  it("if-match with a stale ETag is a conflict carrying ConditionNotMet", async () => {
    const s = store();
    const { etag } = await s.put("k", text("1"));
    await s.put("k", text("2"));
    expectKind(
      await failure(s.put("k", text("3"), { precondition: { ifMatch: etag } })),
      "conflict",
      {
        status: 412,
        code: "ConditionNotMet",
      },
    );
  });

  // Answers Azurite does not produce on demand, injected by the fault proxy.
  const injected: [string, string, FaultAction, HoldfastErrorKind][] = [
    [
      "409 on an if-match (some emulators)",
      "ifMatch",
      azureError(409, "ConditionNotMet"),
      "conflict",
    ],
    ["404 BlobNotFound on an if-match", "ifMatch", azureError(404, "BlobNotFound"), "conflict"],
    ["409 LeaseIdMissing on a plain put", "none", azureError(409, "LeaseIdMissing"), "refused"],
    ["400 InvalidHeaderValue", "none", azureError(400, "InvalidHeaderValue"), "refused"],
    ["413 RequestBodyTooLarge", "none", azureError(413, "RequestBodyTooLarge"), "refused"],
    [
      "401 NoAuthenticationInformation",
      "none",
      azureError(401, "NoAuthenticationInformation"),
      "auth",
    ],
    ["403 AuthorizationFailure", "ifNoneMatch", azureError(403, "AuthorizationFailure"), "auth"],
    ["503 ServerBusy", "ifNoneMatch", azureError(503, "ServerBusy"), "ambiguous"],
    ["500 InternalError", "ifMatch", azureError(500, "InternalError"), "ambiguous"],
    ["429 throttling", "none", azureError(429, "TooManyRequests"), "ambiguous"],
    ["408 timeout", "none", azureError(408, "OperationTimedOut"), "ambiguous"],
    ["a lost answer", "ifNoneMatch", { type: "drop-response" }, "ambiguous"],
    ["a connection reset", "none", { type: "reset" }, "ambiguous"],
  ];
  it.each(injected)("%s on a put → %s", async (_label, condition, action, kind) => {
    const proxy = await startFaultProxy({ target: target.origin });
    try {
      const prefix = freshPrefix("mapping");
      const s = store({ prefix, connectionString: withOrigin(target.connectionString, proxy.url) });
      const { etag } = await s.put("k", text("0"));
      proxy.addRule({ method: "PUT", action });
      const precondition =
        condition === "ifMatch"
          ? { ifMatch: etag }
          : condition === "ifNoneMatch"
            ? { ifNoneMatch: "*" as const }
            : undefined;
      const error = await failure(s.put("k", text("1"), { precondition }));
      expectKind(error, kind, { operation: "put", key: "k" });
      // A mapped error keeps the SDK's error as its cause; nothing above sees the SDK type.
      expect((error as Error).cause).toBeDefined();
    } finally {
      await proxy.close();
    }
  });

  it("an aborted request is reported as aborted", async () => {
    const s = store();
    const controller = new AbortController();
    controller.abort();
    expectKind(await failure(s.get("k", { signal: controller.signal })), "aborted", {
      operation: "get",
    });
  });
});

describe("conditional delete", () => {
  it("deletes at the current ETag, conflicts on a stale one or an absent blob", async () => {
    const s = store();
    const { etag: stale } = await s.put("k", text("1"));
    const { etag } = await s.put("k", text("2"));
    expectKind(await failure(s.delete("k", { ifMatch: stale })), "conflict", { status: 412 });
    expect(await s.head("k")).not.toBeNull();
    await s.delete("k", { ifMatch: etag });
    expect(await s.head("k")).toBeNull();
    expectKind(await failure(s.delete("k", { ifMatch: etag })), "conflict");
    // Unconditional delete of an absent blob is success.
    await s.delete("k");
  });

  it("deleteIfMatch resolves a lost delete answer by reading back absence", async () => {
    const proxy = await startFaultProxy({ target: target.origin });
    try {
      const prefix = freshPrefix("delete-lost");
      const s = store({ prefix, connectionString: withOrigin(target.connectionString, proxy.url) });
      const { etag } = await s.put("k", text("1"));
      proxy.addRule({ method: "DELETE", nth: 1, action: { type: "drop-response" } });
      const outcome = await deleteIfMatch(s, "k", etag, { policy: { pausesMs: [10, 10, 10, 10] } });
      expect(outcome).toEqual({ status: "applied" });
      expect(proxy.requests.filter((r) => r.method === "DELETE").map((r) => r.status)).toEqual([
        202, 412,
      ]);
    } finally {
      await proxy.close();
    }
  });
});

describe("batch delete", () => {
  it("reports per-blob results: present and missing deleted, a leased blob failed", async () => {
    const prefix = freshPrefix("batch");
    const s = store({ prefix });
    await s.put("a", text("a"));
    await s.put("leased", text("l"));
    const blob = BlobServiceClient.fromConnectionString(target.connectionString)
      .getContainerClient(target.container)
      .getBlobClient(`${prefix}/leased`);
    const lease = blob.getBlobLeaseClient();
    await lease.acquireLease(15);
    try {
      const result = await s.deleteMany(["a", "missing", "leased", "a"]);
      expect(result.deleted.sort()).toEqual(["a", "missing"]);
      expect(result.failed.map((f) => f.key)).toEqual(["leased"]);
      expect(isHoldfastError(result.failed[0]?.error)).toBe(true);
      expect(result.failed[0]?.error).toMatchObject({
        operation: "deleteMany",
        key: "leased",
        status: 412,
      });
      expect(await s.head("a")).toBeNull();
      expect(await s.head("leased")).not.toBeNull();
    } finally {
      await lease.releaseLease();
    }
  });

  it("falls back to one delete per blob when the batch request itself fails", async () => {
    const proxy = await startFaultProxy({ target: target.origin });
    try {
      const s = store({ connectionString: withOrigin(target.connectionString, proxy.url) });
      await s.put("a", text("a"));
      await s.put("b", text("b"));
      proxy.addRule({
        method: "POST",
        path: /comp=batch/,
        action: azureError(500, "InternalError"),
      });
      const result = await s.deleteMany(["a", "b", "missing"]);
      expect(result.deleted.sort()).toEqual(["a", "b", "missing"]);
      expect(result.failed).toEqual([]);
      expect(proxy.requests.filter((r) => r.method === "DELETE")).toHaveLength(3);
      expect(await s.head("a")).toBeNull();
      expect(await s.head("b")).toBeNull();
    } finally {
      await proxy.close();
    }
  });

  it("throws an auth failure of the whole batch instead of retrying blob by blob", async () => {
    const proxy = await startFaultProxy({ target: target.origin });
    try {
      const s = store({ connectionString: withOrigin(target.connectionString, proxy.url) });
      await s.put("a", text("a"));
      proxy.addRule({
        method: "POST",
        path: /comp=batch/,
        action: azureError(403, "AuthorizationFailure"),
      });
      expectKind(await failure(s.deleteMany(["a"])), "auth", {
        operation: "deleteMany",
        status: 403,
      });
      expect(proxy.requests.filter((r) => r.method === "DELETE")).toHaveLength(0);
      expect(await s.head("a")).not.toBeNull();
    } finally {
      await proxy.close();
    }
  });

  it("sends nothing for an empty batch and refuses more than 256 keys", async () => {
    const s = store();
    expect(await s.deleteMany([])).toEqual({ deleted: [], failed: [] });
    const keys = Array.from({ length: AZURE_MAX_BATCH_DELETE + 1 }, (_, i) => `k${i}`);
    expectKind(await failure(s.deleteMany(keys)), "invalid-input", { operation: "deleteMany" });
  });
});

describe("listing and ETags", () => {
  it("pages with continuation tokens, keys relative to the prefix, honouring startAfter across pages", async () => {
    const prefix = freshPrefix("pages");
    const s = store({ prefix });
    const keys = Array.from({ length: 12 }, (_, i) => `d/${String(i).padStart(2, "0")}`);
    await Promise.all(keys.map((k) => s.put(k, text(k))));
    // A neighbour prefix that shares the first characters must not leak in.
    await store({ prefix: `${prefix}x` }).put("d/00", text("neighbour"));

    const first = await s.list("d/", { pageSize: 5 });
    expect(first.objects.map((o) => o.key)).toEqual(keys.slice(0, 5));
    expect(first.nextPageToken).toBeDefined();
    const all = [];
    for await (const o of listAll(s, "", { pageSize: 5 })) all.push(o.key);
    expect(all).toEqual(keys);

    // startAfter beyond the first pages: skipped pages are followed, not returned empty.
    const after = await s.list("d/", { startAfter: "d/08", pageSize: 3 });
    expect(after.objects.map((o) => o.key)).toEqual(["d/09", "d/10", "d/11"]);
    const rest = [];
    for await (const o of listAll(s, "d/", { startAfter: "d/03", pageSize: 4 })) rest.push(o.key);
    expect(rest).toEqual(keys.slice(4));
  });

  it("skips to startAfter in full pages: a one-key page past 30 keys is one request, and paging on from it repeats no key", async () => {
    const proxy = await startFaultProxy({ target: target.origin });
    try {
      const prefix = freshPrefix("skip");
      const s = store({ prefix, connectionString: withOrigin(target.connectionString, proxy.url) });
      const keys = Array.from({ length: 32 }, (_, i) => `v/${String(i).padStart(2, "0")}`);
      await Promise.all(keys.map((k) => s.put(k, text(k))));
      const before = proxy.requests.length;
      const page = await s.list("v/", { startAfter: "v/29", pageSize: 1 });
      expect(page.objects.map((o) => o.key)).toEqual(["v/30"]);
      // Before: one request per skipped key (maxresults=1), 31 requests for this page.
      expect(proxy.requests.length - before).toBe(1);
      const rest = await s.list("v/", { pageToken: page.nextPageToken!, pageSize: 1 });
      expect(rest.objects.map((o) => o.key)).toEqual(["v/31"]);
      const all = [];
      for await (const o of listAll(s, "v/", { startAfter: "v/03", pageSize: 5 })) all.push(o.key);
      expect(all).toEqual(keys.slice(4));
    } finally {
      await proxy.close();
    }
  });

  it("rejects a malformed page token with invalid-input", async () => {
    expectKind(await failure(store().list("", { pageToken: "not a token" })), "invalid-input", {
      operation: "list",
    });
  });

  it("hands out one bare ETag form everywhere and accepts it quoted or bare in if-match", async () => {
    const s = store();
    const { etag } = await s.put("k", text("1"));
    expect(etag).not.toMatch(/"/);
    expect((await s.head("k"))?.etag).toBe(etag);
    expect((await s.get("k"))?.etag).toBe(etag);
    expect((await s.list("")).objects[0]?.etag).toBe(etag);
    const { etag: second } = await s.put("k", text("2"), {
      precondition: { ifMatch: `"${etag}"` },
    });
    await s.put("k", text("3"), { precondition: { ifMatch: second } });
  });

  it("identical bytes get a new ETag; Last-Modified has whole-second precision", async () => {
    const s = store();
    const a = await s.put("k", text("same"));
    const b = await s.put("k", text("same"));
    expect(b.etag).not.toBe(a.etag);
    const meta = await s.head("k");
    expect(meta?.lastModified.getUTCMilliseconds()).toBe(0);
    expect((await s.list("")).objects[0]?.lastModified.getTime()).toBe(
      meta?.lastModified.getTime(),
    );
  });
});
