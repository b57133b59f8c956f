// Reads of one object (GetObject, HeadObject), listing pages (ListObjectsV2) and batch deletes
// (DeleteObjects), each as one SigV4-signed node:http request without the SDK's middleware
// stack (README, "Reads and listings"). What is sent, how it is signed and whether it
// is sent again all come from the store's own S3Client: its endpoint rules (with the
// configured `endpoint` and `forcePathStyle`), its credential provider and hash, its clock
// offset, its retry strategy and `maxAttempts`. This module carries the bytes and presents
// every failure as the SDK does (`name` = S3's error code, `$metadata.httpStatusCode`), so
// `toHoldfastError` (errors.ts) stays the one mapping.
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { crc32 } from "node:zlib";
import { GetObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { connectFailureCode, markNothingSent } from "@holdfast/conditional-store";
import { getEndpointFromInstructions } from "@smithy/core/endpoints";
import { extendedEncodeURIComponent } from "@smithy/core/protocols";
import {
  getRetryAfterHint,
  isServerError,
  isThrottlingError,
  isTransientError,
} from "@smithy/core/retry";
import { SignatureV4 } from "@smithy/signature-v4";

/** How long a read may take, as the SDK's request handler is configured. */
export interface ReadTimeouts {
  /** From sending until the answer's headers; then the longest pause inside its body. */
  readonly requestTimeoutMs: number;
  /** Until a new connection is established. */
  readonly connectionTimeoutMs: number;
}

/** A 2xx answer to a GET or HEAD. */
export interface ReadAnswer {
  /** The whole body (empty for HEAD). */
  readonly body: Uint8Array;
  readonly etag: string | undefined;
  readonly lastModified: Date | undefined;
  /** Content-Length as answered (for HEAD: the object's size). */
  readonly size: number;
}

/**
 * The signed read path for `bucket` through `client`, or `undefined` when it cannot send
 * exactly what the SDK would: an endpoint whose auth scheme is not plain SigV4 for `s3`
 * (S3 Express, multi-region access points), extra endpoint headers, a URL with a query,
 * a custom retry strategy of the old kind, or any failure while resolving (the SDK path then
 * reports that failure itself). Resolved once per store: S3's endpoint rules depend on the
 * bucket and the client's configuration, never on the key.
 */
export async function signedReads(
  client: S3Client,
  bucket: string,
  timeouts: ReadTimeouts,
): Promise<SignedReads | undefined> {
  try {
    const config = client.config;
    const strategy: unknown = await config.retryStrategy();
    if (!isRetryStrategy(strategy) || typeof config.credentials !== "function") return undefined;
    // A copy, as the SDK's endpoint middleware passes one: resolving may adopt an endpoint
    // configured in the environment (AWS_ENDPOINT_URL_S3) on the config it is given.
    const endpoint = await getEndpointFromInstructions({ Bucket: bucket }, GetObjectCommand, {
      ...config,
    });
    const scheme = endpoint.properties?.authSchemes?.[0] as
      | {
          name?: unknown;
          signingName?: unknown;
          signingRegion?: unknown;
          disableDoubleEncoding?: unknown;
        }
      | undefined;
    const url = endpoint.url;
    if (
      scheme?.name !== "sigv4" ||
      scheme.signingName !== "s3" ||
      typeof scheme.signingRegion !== "string" ||
      // S3 signs the path as sent (encoded once); anything else is the SDK's to handle.
      scheme.disableDoubleEncoding !== true ||
      (endpoint.headers !== undefined && Object.keys(endpoint.headers).length > 0) ||
      (url.protocol !== "http:" && url.protocol !== "https:") ||
      url.search !== "" ||
      url.hash !== "" ||
      url.username !== "" ||
      url.password !== ""
    ) {
      return undefined;
    }
    return new SignedReads(client, strategy, url, scheme.signingRegion, timeouts);
  } catch {
    return undefined;
  }
}

export class SignedReads {
  readonly #config: S3Client["config"];
  readonly #strategy: RetryStrategy;
  readonly #signer: SignatureV4;
  readonly #signingRegion: string;
  readonly #protocol: "http:" | "https:";
  readonly #hostname: string;
  readonly #port: number | undefined;
  readonly #host: string;
  readonly #basePath: string;
  readonly #agent: HttpAgent;
  readonly #send: (options: RequestOptions) => ClientRequest;
  readonly #timeouts: ReadTimeouts;

  constructor(
    client: S3Client,
    strategy: RetryStrategy,
    url: URL,
    signingRegion: string,
    timeouts: ReadTimeouts,
  ) {
    this.#config = client.config;
    this.#strategy = strategy;
    this.#signingRegion = signingRegion;
    this.#signer = new SignatureV4({
      credentials: client.config.credentials,
      region: signingRegion,
      service: "s3",
      sha256: client.config.sha256,
      // The key is encoded once, below, and signed as sent.
      uriEscapePath: false,
    });
    this.#protocol = url.protocol as "http:" | "https:";
    // An IPv6 host is bracketed in a URL, bare for a socket.
    this.#hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    this.#port = url.port === "" ? undefined : Number(url.port);
    // The Host header as signed: the port only when it is not the scheme's default.
    this.#host = url.host;
    this.#basePath = url.pathname.endsWith("/") ? url.pathname.slice(0, -1) : url.pathname;
    // As the SDK's handler: keep-alive connections, at most 50 per origin.
    const agentOptions = { keepAlive: true, maxSockets: 50 };
    if (this.#protocol === "https:") {
      this.#agent = new HttpsAgent(agentOptions);
      this.#send = httpsRequest;
    } else {
      this.#agent = new HttpAgent(agentOptions);
      this.#send = httpRequest;
    }
    this.#timeouts = timeouts;
  }

  /** The URL a read of `key` is sent to (path segments encoded as the SDK encodes `{Key+}`). */
  url(key: string): string {
    return `${this.#protocol}//${this.#host}${this.#path(key)}`;
  }

  /**
   * GET or HEAD `key`: a 2xx answer, else throws an SDK-shaped error. Failures the client's
   * retry strategy calls transient or throttling (5xx, 503 SlowDown, 429, timeouts, resets,
   * a cut body) are sent again while it allows (its `maxAttempts`, its backoff): a read
   * changes nothing, so a repeat is always safe.
   */
  read(method: "GET" | "HEAD", key: string, signal?: AbortSignal): Promise<ReadAnswer> {
    return this.#request({ method, path: this.#path(key), query: {} }, signal);
  }

  /**
   * One ListObjectsV2 page (README, "Reads and listings"): the XML of a 2xx answer, sent with
   * the query parameters the SDK sends (no `encoding-type`: keys come back XML-escaped).
   * Retried as a read.
   */
  async listObjectsV2(
    params: {
      readonly prefix: string;
      readonly maxKeys: number;
      readonly continuationToken?: string | undefined;
      readonly startAfter?: string | undefined;
    },
    signal?: AbortSignal,
  ): Promise<string> {
    const query: Record<string, string> = {
      "list-type": "2",
      prefix: params.prefix,
      "max-keys": String(params.maxKeys),
    };
    if (params.continuationToken !== undefined) {
      query["continuation-token"] = params.continuationToken;
    }
    if (params.startAfter !== undefined) query["start-after"] = params.startAfter;
    const answer = await this.#request(
      { method: "GET", path: `${this.#basePath}/`, query, xml: true },
      signal,
    );
    return utf8.decode(answer.body);
  }

  /**
   * One DeleteObjects request (`POST ?delete`) with `body` (a `<Delete>` document): the XML of
   * a 2xx answer. S3 requires a checksum of the body; this sends the one the SDK sends with
   * `requestChecksumCalculation: "WHEN_REQUIRED"` (CRC32 in `x-amz-checksum-crc32`, named in
   * `x-amz-sdk-checksum-algorithm`). DeleteObjects carries no condition and deleting an
   * absent key succeeds, so sending it again is as safe as a read (README, "Reads and
   * listings"): it is retried by the client's strategy as the SDK path retries it.
   */
  async deleteObjects(body: string, signal?: AbortSignal): Promise<string> {
    const bytes = Buffer.from(body, "utf8");
    const checksum = Buffer.alloc(4);
    checksum.writeUInt32BE(crc32(bytes));
    const answer = await this.#request(
      {
        method: "POST",
        path: `${this.#basePath}/`,
        query: { delete: "" },
        headers: {
          "content-type": "application/xml",
          "content-length": String(bytes.byteLength),
          "x-amz-sdk-checksum-algorithm": "CRC32",
          "x-amz-checksum-crc32": checksum.toString("base64"),
        },
        body: bytes,
        xml: true,
      },
      signal,
    );
    return utf8.decode(answer.body);
  }

  async #request(request: OutgoingRequest, signal?: AbortSignal): Promise<ReadAnswer> {
    const strategy = this.#strategy;
    let token = await untilAborted(strategy.acquireInitialRetryToken(""), signal);
    // Whether some attempt may have reached the store (anything but a failed connect).
    let maybeSent = false;
    for (;;) {
      try {
        const answer = await this.#attempt(request, signal);
        strategy.recordSuccess(token);
        return answer;
      } catch (error) {
        if (signal?.aborted) throw abortError(signal);
        const failure = error as ReadError;
        if (connectFailureCode(failure) === undefined) maybeSent = true;
        try {
          token = await untilAborted(
            strategy.refreshRetryTokenForRetry(token, retryErrorInfo(failure)),
            signal,
          );
        } catch {
          // The strategy refused another attempt (not retryable, attempts or capacity spent).
          if (signal?.aborted) throw abortError(signal);
          if (failure.$metadata !== undefined) {
            failure.$metadata.attempts = token.getRetryCount() + 1;
          }
          if (!maybeSent) markNothingSent(failure);
          throw failure;
        }
        const delay = token.getRetryDelay();
        if (delay > 0) await untilAborted(sleep(delay), signal);
      }
    }
  }

  #path(key: string): string {
    return `${this.#basePath}/${key.split("/").map(extendedEncodeURIComponent).join("/")}`;
  }

  async #attempt(request: OutgoingRequest, signal?: AbortSignal): Promise<ReadAnswer> {
    if (signal?.aborted) throw abortError(signal);
    const { method, path, query } = request;
    const config = this.#config;
    const offsetBefore = config.systemClockOffset ?? 0;
    const signed = await this.#signer.sign(
      {
        method,
        protocol: this.#protocol,
        hostname: this.#hostname,
        ...(this.#port === undefined ? {} : { port: this.#port }),
        path,
        query,
        headers: { ...request.headers, host: this.#host },
        ...(request.body === undefined ? {} : { body: request.body }),
      },
      { signingDate: new Date(Date.now() + offsetBefore), signingRegion: this.#signingRegion },
    );
    const sentAt = Date.now();
    try {
      return await this.#exchange(request, signed.headers, signal);
    } catch (error) {
      this.#correctClock(error as ReadError, offsetBefore, sentAt);
      throw error;
    }
  }

  /**
   * The SDK's clock-skew correction: an error answer carries the server's Date; the client's
   * offset follows it, and an error whose skew this corrected (4 minutes or more) becomes
   * retryable (S3 refuses signatures more than 15 minutes off).
   */
  #correctClock(error: ReadError, offsetBefore: number, sentAt: number): void {
    const date = error.$response?.headers.date;
    if (typeof date !== "string" || error.$response?.headers.age !== undefined) return;
    const serverTime = Date.parse(date);
    const now = Date.now();
    if (Number.isNaN(serverTime) || now - sentAt > 900_000) return;
    const offset = serverTime - now;
    this.#config.systemClockOffset = offset;
    if (Math.abs(offset) >= 240_000 && offset !== offsetBefore && error.$metadata !== undefined) {
      error.$metadata.clockSkewCorrected = true;
    }
  }

  /** One request and its whole answer. */
  #exchange(
    outgoing: OutgoingRequest,
    headers: Record<string, string>,
    signal: AbortSignal | undefined,
  ): Promise<ReadAnswer> {
    const { requestTimeoutMs, connectionTimeoutMs } = this.#timeouts;
    const { method } = outgoing;
    const search = queryString(outgoing.query);
    const path = search === "" ? outgoing.path : `${outgoing.path}?${search}`;
    return new Promise<ReadAnswer>((resolve, reject) => {
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      let answered: IncomingMessage | undefined;
      const settle = (error: unknown, answer?: ReadAnswer) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        clearTimeout(connectTimer);
        signal?.removeEventListener("abort", onAbort);
        if (answer === undefined) {
          // A connection with an answer (or a request) still on it is never reused; one whose
          // error answer arrived whole has gone back to the pool already.
          if (answered?.complete !== true) request.destroy();
          reject(error);
        } else {
          resolve(answer);
        }
      };
      const onAbort = () => settle(abortError(signal!));
      // Until the headers: the SDK's request timeout. In the body: re-armed by every chunk,
      // so a body that stalls fails and one that keeps arriving does not.
      const deadline = setTimeout(() => {
        settle(
          timeoutError(
            answered !== undefined
              ? `the answer's body paused for more than ${requestTimeoutMs} ms`
              : `no answer within the request timeout of ${requestTimeoutMs} ms`,
          ),
        );
      }, requestTimeoutMs);

      const request = this.#send({
        method,
        protocol: this.#protocol,
        hostname: this.#hostname,
        ...(this.#port === undefined ? {} : { port: this.#port }),
        path,
        headers,
        agent: this.#agent,
      });
      request.once("socket", (socket) => {
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => {
          settle(
            Object.assign(new Error(`no connection within ${connectionTimeoutMs} ms`), {
              name: "TimeoutError",
            }),
          );
        }, connectionTimeoutMs);
        socket.once("connect", () => clearTimeout(connectTimer));
      });
      // Stays attached after settling: destroying the request may still emit one.
      request.on("error", (error) => settle(error));
      request.once("response", (response: IncomingMessage) => {
        answered = response;
        deadline.refresh();
        readAnswer(method, response, () => deadline.refresh(), outgoing.xml === true).then(
          (answer) => settle(undefined, answer),
          (error: unknown) => settle(error),
        );
      });
      if (signal !== undefined) signal.addEventListener("abort", onAbort, { once: true });
      request.end(outgoing.body);
    });
  }
}

