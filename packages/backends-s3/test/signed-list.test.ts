import {
  DeleteObjectsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  S3Client,
} from "@aws-sdk/client-s3";
import type { ListPage, ObjectStore } from "@holdfast/conditional-store";
import { type RecordedRequest, slowDown } from "@holdfast/fault-proxy";
import { afterEach, describe, expect, it, vi } from "vitest";
import { s3ClientConfig } from "../src/s3.js";
import { deleteObjectsBody, escapeXml, parseDeleteResult, parseListPage } from "../src/xml.js";
import { claim, rgwBehindProxy } from "./fault-setup.js";
import { rejection } from "./rejection.js";

// `list` (ListObjectsV2) and `deleteMany` (DeleteObjects) go through src/signed-request.ts
// (README, "Reads and listings"), their XML through src/xml.ts. Against the real Ceph RGW,
// through @holdfast/fault-proxy where a fault or a record of the requests is needed; every
// answer is compared with what the SDK's own commands answer for the same objects.

const viaSdk = (r: RecordedRequest) => r.headers["amz-sdk-invocation-id"] !== undefined;
const lists = (requests: readonly RecordedRequest[]) =>
  requests.filter((r) => r.method === "GET" && r.path.includes("list-type=2"));
const posts = (requests: readonly RecordedRequest[]) => requests.filter((r) => r.method === "POST");

/** Keys S3 escapes in its XML, or that an encoder or parser could change. */
const xmlKeys = [
  "amp&ersand/a&b&amp;c",
  "angle<brackets>/<Key>not a tag</Key>",
  `quotes/"double" and 'single'`,
  "entity-like/&lt;&#x41;&#65;&quot;",
  "with space/and more spaces.txt",
  " leading and trailing spaces ",
  "plus+sign/a+b=c;e,f(h)[i]{j}~k!l@m$n#o",
  "percent/%41%2F%",
  "ünïcødé/日本語/😀 emoji.json",
  "007",
  "true",
  "1e3",
  "_versions/18446744073709551615.manifest",
];

/** Every page of `prefix` through `store`, `pageSize` at a time. */
async function allPages(store: ObjectStore, prefix: string, pageSize?: number) {
  const pages: ListPage[] = [];
  let pageToken: string | undefined;
  do {
    const page = await store.list(prefix, {
      ...(pageSize === undefined ? {} : { pageSize }),
      ...(pageToken === undefined ? {} : { pageToken }),
    });
    pages.push(page);
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return pages;
}

/** The same listing through the SDK's ListObjectsV2Command, in the store's terms. */
async function sdkPages(
  client: S3Client,
  bucket: string,
  root: string,
  prefix: string,
  maxKeys: number,
) {
  const pages: { keys: string[]; etags: string[]; dates: Date[]; sizes: number[] }[] = [];
  let token: string | undefined;
  let answer: ListObjectsV2CommandOutput;
  do {
    answer = await client.send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: root + prefix,
        MaxKeys: maxKeys,
        ...(token === undefined ? {} : { ContinuationToken: token }),
      }),
    );
    const contents = answer.Contents ?? [];
    pages.push({
      keys: contents.map((c) => c.Key!.slice(root.length)),
      etags: contents.map((c) => c.ETag!.replace(/"/g, "")),
      dates: contents.map((c) => c.LastModified!),
      sizes: contents.map((c) => c.Size!),
    });
    token = answer.IsTruncated ? answer.NextContinuationToken : undefined;
  } while (token !== undefined);
  return pages;
}

function pageShape(pages: readonly ListPage[]) {
  return pages.map((page) => ({
    keys: page.objects.map((o) => o.key),
    etags: page.objects.map((o) => o.etag),
    dates: page.objects.map((o) => o.lastModified),
    sizes: page.objects.map((o) => o.size),
  }));
}

/** The body and headers the SDK's DeleteObjectsCommand sends for `keys`, captured unsent. */
async function sdkDeleteRequest(keys: readonly string[]) {
  let sent: { body: string; headers: Record<string, string> } | undefined;
  const client = new S3Client({
    ...s3ClientConfig({ bucket: "b", region: "us-east-1", endpoint: "http://127.0.0.1:1" }),
    credentials: { accessKeyId: "a", secretAccessKey: "s" },
    requestHandler: {
      handle: async (request: { body: string; headers: Record<string, string> }) => {
        sent = { body: String(request.body), headers: request.headers };
        throw Object.assign(new Error("captured"), { name: "Captured" });
      },
    },
  });
  await expect(
    client.send(
      new DeleteObjectsCommand({
        Bucket: "b",
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: false },
      }),
    ),
  ).rejects.toMatchObject({ name: "Captured" });
  return sent!;
}

