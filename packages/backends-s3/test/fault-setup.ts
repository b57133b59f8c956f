import { createHash, createHmac } from "node:crypto";
import type { ObjectStore, ResolveOptions } from "@holdfast/conditional-store";
import { type FaultRule, type RequestResigner, startFaultProxy } from "@holdfast/fault-proxy";
import { SignatureV4 } from "@smithy/signature-v4";
import { createS3Store, type S3StoreOptions } from "../src/index.js";
import { rgwEnv, rgwOptions } from "./rgw-env.js";

/** Short pauses so fault tests re-issue quickly; four re-issues, as in production. */
export const fast: ResolveOptions = { policy: { pausesMs: [10, 10, 10, 10] } };

/** SHA-256 / HMAC-SHA-256 in the shape SignatureV4 expects. */
class NodeSha256 {
  readonly #hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.#hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === "string") return data;
  if (ArrayBuffer.isView(data))
    return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/**
 * Signs a request again after the proxy changed its headers: SigV4 covers `If-None-Match`,
 * so a stripped header would otherwise be refused as SignatureDoesNotMatch.
 */
export function sigV4Resigner(): RequestResigner {
  const env = rgwEnv();
  const signer = new SignatureV4({
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
    region: env.region,
    service: "s3",
    sha256: NodeSha256,
    // S3 signs the path as sent (already percent-encoded once by the SDK).
    uriEscapePath: false,
  });
  return async ({ method, path, headers, body }) => {
    const url = new URL(path, "http://unused");
    const query: Record<string, string> = {};
    url.searchParams.forEach((value, name) => {
      query[name] = value;
    });
    const { authorization: _, "x-amz-date": __, ...unsigned } = headers;
    const [hostname = "127.0.0.1", port] = (headers.host ?? "").split(":");
    const signed = await signer.sign({
      method,
      protocol: "http:",
      hostname,
      ...(port === undefined ? {} : { port: Number(port) }),
      path: url.pathname,
      query,
      headers: unsigned,
      body,
    });
    return signed.headers;
  };
}

/** A fault proxy in front of RGW plus two stores on one fresh prefix: through the proxy, and direct. */
export async function rgwBehindProxy(
  overrides: Partial<S3StoreOptions> = {},
  rules: FaultRule[] = [],
): Promise<{
  proxy: Awaited<ReturnType<typeof startFaultProxy>>;
  options: S3StoreOptions;
  viaProxy: ObjectStore;
  direct: ObjectStore;
  [Symbol.asyncDispose]: () => Promise<void>;
}> {
  const env = rgwEnv();
  const proxy = await startFaultProxy({ target: env.endpoint, rules, resign: sigV4Resigner() });
  // RGW's facts, as openS3Store's probe finds them (asserted in s3.test.ts).
  const options = rgwOptions({
    client: "single-attempt",
    quoteIfMatch: false,
    conditionalDelete: false,
    ...overrides,
    endpoint: proxy.url,
  });
  const direct = createS3Store({ ...options, endpoint: env.endpoint, client: "single-attempt" });
  return {
    proxy,
    options,
    viaProxy: createS3Store(options),
    direct,
    [Symbol.asyncDispose]: async () => {
      await proxy.close();
      await emptyStore(direct);
    },
  };
}

/** Deletes everything under the store's prefix (test cleanup). */
export async function emptyStore(store: ObjectStore): Promise<void> {
  const keys = (await store.list("")).objects.map((o) => o.key);
  if (keys.length > 0) await store.deleteMany(keys);
}

const encoder = new TextEncoder();

/** Bytes that name their writer, as every exclusive claim must (docs/guarantees.md, conditional requests). */
export function claim(writer: string): Uint8Array {
  return encoder.encode(JSON.stringify({ writer }));
}
