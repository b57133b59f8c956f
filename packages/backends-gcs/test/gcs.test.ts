// GCS-only behaviour on a real fake-gcs-server: what the probe finds, refusals before
// anything is sent, a missing bucket, and the client's checksum validation kept off.
import { isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { type FaultProxy, startFaultProxy } from "@holdfast/fault-proxy";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createGcsStore, GCS_BACKEND, openGcsStore } from "../src/index.js";
import { ensureBucket, freshPrefix, gcsEmulator } from "./emulator.js";

const emulator = gcsEmulator();
// Top-level: a missing emulator fails the file outright instead of skipping its tests.
await ensureBucket(emulator);

const text = (s: string) => new TextEncoder().encode(s);

function store(extra: Partial<Parameters<typeof createGcsStore>[0]> = {}): ObjectStore {
  return createGcsStore({
    bucket: emulator.bucket,
    prefix: freshPrefix("g"),
    endpoint: emulator.endpoint,
    ...extra,
  });
}

async function kindOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  return isHoldfastError(error) ? error.kind : `not a HoldfastError: ${String(error)}`;
}

describe("openGcsStore on fake-gcs-server", () => {
  it("finds create-only and compare-and-swap enforced and conditional delete ignored, and declares exactly that", async () => {
    const opened = await openGcsStore({
      bucket: emulator.bucket,
      prefix: freshPrefix("o"),
      endpoint: emulator.endpoint,
    });
    expect(opened.backend).toBe(GCS_BACKEND);
    expect(opened.location).toMatch(/^gs:\/\/holdfast-test\/t-o-/);
    expect(opened.capabilities).toMatchObject({
      atomicConditionalUpdate: true,
      atomicConditionalDelete: false,
      requestMode: "single-attempt",
    });
    // The probe cleaned up after itself.
    expect((await opened.list("")).objects).toEqual([]);
  });

  it("refuses conditionalDelete: true on a store that ignores ifGenerationMatch on delete", async () => {
    const error = await openGcsStore({
      bucket: emulator.bucket,
      prefix: freshPrefix("o"),
      endpoint: emulator.endpoint,
      conditionalDelete: true,
    }).catch((e: unknown) => e);
    expect(isHoldfastError(error, "unsupported")).toBe(true);
  });

  it("a missing bucket is refused at open, naming no secret", async () => {
    const error = await openGcsStore({
      bucket: "holdfast-no-such-bucket",
      endpoint: emulator.endpoint,
    }).catch((e: unknown) => e);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error).toMatchObject({ status: 404, hint: expect.stringMatching(/create the bucket/) });
  });
});

describe("refusals before anything is sent", () => {
  it("rejects a bad bucket name, endpoint, client mode and retry cap with invalid-input", () => {
    const bad = [
      { bucket: "Bad_Bucket" },
      { bucket: "ab" },
      { bucket: "googlebucket" },
      { bucket: emulator.bucket, endpoint: "not a url" },
      { bucket: emulator.bucket, client: "sometimes" as "repeating" },
      { bucket: emulator.bucket, client: "repeating" as const, retry: { maxRetryDelay: 0.1 } },
      { bucket: emulator.bucket, client: "repeating" as const, retry: { maxRetries: 0 } },
      { bucket: emulator.bucket, prefix: "../up" },
    ];
    for (const options of bad) {
      let error: unknown;
      try {
        createGcsStore(options);
      } catch (e) {
        error = e;
      }
      expect(isHoldfastError(error, "invalid-input"), JSON.stringify(options)).toBe(true);
    }
  });

  it("refuses delete({ ifMatch }) as unsupported where conditional delete is declared off, leaving the object", async () => {
    const s = store({ conditionalDelete: false });
    const { etag } = await s.put("k", text("v"));
    expect(await kindOf(s.delete("k", { ifMatch: etag }))).toBe("unsupported");
    expect((await s.head("k"))?.etag).toBe(etag);
  });

  it("an ETag that is no generation matches nothing: conflict, nothing written", async () => {
    const s = store();
    const { etag } = await s.put("k", text("v1"));
    for (const stale of ["abc", "0", "-1", '"123"', `${etag}x`]) {
      expect(await kindOf(s.put("k", text("v2"), { precondition: { ifMatch: stale } }))).toBe(
        "conflict",
      );
    }
    expect((await s.get("k"))?.body).toEqual(text("v1"));
    // "0" would be ifGenerationMatch=0, create-only: on an absent key it must not create.
    expect(await kindOf(s.put("absent", text("v"), { precondition: { ifMatch: "0" } }))).toBe(
      "conflict",
    );
    expect(await s.head("absent")).toBeNull();
  });

  it("an upload or a listing on a missing bucket is refused; reads of it find nothing", async () => {
    const s = createGcsStore({ bucket: "holdfast-no-such-bucket", endpoint: emulator.endpoint });
    expect(await kindOf(s.put("k", text("v")))).toBe("refused");
    expect(await kindOf(s.put("k", text("v"), { precondition: { ifNoneMatch: "*" } }))).toBe(
      "refused",
    );
    expect(await kindOf(s.list(""))).toBe("refused");
    expect(await s.head("k")).toBeNull();
    expect(await s.get("k")).toBeNull();
  });

  it("an endpoint that refuses connections is ambiguous, never a refusal or not-found", async () => {
    const s = createGcsStore({ bucket: emulator.bucket, endpoint: "http://127.0.0.1:1" });
    expect(await kindOf(s.put("k", text("v"), { precondition: { ifNoneMatch: "*" } }))).toBe(
      "ambiguous",
    );
    expect(await kindOf(s.head("k"))).toBe("ambiguous");
  });
});