/** What one signed request sends. */
interface OutgoingRequest {
  readonly method: "GET" | "HEAD" | "POST";
  /** Encoded once, as sent and signed. */
  readonly path: string;
  /** Unencoded; encoded for sending as the signer encodes it for the signature. */
  readonly query: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  /** The answer is an XML document (a listing, a DeleteObjects result), not an object. */
  readonly xml?: boolean;
}

const utf8 = new TextDecoder();

/** `name=value` pairs, sorted and percent-encoded as SigV4's canonical query string. */
function queryString(query: Readonly<Record<string, string>>): string {
  return Object.keys(query)
    .sort()
    .map(
      (name) => `${extendedEncodeURIComponent(name)}=${extendedEncodeURIComponent(query[name]!)}`,
    )
    .join("&");
}

// --- answers ---

/** An SDK-shaped failure: what `toHoldfastError` and the SDK's retry classification read. */
type ReadError = Error & {
  code?: string;
  $fault?: "client" | "server";
  $retryable?: { throttling?: boolean };
  $metadata?: {
    httpStatusCode?: number;
    requestId?: string;
    attempts?: number;
    clockSkewCorrected?: boolean;
  };
  $response?: { statusCode: number; headers: IncomingHttpHeaders };
};

/** At most this much of an error body is kept: enough for any S3 error document. */
const ERROR_BODY_LIMIT = 64 * 1024;

