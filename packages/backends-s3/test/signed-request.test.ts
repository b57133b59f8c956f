import { createServer, type Server } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from "node:net";
import { Worker } from "node:worker_threads";
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
import { bytesEqual } from "@holdfast/conditional-store";
import { type RecordedRequest, s3Error, slowDown } from "@holdfast/fault-proxy";
import { ulid } from "ulid";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createS3Store, type S3StoreOptions, toHoldfastError } from "../src/index.js";
import { readTimeouts, s3ClientConfig } from "../src/s3.js";
import { signedReads } from "../src/signed-request.js";
import { claim, rgwBehindProxy } from "./fault-setup.js";
import { rejection } from "./rejection.js";
import { rgwEnv, rgwOptions } from "./rgw-env.js";

// GET and HEAD go through src/signed-request.ts (README, "Reads and listings"): one SigV4-signed node:http
// request built from the SDK client's own endpoint rules, credentials and retry strategy.
// Everything below runs against the real Ceph RGW (through @holdfast/fault-proxy where a
// fault or a record of the requests is needed), or against a local socket that misbehaves.

/** The SDK marks every request it sends; the signed reads send none of its headers. */
const viaSdk = (r: RecordedRequest) => r.headers["amz-sdk-invocation-id"] !== undefined;
const reads = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === "GET" || r.method === "HEAD");
const gets = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === "GET").map((r) => [r.action, r.status]);

/** The request the SDK itself would send for GetObject: captured before it leaves the process. */
async function sdkGetUrl(options: S3StoreOptions, fullKey: string): Promise<string> {
  let url: string | undefined;
  const client = new S3Client({
    ...s3ClientConfig(options),
    requestHandler: {
      handle: async (request: {
        protocol: string;
        hostname: string;
        port?: number;
        path: string;
        query: Record<string, string>;
      }) => {
        const port = request.port === undefined ? "" : `:${request.port}`;
        // The SDK adds ?x-id=GetObject for its own bookkeeping; nothing else.
        expect(request.query).toEqual({ "x-id": "GetObject" });
        url = `${request.protocol}//${request.hostname}${port}${request.path}`;
        throw Object.assign(new Error("captured"), { name: "Captured" });
      },
    },
  });
  await expect(
    client.send(new GetObjectCommand({ Bucket: options.bucket, Key: fullKey })),
  ).rejects.toMatchObject({ name: "Captured" });
  return url!;
}

/** The URL (without its query) the SDK sends ListObjectsV2 or DeleteObjects to, captured unsent. */
async function sdkBucketUrl(options: S3StoreOptions, command: "list" | "delete"): Promise<string> {
  let url: string | undefined;
  const client = new S3Client({
    ...s3ClientConfig(options),
    requestHandler: {
      handle: async (request: {
        protocol: string;
        hostname: string;
        port?: number;
        path: string;
      }) => {
        const port = request.port === undefined ? "" : `:${request.port}`;
        url = `${request.protocol}//${request.hostname}${port}${request.path}`;
        throw Object.assign(new Error("captured"), { name: "Captured" });
      },
    },
  });
  const sent =
    command === "list"
      ? client.send(
          new ListObjectsV2Command({ Bucket: options.bucket, Prefix: "p/", MaxKeys: 1000 }),
        )
      : client.send(
          new DeleteObjectsCommand({
            Bucket: options.bucket,
            Delete: { Objects: [{ Key: "p/k" }], Quiet: false },
          }),
        );
  await expect(sent).rejects.toMatchObject({ name: "Captured" });
  return url!;
}

async function signedUrl(options: S3StoreOptions, fullKey: string): Promise<string | undefined> {
  const client = new S3Client(s3ClientConfig(options));
  return (await signedReads(client, options.bucket, readTimeouts(options)))?.url(fullKey);
}

const staticKeys = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" };

/** Keys whose encoding differs between encoders: S3 signs the path encoded once, `/` kept. */
const awkwardKeys = [
  "with space/and more spaces.txt",
  "plus+sign/a+b=c&d;e,f'g(h)[i]{j}~k!l@m$n#o",
  "ünïcødé/日本語/😀 emoji.json",
  "percent/%41%2F%",
  "tilde~/~x~",
  "star*/q?x/hash#y",
  "dots/...three/.hidden/trailing.",
  "_versions/18446744073709551615.manifest",
];