describe("timestamps and ETags", () => {
  it("the ETag is the generation: put, get, head and list agree, and a rewrite of the same bytes changes it", async () => {
    const s = store();
    const { etag: first } = await s.put("k", text("same"));
    expect(first).toMatch(/^[1-9]\d*$/);
    expect((await s.head("k"))?.etag).toBe(first);
    expect((await s.get("k"))?.etag).toBe(first);
    expect((await s.list("")).objects.map((o) => o.etag)).toEqual([first]);
    const { etag: second } = await s.put("k", text("same"));
    expect(second).not.toBe(first);
  });

  it("head and list report milliseconds; get reports whole seconds, the declared precision", async () => {
    const s = store();
    await s.put("k", text("v"));
    const head = (await s.head("k"))!.lastModified.getTime();
    const listed = (await s.list("")).objects[0]!.lastModified.getTime();
    const got = (await s.get("k"))!.lastModified.getTime();
    expect(listed).toBe(head);
    expect(got % 1000).toBe(0);
    expect(got).toBe(head - (head % 1000));
    expect(s.capabilities.timestampPrecisionMs).toBe(1000);
  });
});

describe("the client's checksum validation stays off", () => {
  let proxy: FaultProxy;
  beforeEach(async () => {
    proxy = await startFaultProxy({ target: emulator.endpoint });
  });
  afterEach(() => proxy.close());

  it("an upload answer whose checksums do not match never makes the client delete the object", async () => {
    const prefix = freshPrefix("v");
    const via = createGcsStore({ bucket: emulator.bucket, prefix, endpoint: proxy.url });
    const direct = createGcsStore({ bucket: emulator.bucket, prefix, endpoint: emulator.endpoint });
    // The upload lands; its answer claims other checksums (as a corrupted answer would).
    proxy.addRule({
      method: "POST",
      action: {
        type: "replace-response",
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          kind: "storage#object",
          name: `${prefix}/k`,
          bucket: emulator.bucket,
          generation: "1234567890123456",
          metageneration: "1",
          size: "1",
          md5Hash: "AAAAAAAAAAAAAAAAAAAAAA==",
          crc32c: "AAAAAA==",
          updated: new Date().toISOString(),
        }),
      },
    });

    await via.put("k", text("v"), { precondition: { ifNoneMatch: "*" } });

    expect(proxy.requests.map((r) => r.method)).toEqual(["POST"]);
    expect((await direct.get("k"))?.body).toEqual(text("v"));
  });
});

describe("abort signals in flight", () => {
  it("a signal that fires while a request is in flight rejects with kind aborted", async () => {
    const proxy = await startFaultProxy({
      target: emulator.endpoint,
      rules: [{ method: "GET", action: { type: "delay", ms: 2_000 } }],
    });
    try {
      const s = createGcsStore({ bucket: emulator.bucket, endpoint: proxy.url });
      const controller = new AbortController();
      const pending = s.head("k", { signal: controller.signal });
      setTimeout(() => controller.abort(new Error("stop")), 50);
      const started = Date.now();
      expect(await kindOf(pending)).toBe("aborted");
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      await proxy.close();
    }
  });
});

describe("STORAGE_EMULATOR_HOST", () => {
  const saved = process.env.STORAGE_EMULATOR_HOST;
  afterEach(() => {
    if (saved === undefined) delete process.env.STORAGE_EMULATOR_HOST;
    else process.env.STORAGE_EMULATOR_HOST = saved;
  });

  it("an explicit endpoint gets every request, JSON and upload alike, whatever the variable says", async () => {
    const proxy = await startFaultProxy({ target: emulator.endpoint });
    try {
      process.env.STORAGE_EMULATOR_HOST = "http://127.0.0.1:1";
      const s = createGcsStore({
        bucket: emulator.bucket,
        prefix: freshPrefix("e"),
        endpoint: proxy.url,
      });
      const { etag } = await s.put("k", text("v"), { precondition: { ifNoneMatch: "*" } });
      expect((await s.head("k"))?.etag).toBe(etag);
      expect((await s.list("")).objects.map((o) => o.key)).toEqual(["k"]);
      expect(proxy.requests.map((r) => r.method)).toEqual(["POST", "GET", "GET"]);
    } finally {
      await proxy.close();
    }
  });

  it("without an endpoint the variable names the emulator, also as host:port", async () => {
    for (const value of [emulator.endpoint, new URL(emulator.endpoint).host]) {
      process.env.STORAGE_EMULATOR_HOST = value;
      const s = createGcsStore({ bucket: emulator.bucket, prefix: freshPrefix("e") });
      const { etag } = await s.put("k", text("v"));
      expect((await s.head("k"))?.etag).toBe(etag);
      expect((await s.list("")).objects.map((o) => o.etag)).toEqual([etag]);
    }
  });
});