/**
 * Reads the whole answer. A 2xx GET must carry its length (Content-Length, or chunked
 * framing) and deliver exactly that many bytes: a body cut short by a closed connection is
 * an error, never a short object.
 */
function readAnswer(
  method: "GET" | "HEAD" | "POST",
  response: IncomingMessage,
  onChunk: () => void,
  xml: boolean,
): Promise<ReadAnswer> {
  return new Promise<ReadAnswer>((resolve, reject) => {
    const status = response.statusCode ?? 0;
    const ok = status >= 200 && status < 300;
    const headers = response.headers;
    const declared = contentLength(headers["content-length"]);
    const framed =
      declared !== undefined || /\bchunked\b/i.test(headers["transfer-encoding"] ?? "");
    if (ok && method !== "HEAD" && !framed) {
      response.destroy();
      reject(incompleteBody("the answer carried neither Content-Length nor chunked framing"));
      return;
    }
    // A 2xx GET with a known length is read into one buffer of exactly that size.
    const exact =
      ok && method !== "HEAD" && declared !== undefined ? new Uint8Array(declared) : undefined;
    const chunks: Buffer[] = [];
    let received = 0;
    let ended = false;
    response.on("data", (chunk: Buffer) => {
      onChunk();
      if (exact !== undefined) {
        if (received + chunk.byteLength > exact.byteLength) {
          response.destroy(incompleteBody(`more than the ${exact.byteLength} bytes announced`));
          return;
        }
        exact.set(chunk, received);
      } else if (ok || received < ERROR_BODY_LIMIT) {
        chunks.push(chunk);
      }
      received += chunk.byteLength;
    });
    response.once("end", () => {
      ended = true;
      if (method !== "HEAD" && declared !== undefined && received !== declared) {
        reject(incompleteBody(`${received} of ${declared} announced bytes`));
      } else if (!ok) {
        reject(serviceError(status, headers, Buffer.concat(chunks).toString("utf8")));
      } else {
        const body = exact ?? (chunks.length === 0 ? new Uint8Array(0) : concat(chunks, received));
        if (xml && errorDocument(body)) {
          // As the SDK's S3 middleware: a 2xx whose body is an S3 error document is an error
          // answer, presented as a 503 (so the retry strategy may send it again).
          reject(serviceError(503, headers, utf8.decode(body)));
          return;
        }
        const modified = headers["last-modified"];
        const lastModified = modified === undefined ? undefined : new Date(modified);
        resolve({
          body,
          etag: headers.etag,
          lastModified:
            lastModified === undefined || Number.isNaN(lastModified.getTime())
              ? undefined
              : lastModified,
          size: method !== "HEAD" ? received : (declared ?? 0),
        });
      }
    });
    response.once("error", (error) => reject(incompleteBody(error.message, error)));
    // A connection closed before the body's end: the answer is incomplete, whatever arrived.
    response.once("close", () => {
      if (!ended) reject(incompleteBody(`the connection closed after ${received} bytes`));
    });
  });
}