describe("which path a configuration takes (no requests sent)", () => {
  const configurations: [string, S3StoreOptions][] = [
    ["AWS, us-east-1, virtual-hosted", { bucket: "holdfast-data", region: "us-east-1" }],
    [
      "AWS, eu-west-1, path style",
      { bucket: "holdfast-data", region: "eu-west-1", forcePathStyle: true },
    ],
    [
      "AWS, a bucket with dots (path style over TLS)",
      { bucket: "holdfast.data", region: "eu-central-1" },
    ],
    [
      "RGW endpoint, path style",
      { bucket: "holdfast-test", endpoint: "http://127.0.0.1:7480", forcePathStyle: true },
    ],
    [
      "IP endpoint without path style",
      { bucket: "holdfast-test", endpoint: "http://127.0.0.1:7480" },
    ],
    [
      "named endpoint, virtual-hosted",
      { bucket: "holdfast-test", endpoint: "http://localhost:9000" },
    ],
    [
      "endpoint with a base path",
      {
        bucket: "holdfast-test",
        endpoint: "https://s3.example.net:8443/store/",
        forcePathStyle: true,
      },
    ],
    [
      "IPv6 endpoint",
      { bucket: "holdfast-test", endpoint: "http://[::1]:7480", forcePathStyle: true },
    ],
  ];
  for (const [name, options] of configurations) {
    it(`${name}: signed reads go to the URL the SDK's endpoint rules give`, async () => {
      const o = { ...options, prefix: "p", credentials: staticKeys };
      for (const key of awkwardKeys) {
        const fullKey = `p/${key}`;
        expect(await signedUrl(o, fullKey)).toBe(await sdkGetUrl(o, fullKey));
      }
    });
    it(`${name}: signed listings and batch deletes go to the bucket URL the SDK's rules give`, async () => {
      const o = { ...options, prefix: "p", credentials: staticKeys };
      // The bucket's URL: the signed path's URL of an empty key.
      const bucketUrl = await signedUrl(o, "");
      expect(bucketUrl).toBe(await sdkBucketUrl(o, "list"));
      expect(bucketUrl).toBe(await sdkBucketUrl(o, "delete"));
    });
  }

  it("follows the SDK's rules from the environment too (AWS_USE_FIPS_ENDPOINT, AWS_ENDPOINT_URL_S3)", async () => {
    const o = { bucket: "holdfast-data", region: "us-west-2", credentials: staticKeys };
    vi.stubEnv("AWS_USE_FIPS_ENDPOINT", "true");
    try {
      const fips = await signedUrl(o, "k");
      expect(fips).toContain("s3-fips");
      expect(fips).toBe(await sdkGetUrl(o, "k"));
    } finally {
      vi.unstubAllEnvs();
    }
    vi.stubEnv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:7481");
    try {
      const configured = await signedUrl({ ...o, forcePathStyle: true }, "k");
      expect(configured).toBe("http://127.0.0.1:7481/holdfast-data/k");
      expect(configured).toBe(await sdkGetUrl({ ...o, forcePathStyle: true }, "k"));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("a configuration the rules refuse stays on the SDK path, which reports the refusal", async () => {
    const o = {
      bucket: "holdfast-test",
      endpoint: "http://127.0.0.1:9",
      forcePathStyle: true,
      credentials: staticKeys,
    };
    vi.stubEnv("AWS_USE_FIPS_ENDPOINT", "true");
    try {
      expect(await signedUrl(o, "k")).toBeUndefined();
      // The SDK's endpoint middleware refuses FIPS with a custom endpoint before sending.
      const error = await rejection(createS3Store(o).get("k"));
      expect(String((error.cause as Error).message)).toMatch(/FIPS/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("an S3 Express bucket (its own auth scheme) stays on the SDK path", async () => {
    const express = {
      bucket: "holdfast--use1-az4--x-s3",
      region: "us-east-1",
      credentials: staticKeys,
    };
    expect(await signedUrl(express, "k")).toBeUndefined();
    expect(await signedUrl({ ...express, bucket: "holdfast-data" }, "k")).toBeDefined();
  });
});

describe("signed reads on real RGW", () => {
  it("GET, HEAD, listings and batch deletes take the signed path; writes stay on the SDK", async () => {
    await using rgw = await rgwBehindProxy();
    await rgw.viaProxy.put("k", claim("x"));
    expect((await rgw.viaProxy.get("k"))?.body).toEqual(claim("x"));
    expect((await rgw.viaProxy.head("k"))?.size).toBe(claim("x").byteLength);
    await rgw.viaProxy.list("");
    await rgw.viaProxy.deleteMany(["k"]);
    await rgw.viaProxy.delete("k");
    expect(rgw.proxy.requests.map((r) => [r.method, viaSdk(r)])).toEqual([
      ["PUT", true],
      ["GET", false],
      ["HEAD", false],
      ["GET", false], // ListObjectsV2
      ["POST", false], // DeleteObjects
      ["DELETE", true],
    ]);
  });

  it("keys with spaces, +, unicode, %, ~ and / round-trip through get and head", async () => {
    await using rgw = await rgwBehindProxy();
    for (const key of awkwardKeys) {
      const body = claim(key);
      const { etag } = await rgw.direct.put(key, body);
      const got = await rgw.viaProxy.get(key);
      expect(got?.key).toBe(key);
      expect(got && bytesEqual(got.body, body)).toBe(true);
      expect(got).toMatchObject({ etag, size: body.byteLength });
      expect(got?.lastModified).toBeInstanceOf(Date);
      const head = await rgw.viaProxy.head(key);
      expect(head).toEqual({ key, etag, lastModified: got?.lastModified, size: body.byteLength });
    }
    expect(reads(rgw.proxy.requests).every((r) => r.status === 200 && !viaSdk(r))).toBe(true);
    // Each key is one object: the listing names exactly these keys.
    const listed = (await rgw.direct.list("")).objects.map((o) => o.key);
    expect(listed.sort()).toEqual([...awkwardKeys].sort());
  });

  it("answers what the SDK path answers: bytes, ETag, Last-Modified, size", async () => {
    await using rgw = await rgwBehindProxy();
    const body = new Uint8Array(443).map((_, i) => (i * 7) % 256);
    await rgw.direct.put("_versions/1.manifest", body);
    const signed = await rgw.viaProxy.get("_versions/1.manifest");
    const client = new S3Client(s3ClientConfig(rgw.options));
    const sdk = await client.send(
      new GetObjectCommand({
        Bucket: rgw.options.bucket,
        Key: `${rgw.options.prefix}/_versions/1.manifest`,
      }),
    );
    expect(signed?.body).toEqual(await sdk.Body!.transformToByteArray());
    expect(signed?.body).toBeInstanceOf(Uint8Array);
    expect(signed?.etag).toBe(sdk.ETag!.replace(/"/g, ""));
    expect(signed?.lastModified).toEqual(sdk.LastModified);
    expect(signed?.size).toBe(443);
  });

  it("a missing key is null for get and head, and is not retried", async () => {
    await using rgw = await rgwBehindProxy({ client: "repeating" });
    expect(await rgw.viaProxy.get("absent")).toBeNull();
    expect(await rgw.viaProxy.head("absent")).toBeNull();
    expect(reads(rgw.proxy.requests).map((r) => [r.method, r.status, viaSdk(r)])).toEqual([
      ["GET", 404, false],
      ["HEAD", 404, false],
    ]);
  });

  it("a missing bucket is refused on get (NoSuchBucket), as on the SDK path", async () => {
    const options = rgwOptions({ bucket: `missing-${ulid().toLowerCase()}` });
    const store = createS3Store(options);
    const signed = await rejection(store.get("k"));
    expect(signed).toMatchObject({ kind: "refused", status: 404, code: "NoSuchBucket" });
    const sdk = await sdkOutcome(options, "get", "k");
    expect(pick(signed)).toEqual(pick(sdk));
    // HEAD answers carry no body: a 404 cannot tell bucket from key, on either path.
    expect(await store.head("k")).toBeNull();
    expect((await sdkOutcome(options, "head", "k")).kind).toBe("not-found");
  });

  it("a wrong secret is the same error on both paths (auth, 403, SignatureDoesNotMatch)", async () => {
    const options = rgwOptions({
      client: "single-attempt",
      credentials: { accessKeyId: rgwEnv().accessKeyId, secretAccessKey: "not-the-secret" },
    });
    const store = createS3Store(options);
    const get = await rejection(store.get("k"));
    expect(get).toMatchObject({ kind: "auth", status: 403, code: "SignatureDoesNotMatch" });
    expect(pick(get)).toEqual(pick(await sdkOutcome(options, "get", "k")));
    const head = await rejection(store.head("k"));
    expect(head).toMatchObject({ kind: "auth", status: 403 });
    expect(pick(head)).toEqual(pick(await sdkOutcome(options, "head", "k")));
  });

  it("signs the session token and calls the client's credential provider on every read (refresh)", async () => {
    await using rgw = await rgwBehindProxy();
    await rgw.direct.put("k", claim("x"));
    const { accessKeyId, secretAccessKey } = rgwEnv();
    const keys = { accessKeyId, secretAccessKey };
    let calls = 0;
    const store = createS3Store({
      ...rgw.options,
      // Expiring within the SDK's refresh window: the client asks the provider again each time.
      credentials: async () => {
        calls += 1;
        return { ...keys, sessionToken: `token-${calls}`, expiration: new Date(Date.now() + 1000) };
      },
    });
    // RGW (without STS) verifies the signature over the token header and then ignores it.
    expect((await store.get("k"))?.body).toEqual(claim("x"));
    expect((await store.head("k"))?.etag).toBeDefined();
    const [first, second] = reads(rgw.proxy.requests);
    // A fresh identity for each read: the second read signed a later token than the first.
    const token = (request: RecordedRequest | undefined) =>
      Number(String(request?.headers["x-amz-security-token"]).replace(/^token-/, ""));
    expect(token(first)).toBeGreaterThanOrEqual(1);
    expect(token(second)).toBeGreaterThan(token(first));
    expect(token(second)).toBeLessThanOrEqual(calls);
    for (const request of [first, second]) {
      expect(String(request?.headers.authorization)).toMatch(
        /SignedHeaders=[^,]*x-amz-security-token/,
      );
    }
  });

  it("an aborted signal is kind aborted: before sending, while waiting, and between attempts", async () => {
    // Throttling backoff of 990 ms before the second attempt: the abort at 200 ms falls in it.
    vi.spyOn(Math, "random").mockReturnValue(0.99);
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: ["GET", "HEAD"], path: /slow$/, action: { type: "delay", ms: 5_000 } },
      { method: "GET", path: /throttled$/, action: slowDown() },
    ]);
    expect(await rejection(rgw.viaProxy.get("k", { signal: AbortSignal.abort() }))).toMatchObject({
      kind: "aborted",
    });
    expect(rgw.proxy.requests).toHaveLength(0);
    for (const key of ["slow", "throttled"]) {
      const started = Date.now();
      const error = await rejection(rgw.viaProxy.get(key, { signal: AbortSignal.timeout(200) }));
      expect(error.kind).toBe("aborted");
      // Neither the held answer (5 s) nor the backoff (990 ms) is waited out.
      expect(Date.now() - started).toBeLessThan(700);
    }
    expect(
      await rejection(rgw.viaProxy.head("slow", { signal: AbortSignal.timeout(100) })),
    ).toMatchObject({
      kind: "aborted",
    });
    vi.restoreAllMocks();
  });
});

describe("retries of signed reads", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("a repeating client re-sends a GET after 503 SlowDown twice and returns the object", async () => {
    // The client's retry strategy draws its backoff with Math.random: fixed here.
    vi.spyOn(Math, "random").mockReturnValue(0);
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", nth: [1, 2], action: slowDown() },
    ]);
    await rgw.direct.put("k", claim("x"));
    expect((await rgw.viaProxy.get("k"))?.body).toEqual(claim("x"));
    expect(gets(rgw.proxy.requests)).toEqual([
      ["respond", 503],
      ["respond", 503],
      ["forward", 200],
    ]);
  });

  it("waits as the SDK's strategy says between attempts (throttling backoff)", async () => {
    // Half of the throttling backoff: 1,000 ms x 2^attempt x 0.5 = 500 ms, then 1,000 ms.
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", nth: [1, 2], action: slowDown() },
    ]);
    await rgw.direct.put("k", claim("x"));
    const started = Date.now();
    expect((await rgw.viaProxy.get("k"))?.body).toEqual(claim("x"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_450);
  });

  it("stops at the client's maxAttempts (3) and reports the last answer", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", action: s3Error(500, "InternalError") },
    ]);
    const error = await rejection(rgw.viaProxy.get("k"));
    expect(error).toMatchObject({ kind: "ambiguous", status: 500, code: "InternalError" });
    expect(gets(rgw.proxy.requests)).toHaveLength(3);
  });

  it("a single-attempt client sends a read once", async () => {
    await using rgw = await rgwBehindProxy({ client: "single-attempt" }, [
      { method: ["GET", "HEAD"], action: slowDown() },
    ]);
    const error = await rejection(rgw.viaProxy.get("k"));
    expect(error).toMatchObject({ kind: "ambiguous", status: 503, code: "SlowDown" });
    expect(await rejection(rgw.viaProxy.head("k"))).toMatchObject({
      kind: "ambiguous",
      status: 503,
    });
    expect(reads(rgw.proxy.requests)).toHaveLength(2);
  });

  it("a body cut short is an error, never a short object; a repeating client reads it again", async () => {
    const body = new Uint8Array(443).fill(42);
    await using single = await rgwBehindProxy({ client: "single-attempt" }, [
      { method: "GET", action: { type: "truncate-response", bytes: 200 } },
    ]);
    await single.direct.put("m", body);
    const error = await rejection(single.viaProxy.get("m"));
    expect(error).toMatchObject({ kind: "ambiguous", code: "IncompleteBody" });

    await using repeating = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", nth: 1, action: { type: "truncate-response", bytes: 200 } },
    ]);
    await repeating.direct.put("m", body);
    const got = await repeating.viaProxy.get("m");
    expect(got?.body).toEqual(body);
    expect(gets(repeating.proxy.requests)).toEqual([
      ["truncate-response", 200],
      ["forward", 200],
    ]);
  });
});