describe("the XML of signed listings and batch deletes", () => {
  it("builds the <Delete> body the SDK builds, byte for byte, with its checksum header", async () => {
    const keys = [...xmlKeys, "cr\rlf\ntab\t"];
    const sent = await sdkDeleteRequest(keys);
    expect(deleteObjectsBody(keys, false)).toBe(sent!.body);
    expect(sent!.headers["x-amz-sdk-checksum-algorithm"]).toBe("CRC32");
    expect(sent!.headers["content-md5"]).toBeUndefined();
  });

  it("escapes the five markup characters and CR/LF, nothing else", () => {
    expect(escapeXml(`a&b<c>d"e'f\rg\nh\ti ü+%`)).toBe(
      "a&amp;b&lt;c&gt;d&quot;e&apos;f&#x0D;g&#x0A;h\ti ü+%",
    );
  });

  it("parses keys as untrimmed strings with entities and character references decoded", () => {
    const page = parseListPage(
      `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key> 007 </Key><LastModified>2026-12-07T02:40:00.123Z</LastModified><ETag>&quot;abc&quot;</ETag><Size>12</Size></Contents><Contents><Key>a&amp;&#x41;&#66;&lt;</Key><Size>0</Size></Contents><NextContinuationToken>t+/=</NextContinuationToken></ListBucketResult>`,
    );
    expect(page).toEqual({
      contents: [
        { key: " 007 ", etag: '"abc"', lastModified: new Date(1796611200123), size: 12 },
        { key: "a&AB<", etag: undefined, lastModified: undefined, size: 0 },
      ],
      isTruncated: true,
      nextContinuationToken: "t+/=",
    });
    // One entry is a list too.
    expect(
      parseDeleteResult(
        "<DeleteResult><Error><Key>k</Key><Code>AccessDenied</Code></Error></DeleteResult>",
      ),
    ).toEqual({ deleted: [], errors: [{ key: "k", code: "AccessDenied", message: undefined }] });
    // An empty result (no entries) is empty, not malformed.
    expect(parseDeleteResult("<DeleteResult></DeleteResult>")).toEqual({ deleted: [], errors: [] });
    expect(() => parseListPage("<Error><Code>x</Code></Error>")).toThrow(/ListBucketResult/);
  });
});