/** The body ends with `</Error>`: the test the SDK's S3 middleware applies to 2xx answers. */
function errorDocument(body: Uint8Array): boolean {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    .subarray(-16)
    .toString("latin1")
    .endsWith("</Error>");
}

function contentLength(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}

function concat(chunks: readonly Buffer[], total: number): Uint8Array {
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

/**
 * An S3 error answer as the SDK presents it. `toHoldfastError` reads only the error's name
 * (S3's `<Code>`) and the status, never `<Message>` (README, "Errors"), so the code is all
 * this takes from the XML: error codes are plain words, and a body without one (HEAD
 * answers have none, proxies send HTML) is named as the SDK names it, `NotFound` for a 404,
 * else `Unknown`.
 */
function serviceError(status: number, headers: IncomingHttpHeaders, body: string): ReadError {
  const code = /<Code>([^<]{1,256})<\/Code>/.exec(body)?.[1]?.trim() || undefined;
  const name = code ?? (status === 404 ? "NotFound" : "Unknown");
  const requestId = headers["x-amz-request-id"];
  return Object.assign(new Error(`${name} (HTTP ${status})`), {
    name,
    $fault: status < 500 ? ("client" as const) : ("server" as const),
    $metadata: {
      httpStatusCode: status,
      ...(typeof requestId === "string" ? { requestId } : {}),
    },
    $response: { statusCode: status, headers },
  });
}

/** A body that did not arrive whole; retryable (a read can always be repeated). */
function incompleteBody(why: string, cause?: unknown): ReadError {
  return Object.assign(new Error(`incomplete body: ${why}`, { cause }), {
    name: "IncompleteBody",
    $retryable: { throttling: false },
  });
}

/** The SDK handler's timeout error (retryable as `TimeoutError`). */
function timeoutError(message: string): ReadError {
  return Object.assign(new Error(message), { name: "TimeoutError", code: "ETIMEDOUT" });
}

function abortError(signal: AbortSignal): Error {
  const error = new Error("the caller aborted the request", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

// --- retries ---

type RetryErrorType = "THROTTLING" | "TRANSIENT" | "SERVER_ERROR" | "CLIENT_ERROR";

interface RetryToken {
  getRetryCount(): number;
  getRetryDelay(): number;
}

/** The client's retry strategy (the SDK's standard or adaptive one): the SDK path's own. */
interface RetryStrategy {
  acquireInitialRetryToken(scope: string): Promise<RetryToken>;
  refreshRetryTokenForRetry(
    token: RetryToken,
    info: { error: unknown; errorType: RetryErrorType; retryAfterHint?: Date },
  ): Promise<RetryToken>;
  recordSuccess(token: RetryToken): void;
}

function isRetryStrategy(value: unknown): value is RetryStrategy {
  const s = value as Partial<RetryStrategy> | null;
  return (
    typeof s?.acquireInitialRetryToken === "function" &&
    typeof s.refreshRetryTokenForRetry === "function" &&
    typeof s.recordSuccess === "function"
  );
}

/** Classifies a failure with the SDK's own tests, in the order its retry middleware applies them. */
function retryErrorInfo(error: ReadError): {
  error: unknown;
  errorType: RetryErrorType;
  retryAfterHint?: Date;
} {
  const e = error as Parameters<typeof isTransientError>[0];
  const errorType: RetryErrorType = isThrottlingError(e)
    ? "THROTTLING"
    : isTransientError(e)
      ? "TRANSIENT"
      : isServerError(e)
        ? "SERVER_ERROR"
        : "CLIENT_ERROR";
  const retryAfterHint =
    error.$response === undefined ? undefined : getRetryAfterHint(error.$response);
  return retryAfterHint === undefined ? { error, errorType } : { error, errorType, retryAfterHint };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `promise`, or an AbortError as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