describe("timeouts of signed reads (a local server that misbehaves)", () => {
  /** A TCP server that accepts connections and never answers. */
  async function silentServer(): Promise<{
    url: string;
    connections: () => number;
    close: () => Promise<void>;
  }> {
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = createTcpServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      connections: () => connections,
      close: () =>
        new Promise((resolve) => {
          for (const socket of sockets) socket.destroy();
          server.close(() => resolve());
        }),
    };
  }

  /** An HTTP server answering every request with `answer`. */
  async function httpServer(
    answer: (socket: Socket) => void,
  ): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
    let requests = 0;
    const server: Server = createServer((req) => {
      requests += 1;
      answer(req.socket);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}`,
      requests: () => requests,
      close: () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  const headersFor = (length: number) =>
    `HTTP/1.1 200 OK\r\nContent-Length: ${length}\r\nETag: "abc"\r\n` +
    `Last-Modified: ${new Date().toUTCString()}\r\n\r\n`;

  const storeAt = (url: string, client: "single-attempt" | "repeating") =>
    createS3Store({ ...rgwOptions({ client, requestTimeoutMs: 200 }), endpoint: url });

  it("a server that accepts and never answers: the read fails after the request timeout, each attempt", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const server = await silentServer();
    try {
      let started = Date.now();
      const single = await rejection(storeAt(server.url, "single-attempt").get("k"));
      expect(single).toMatchObject({ kind: "ambiguous", code: "TimeoutError" });
      expect(Date.now() - started).toBeGreaterThanOrEqual(190);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(server.connections()).toBe(1);

      started = Date.now();
      const repeating = await rejection(storeAt(server.url, "repeating").get("k"));
      expect(repeating).toMatchObject({ kind: "ambiguous", code: "TimeoutError" });
      expect(server.connections()).toBe(1 + 3);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      vi.restoreAllMocks();
      await server.close();
    }
  });

  it("a connection that never establishes fails after the connection timeout (5 s)", async () => {
    // A listener whose thread never accepts, its accept queue filled: the kernel drops the
    // next connection's SYN and the connect hangs, as to a host that does not answer.
    const worker = new Worker(
      `const { createServer } = require("node:net");
       const { parentPort } = require("node:worker_threads");
       const server = createServer().listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
         parentPort.postMessage(server.address().port);
         parentPort.once("message", () => {});
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30_000);
       });`,
      { eval: true },
    );
    const port = await new Promise<number>((resolve) => worker.once("message", resolve));
    const fillers: Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const socket = connect(port, "127.0.0.1");
        socket.on("error", () => {});
        fillers.push(socket);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      const store = createS3Store({
        ...rgwOptions({ client: "single-attempt" }),
        endpoint: `http://127.0.0.1:${port}`,
      });
      const started = Date.now();
      const error = await rejection(store.get("k"));
      expect(error).toMatchObject({ kind: "ambiguous", code: "TimeoutError" });
      expect(String((error.cause as Error).message)).toContain("no connection");
      expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
    } finally {
      for (const socket of fillers) socket.destroy();
      await worker.terminate();
    }
  }, 15_000);

  it("a body that stalls after its headers fails after the timeout, not never", async () => {
    const server = await httpServer((socket) =>
      socket.write(`${headersFor(443)}${"x".repeat(100)}`),
    );
    try {
      const error = await rejection(storeAt(server.url, "single-attempt").get("k"));
      expect(error).toMatchObject({ kind: "ambiguous", code: "TimeoutError" });
      expect(String((error.cause as Error).message)).toContain("paused");
    } finally {
      await server.close();
    }
  });

  it("a body that keeps arriving is read whole even past the timeout", async () => {
    const server = await httpServer((socket) => {
      socket.write(headersFor(10));
      let sent = 0;
      const timer = setInterval(() => {
        socket.write("x");
        sent += 1;
        if (sent === 10) clearInterval(timer);
      }, 50);
    });
    try {
      const got = await storeAt(server.url, "single-attempt").get("k");
      expect(new TextDecoder().decode(got!.body)).toBe("x".repeat(10));
    } finally {
      await server.close();
    }
  });

  it("a clock an hour behind the server's is corrected from the error's Date, and the read retried", async () => {
    const skew = 3_600_000;
    const signedAt: number[] = [];
    const server = createServer((req, res) => {
      // x-amz-date is 20261207T023000Z: compare it with this server's clock, an hour ahead.
      const date = String(req.headers["x-amz-date"]);
      const at = Date.parse(
        `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
      );
      signedAt.push(at);
      const now = Date.now() + skew;
      if (Math.abs(now - at) > 15 * 60_000) {
        const body = `<?xml version="1.0"?><Error><Code>RequestTimeTooSkewed</Code></Error>`;
        res
          .writeHead(403, {
            "content-length": Buffer.byteLength(body),
            date: new Date(now).toUTCString(),
          })
          .end(body);
        return;
      }
      res
        .writeHead(200, {
          "content-length": 2,
          etag: '"abc"',
          "last-modified": new Date(now).toUTCString(),
        })
        .end("ok");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const got = await storeAt(`http://127.0.0.1:${port}`, "repeating").get("k");
      expect(new TextDecoder().decode(got!.body)).toBe("ok");
      expect(signedAt).toHaveLength(2);
      expect(signedAt[1]! - signedAt[0]!).toBeGreaterThan(skew - 5_000);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("reads share one keep-alive connection, error answers read whole included", async () => {
    let connections = 0;
    const server = createServer((req, res) => {
      if (req.url?.endsWith("/missing")) {
        const body = `<?xml version="1.0"?><Error><Code>NoSuchKey</Code></Error>`;
        res.writeHead(404, { "content-length": Buffer.byteLength(body) }).end(body);
      } else {
        res
          .writeHead(200, {
            "content-length": 2,
            etag: '"abc"',
            "last-modified": new Date().toUTCString(),
          })
          .end("ok");
      }
    });
    server.on("connection", () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const store = storeAt(`http://127.0.0.1:${port}`, "single-attempt");
      for (let i = 0; i < 5; i++) {
        expect(await store.get("missing")).toBeNull();
        expect(await store.head("missing")).toBeNull();
        expect((await store.get("present"))?.size).toBe(2);
      }
      expect(connections).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("a 200 whose end cannot be told from a cut connection (no length, not chunked) is refused", async () => {
    const server = await httpServer((socket) => {
      socket.end(
        `HTTP/1.1 200 OK\r\nConnection: close\r\nETag: "abc"\r\n` +
          `Last-Modified: ${new Date().toUTCString()}\r\n\r\nshort`,
      );
    });
    try {
      const error = await rejection(storeAt(server.url, "single-attempt").get("k"));
      expect(error).toMatchObject({ kind: "ambiguous", code: "IncompleteBody" });
    } finally {
      await server.close();
    }
  });
});

// --- utils ---

/** What the SDK path (GetObjectCommand / HeadObjectCommand through the same client config) answers. */
async function sdkOutcome(
  options: S3StoreOptions,
  operation: "get" | "head",
  key: string,
): Promise<Record<string, unknown>> {
  const client = new S3Client(s3ClientConfig(options));
  const input = { Bucket: options.bucket, Key: `${options.prefix}/${key}` };
  try {
    await client.send(
      operation === "get" ? new GetObjectCommand(input) : new HeadObjectCommand(input),
    );
  } catch (error) {
    return toHoldfastError(error, { operation, key }) as unknown as Record<string, unknown>;
  }
  return expect.fail("expected the SDK to fail");
}

const pick = (error: Record<string, unknown>) => ({
  kind: error.kind,
  status: error.status,
  code: error.code,
});