describe("signed listings and batch deletes on real RGW", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("keys with &, <, >, quotes, spaces, +, %, unicode list and delete as the SDK's commands answer", async () => {
    await using rgw = await rgwBehindProxy();
    const etags = new Map<string, string>();
    for (const key of xmlKeys) etags.set(key, (await rgw.direct.put(key, claim(key))).etag);
    const root = `${rgw.options.prefix}/`;
    const client = new S3Client(s3ClientConfig({ ...rgw.options, endpoint: rgw.proxy.url }));

    const signed = await allPages(rgw.viaProxy, "");
    const sdk = await sdkPages(client, rgw.options.bucket, root, "", 1000);
    expect(pageShape(signed)).toEqual(sdk);
    expect(signed[0]!.objects.map((o) => o.key)).toEqual(
      [...xmlKeys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))),
    );
    for (const o of signed[0]!.objects) expect(o.etag).toBe(etags.get(o.key));
    // Prefixes with the same characters select the same keys.
    for (const prefix of ["amp&", "angle<", `quotes/"`, " leading", "ünïcødé/日"]) {
      const page = await rgw.viaProxy.list(prefix);
      expect(page.objects.map((o) => o.key)).toEqual(xmlKeys.filter((k) => k.startsWith(prefix)));
    }

    // The SDK's DeleteObjects on half the keys, the signed one on the rest: the same answer.
    // The signed one takes the keys with markup characters.
    const rest = xmlKeys.slice(0, 6);
    const half = xmlKeys.slice(6);
    const sdkAnswer = await client.send(
      new DeleteObjectsCommand({
        Bucket: rgw.options.bucket,
        Delete: { Objects: half.map((k) => ({ Key: root + k })), Quiet: false },
      }),
    );
    expect((sdkAnswer.Deleted ?? []).map((d) => d.Key!.slice(root.length)).sort()).toEqual(
      [...half].sort(),
    );
    expect(await rgw.viaProxy.deleteMany(rest)).toEqual({ deleted: rest, failed: [] });
    expect((await rgw.viaProxy.list("")).objects).toEqual([]);
    expect([...lists(rgw.proxy.requests), ...posts(rgw.proxy.requests)].map(viaSdk)).toEqual([
      false,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      true,
      false,
    ]);
  });

  it("pages with continuation tokens and startAfter as the SDK does (25 keys, pages of 7)", async () => {
    await using rgw = await rgwBehindProxy();
    const keys = Array.from({ length: 25 }, (_, i) => `p/${String(i).padStart(3, "0")}&<${i}>`);
    for (const key of keys) await rgw.direct.put(key, claim(key));
    await rgw.direct.put("q/outside", claim("q"));
    const root = `${rgw.options.prefix}/`;
    const client = new S3Client(s3ClientConfig(rgw.options));
    const signed = await allPages(rgw.viaProxy, "p/", 7);
    expect(signed.map((p) => p.objects.length)).toEqual([7, 7, 7, 4]);
    expect(signed.flatMap((p) => p.objects.map((o) => o.key))).toEqual(keys);
    expect(pageShape(signed)).toEqual(await sdkPages(client, rgw.options.bucket, root, "p/", 7));
    const after = await rgw.viaProxy.list("p/", { startAfter: keys[20]!, pageSize: 3 });
    expect(after.objects.map((o) => o.key)).toEqual(keys.slice(21, 24));
    expect(after.nextPageToken).toBeDefined();
    // pageSize is capped at S3's 1,000.
    await rgw.viaProxy.list("p/", { pageSize: 5000 });
    expect(lists(rgw.proxy.requests).at(-1)?.path).toContain("max-keys=1000");
  });

  it("a batch with absent keys deletes the present ones and reports every key deleted", async () => {
    await using rgw = await rgwBehindProxy();
    await rgw.direct.put("a", claim("a"));
    await rgw.direct.put("c&d", claim("c"));
    const keys = ["a", "absent", "c&d", "never<there>", "a"];
    expect(await rgw.viaProxy.deleteMany(keys)).toEqual({ deleted: keys, failed: [] });
    expect((await rgw.direct.list("")).objects).toEqual([]);
    // Duplicates are sent once, with the checksum the SDK sends for the same keys.
    const [post, ...more] = posts(rgw.proxy.requests);
    expect(more).toEqual([]);
    const sdk = await sdkDeleteRequest(
      ["a", "absent", "c&d", "never<there>"].map((k) => `${rgw.options.prefix}/${k}`),
    );
    expect(post!.headers["x-amz-checksum-crc32"]).toBe(sdk.headers["x-amz-checksum-crc32"]);
    expect(post!.headers["x-amz-sdk-checksum-algorithm"]).toBe("CRC32");
  });

  it("a per-key error in a DeleteObjects answer is mapped as on the SDK path; an unanswered key is ambiguous", async () => {
    const prefix = `test-perkey-${Date.now().toString(36)}`;
    const root = `${prefix}/`;
    const answer = `<?xml version="1.0" encoding="UTF-8"?><DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Deleted><Key>${root}a&amp;b</Key></Deleted><Error><Key>${root}locked&lt;1&gt;</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error><Error><Key>${root}busy</Key><Code>InternalError</Code><Message>try again</Message></Error></DeleteResult>`;
    await using rgw = await rgwBehindProxy({ client: "repeating", prefix }, [
      {
        method: "POST",
        action: {
          type: "replace-response",
          status: 200,
          headers: { "content-type": "application/xml" },
          body: answer,
        },
      },
    ]);
    const result = await rgw.viaProxy.deleteMany(["a&b", "locked<1>", "busy", "lost"]);
    expect(result.deleted).toEqual(["a&b"]);
    expect(result.failed.map((f) => [f.key, f.error.kind, f.error.code])).toEqual([
      ["locked<1>", "auth", "AccessDenied"],
      ["busy", "ambiguous", "InternalError"],
      ["lost", "ambiguous", undefined],
    ]);
    // A 200 answer with per-key errors is not sent again.
    expect(posts(rgw.proxy.requests)).toHaveLength(1);
  });

  it("a repeating client re-sends a listing and a batch delete after 503 SlowDown", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", path: /list-type=2/, nth: [1, 2], action: slowDown() },
      { method: "POST", nth: [1, 2], action: slowDown() },
    ]);
    await rgw.direct.put("k&1", claim("k"));
    expect((await rgw.viaProxy.list("")).objects.map((o) => o.key)).toEqual(["k&1"]);
    expect(await rgw.viaProxy.deleteMany(["k&1"])).toEqual({ deleted: ["k&1"], failed: [] });
    const statuses = (rs: readonly RecordedRequest[]) => rs.map((r) => r.status);
    expect(statuses(lists(rgw.proxy.requests))).toEqual([503, 503, 200]);
    expect(statuses(posts(rgw.proxy.requests))).toEqual([503, 503, 200]);
  });

  it("stops at the client's maxAttempts (3): a listing and a batch delete that keep failing are ambiguous", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", path: /list-type=2/, action: slowDown() },
      { method: "POST", action: slowDown() },
    ]);
    expect(await rejection(rgw.viaProxy.list(""))).toMatchObject({
      kind: "ambiguous",
      status: 503,
      code: "SlowDown",
    });
    expect(await rejection(rgw.viaProxy.deleteMany(["k"]))).toMatchObject({
      kind: "ambiguous",
      status: 503,
      code: "SlowDown",
    });
    expect(lists(rgw.proxy.requests)).toHaveLength(3);
    expect(posts(rgw.proxy.requests)).toHaveLength(3);
  });

  it("a single-attempt client sends a listing and a batch delete once", async () => {
    await using rgw = await rgwBehindProxy({ client: "single-attempt" }, [
      { method: "GET", path: /list-type=2/, action: slowDown() },
      { method: "POST", action: slowDown() },
    ]);
    expect(await rejection(rgw.viaProxy.list(""))).toMatchObject({
      kind: "ambiguous",
      status: 503,
    });
    expect(await rejection(rgw.viaProxy.deleteMany(["k"]))).toMatchObject({
      kind: "ambiguous",
      status: 503,
    });
    expect(lists(rgw.proxy.requests)).toHaveLength(1);
    expect(posts(rgw.proxy.requests)).toHaveLength(1);
  });

  it("a 200 whose body is an S3 <Error> document is an error, retried as the SDK retries it", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0);
    const error = `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>x</Message></Error>`;
    const twoHundred = { type: "respond", status: 200, body: error } as const;
    await using rgw = await rgwBehindProxy({ client: "repeating" }, [
      { method: "GET", path: /list-type=2/, nth: 1, action: twoHundred },
      { method: "POST", action: twoHundred },
    ]);
    await rgw.direct.put("k", claim("k"));
    expect((await rgw.viaProxy.list("")).objects.map((o) => o.key)).toEqual(["k"]);
    expect(await rejection(rgw.viaProxy.deleteMany(["k"]))).toMatchObject({
      kind: "ambiguous",
      code: "InternalError",
    });
    expect(lists(rgw.proxy.requests).map((r) => r.action)).toEqual(["respond", "forward"]);
    expect(posts(rgw.proxy.requests)).toHaveLength(3);
  });

  it("an aborted signal is kind aborted for a listing and a batch delete, also while waiting", async () => {
    await using rgw = await rgwBehindProxy({ client: "single-attempt" }, [
      { method: ["GET", "POST"], action: { type: "delay", ms: 2_000 } },
    ]);
    const aborted = AbortSignal.abort();
    expect(await rejection(rgw.viaProxy.list("", { signal: aborted }))).toMatchObject({
      kind: "aborted",
    });
    expect(await rejection(rgw.viaProxy.deleteMany(["k"], { signal: aborted }))).toMatchObject({
      kind: "aborted",
    });
    const started = Date.now();
    expect(
      await rejection(rgw.viaProxy.list("", { signal: AbortSignal.timeout(100) })),
    ).toMatchObject({ kind: "aborted" });
    expect(
      await rejection(rgw.viaProxy.deleteMany(["k"], { signal: AbortSignal.timeout(100) })),
    ).toMatchObject({ kind: "aborted" });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("a missing bucket is refused and a wrong secret is auth, as on the SDK path", async () => {
    await using rgw = await rgwBehindProxy();
    const { createS3Store } = await import("../src/index.js");
    const noBucket = createS3Store({ ...rgw.options, bucket: "holdfast-no-such-bucket" });
    expect(await rejection(noBucket.list(""))).toMatchObject({
      kind: "refused",
      code: "NoSuchBucket",
    });
    expect(await rejection(noBucket.deleteMany(["k"]))).toMatchObject({
      kind: "refused",
      code: "NoSuchBucket",
    });
    const wrong = createS3Store({
      ...rgw.options,
      credentials: { accessKeyId: "nobody", secretAccessKey: "wrong" },
    });
    expect(await rejection(wrong.list(""))).toMatchObject({ kind: "auth", status: 403 });
    expect(await rejection(wrong.deleteMany(["k"]))).toMatchObject({ kind: "auth", status: 403 });
  });
});
