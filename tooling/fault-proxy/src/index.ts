import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * What the proxy does with a request a rule fired on.
 * - `drop-response`: forward, let the server apply it, then destroy the client's socket
 *   instead of answering (the write landed, its answer is lost).
 * - `drop-request`: close the client's socket without forwarding (nothing was applied).
 * - `reset`: send a TCP RST to the client without forwarding.
 * - `respond`: answer with this status, headers and body without forwarding.
 * - `replace-response`: forward, let the server apply it, then answer with this status,
 *   headers and body instead of the server's answer (a write that landed but answered 500).
 * - `truncate-response`: forward, then send the server's status and headers (its full
 *   Content-Length included) with only the first `bytes` bytes of the body, and close the
 *   connection (an answer cut short in transit).
 * - `repeat`: forward the request, wait for the server's answer, forward the same request
 *   (same headers and body) a second time, and answer with the second answer: the request
 *   reached the store twice, as when an intermediary retries a request whose answer it lost
 *   (a create-only upload's second copy then answers 412 or 409).
 * - `delay`: wait, then do `next` (default: forward).
 * - `strip-header`: forward without these headers (e.g. `if-none-match`, to emulate a
 *   store that ignores create-only). Signed requests need the proxy's `resign` hook.
 */
export type FaultAction =
  | { readonly type: "drop-response" }
  | { readonly type: "drop-request" }
  | { readonly type: "reset" }
  | {
      readonly type: "respond";
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string;
    }
  | {
      readonly type: "replace-response";
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body?: string;
    }
  | { readonly type: "truncate-response"; readonly bytes: number }
  | { readonly type: "repeat" }
  | { readonly type: "delay"; readonly ms: number; readonly next?: FaultAction }
  | { readonly type: "strip-header"; readonly headers: readonly string[] };

/** When a rule fires. Every given criterion must hold; `nth` counts matching requests. */
export interface FaultRule {
  /** HTTP method(s), case-insensitive. @default any */
  readonly method?: string | readonly string[];
  /** Tested against the request target (path and query). @default any */
  readonly path?: RegExp;
  /** Header names (case-insensitive) the request must carry. @default none required */
  readonly withHeaders?: readonly string[];
  /** Header names the request must not carry. @default none */
  readonly withoutHeaders?: readonly string[];
  /** Fire only on these 1-based occurrences among requests matching the criteria above. @default every one */
  readonly nth?: number | readonly number[];
  /** Fire at most this many times. @default unlimited */
  readonly times?: number;
  readonly action: FaultAction;
}

/** One request the proxy saw, and what it did with it. */
export interface RecordedRequest {
  readonly method: string;
  /** Request target: path and query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** Type of the action applied, or `forward` when no rule fired. */
  readonly action: FaultAction["type"] | "forward";
  /** Status the upstream (or the proxy) answered; undefined when the client got none from it. */
  status?: number | undefined;
  /** For `repeat`: the status the server answered the first copy (the client never saw it). */
  firstStatus?: number | undefined;
}

/** Re-signs a request whose headers the proxy changed (e.g. AWS SigV4 covers `if-none-match`). */
export type RequestResigner = (request: {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}) => Promise<Record<string, string>> | Record<string, string>;

export interface FaultProxyOptions {
  /** Base URL of the real server, e.g. `http://127.0.0.1:7480`. */
  readonly target: string;
  /** Initial rules, tried in order; the first that fires decides. @default [] */
  readonly rules?: readonly FaultRule[];
  /** Called for requests whose headers a `strip-header` rule changed. @default none (forwarded as changed) */
  readonly resign?: RequestResigner;
  /** Port to listen on (127.0.0.1). @default 0 (any free port) */
  readonly port?: number;
}

/** A running proxy. Dispose it (`await using`) or call `close()`. */
export interface FaultProxy extends AsyncDisposable {
  /** Base URL clients should talk to, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Every request seen so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Adds a rule after the existing ones. */
  addRule(rule: FaultRule): void;
  /** Removes every rule: requests are forwarded untouched again. */
  clearRules(): void;
  /** Stops listening and destroys open connections. */
  close(): Promise<void>;
}

/**
 * Starts an HTTP proxy on 127.0.0.1 that forwards to `target` and injects the faults its
 * rules describe, so tests can lose answers of requests that really applied.
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  if (target.protocol !== "http:") {
    throw new Error(`fault-proxy forwards plain http only, got ${options.target}`);
  }
  const rules: RuleState[] = (options.rules ?? []).map(ruleState);
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch(() => destroyQuietly(req.socket));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // The proxy never closes an idle keep-alive connection before its client does. With a
  // short timeout (it was 1 s) a client's pool hands out a connection the proxy is closing:
  // when the event loop stalls past the timeout (a loaded machine, a busy bench process),
  // Node's timer destroys the socket with the next request already unread in it, and the
  // kernel answers that request with a reset. A POST (S3 DeleteObjects) is not retried by
  // most clients, so LanceDB's cleanup failed with "connection reset by peer". Clients drop
  // idle connections themselves (reqwest/hyper after 90 s); close() destroys what is left.
  server.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rule = firingRule(rules, req);
    let action: FaultAction | undefined = rule?.action;
    const record: RecordedRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: { ...req.headers },
      action: action?.type ?? "forward",
    };
    requests.push(record);
    const body = await readBody(req);
    while (action?.type === "delay") {
      const { ms, next } = action;
      await new Promise((resolve) => setTimeout(resolve, ms));
      action = next;
    }
    switch (action?.type) {
      case "drop-request":
        destroyQuietly(req.socket);
        return;
      case "reset":
        req.socket.resetAndDestroy();
        return;
      case "respond": {
        const payload = Buffer.from(action.body ?? "");
        record.status = action.status;
        res.writeHead(action.status, {
          "content-length": String(payload.byteLength),
          ...action.headers,
        });
        res.end(payload);
        return;
      }
      default:
        break;
    }
    let headers = forwardableHeaders(req.headers);
    if (action?.type === "strip-header") {
      const strip = new Set(action.headers.map((h) => h.toLowerCase()));
      headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !strip.has(k)));
      if (options.resign) {
        headers = await options.resign({
          method: record.method,
          path: record.path,
          headers,
          body,
        });
      }
    }
    if (action?.type === "repeat") {
      const first = await forward(target, record.method, record.path, headers, body);
      record.firstStatus = first instanceof Error ? undefined : first.status;
    }
    const upstream = await forward(target, record.method, record.path, headers, body);
    if (upstream instanceof Error) {
      // The server did not answer: the client sees its connection end, as it would.
      destroyQuietly(req.socket);
      return;
    }
    record.status = upstream.status;
    if (action?.type === "drop-response") {
      destroyQuietly(req.socket);
      return;
    }
    if (action?.type === "truncate-response") {
      res.writeHead(upstream.status, upstream.headers);
      // Flush the headers and the first bytes, then cut the connection mid-body.
      res.write(upstream.body.subarray(0, Math.min(action.bytes, upstream.body.byteLength)), () =>
        destroyQuietly(req.socket),
      );
      return;
    }
    if (action?.type === "replace-response") {
      // `status` keeps what the server answered; the client sees the replacement.
      const payload = Buffer.from(action.body ?? "");
      res.writeHead(action.status, {
        "content-length": String(payload.byteLength),
        ...action.headers,
      });
      res.end(payload);
      return;
    }
    res.writeHead(upstream.status, upstream.headers);
    res.end(upstream.body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const socket of sockets) socket.destroy();
    });
    return closed;
  };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    addRule: (rule) => {
      rules.push(ruleState(rule));
    },
    clearRules: () => {
      rules.length = 0;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Longer than any client's idle-connection timeout (reqwest and hyper: 90 s). */
const IDLE_KEEP_ALIVE_MS = 10 * 60_000;

/** An S3-style XML error body (`<Error><Code>…`), as S3 and RGW send. */
export function s3ErrorBody(code: string, message = ""): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${xml(code)}</Code><Message>${xml(message)}</Message><RequestId>fault-proxy</RequestId></Error>`;
}

/** An Azure-style XML error body (`<Error><Code>…`), with the `x-ms-error-code` header to send with it. */
export function azureErrorBody(code: string, message = ""): string {
  return `<?xml version="1.0" encoding="utf-8"?><Error><Code>${xml(code)}</Code><Message>${xml(message)}</Message></Error>`;
}

/** A `respond` action answering an S3 error (e.g. 409 `ConditionalRequestConflict`, 503 `SlowDown`). */
export function s3Error(status: number, code: string, message = ""): FaultAction {
  return {
    type: "respond",
    status,
    headers: { "content-type": "application/xml" },
    body: s3ErrorBody(code, message),
  };
}

/** A `respond` action answering an Azure Blob error (code in the body and in `x-ms-error-code`). */
export function azureError(status: number, code: string, message = ""): FaultAction {
  return {
    type: "respond",
    status,
    headers: { "content-type": "application/xml", "x-ms-error-code": code },
    body: azureErrorBody(code, message),
  };
}

/** A Google Cloud Storage JSON API error body (`{"error":{"code","message","errors"}}`). */
export function gcsErrorBody(status: number, reason: string, message = ""): string {
  return JSON.stringify({
    error: { code: status, message, errors: [{ domain: "global", reason, message }] },
  });
}

/**
 * A GCS JSON API error answer (e.g. 503 `backendError`, 429 `rateLimitExceeded`). As `respond`
 * by default; `{ after: "forward" }` makes it a `replace-response` (the request applied first).
 */
export function gcsError(
  status: number,
  reason: string,
  options: { message?: string; after?: "forward" } = {},
): FaultAction {
  return {
    type: options.after === "forward" ? "replace-response" : "respond",
    status,
    headers: { "content-type": "application/json; charset=UTF-8" },
    body: gcsErrorBody(status, reason, options.message ?? reason),
  };
}

/** A kind of write request, as the repeated-request contract names them. */
export type WriteKind = "create" | "if-match" | "put" | "conditional-delete" | "delete";

/** How a store's API marks a write's precondition: S3 and Azure by headers, GCS by query. */
export type StoreDialect = "s3" | "azure" | "gcs";

/**
 * A rule making every write of `kind` reach the store twice (`repeat`), for a client of
 * `dialect`: S3 and Azure send `If-None-Match: *` / `If-Match` on PUT and DELETE; the GCS
 * JSON API sends `ifGenerationMatch=0` (create) or `=<generation>` on objects.insert (POST
 * to `/upload/...`) and objects.delete.
 */
export function repeatWrites(dialect: StoreDialect, kind: WriteKind): FaultRule {
  const action: FaultAction = { type: "repeat" };
  if (dialect === "gcs") {
    const upload = "^/upload/storage/v1/b/[^/]+/o\\?";
    const object = "^/storage/v1/b/[^/]+/o/[^?]+";
    switch (kind) {
      case "create":
        return {
          method: "POST",
          path: new RegExp(`${upload}(?:.*&)?ifGenerationMatch=0(?:&|$)`),
          action,
        };
      case "if-match":
        return {
          method: "POST",
          path: new RegExp(`${upload}(?:.*&)?ifGenerationMatch=[1-9]\\d*(?:&|$)`),
          action,
        };
      case "put":
        return {
          method: "POST",
          path: new RegExp(`${upload}(?!(?:.*&)?ifGenerationMatch=)`),
          action,
        };
      case "conditional-delete":
        return {
          method: "DELETE",
          path: new RegExp(`${object}\\?(?:.*&)?ifGenerationMatch=`),
          action,
        };
      case "delete":
        return {
          method: "DELETE",
          path: new RegExp(`${object}(?!.*[?&]ifGenerationMatch=)`),
          action,
        };
    }
  }
  switch (kind) {
    case "create":
      return { method: "PUT", withHeaders: ["if-none-match"], action };
    case "if-match":
      return { method: "PUT", withHeaders: ["if-match"], action };
    case "put":
      return { method: "PUT", withoutHeaders: ["if-none-match", "if-match"], action };
    case "conditional-delete":
      return { method: "DELETE", withHeaders: ["if-match"], action };
    case "delete":
      return { method: "DELETE", withoutHeaders: ["if-match"], action };
  }
}

/** S3's throttling answer: 503 `SlowDown`. */
export function slowDown(): FaultAction {
  return s3Error(503, "SlowDown", "Please reduce your request rate.");
}

// --- utils ---

interface RuleState {
  readonly rule: FaultRule;
  matched: number;
  fired: number;
}

function ruleState(rule: FaultRule): RuleState {
  return { rule, matched: 0, fired: 0 };
}

/** Finds the first rule that fires on `req`, counting matches for every rule it meets. */
function firingRule(rules: readonly RuleState[], req: IncomingMessage): FaultRule | undefined {
  let firing: FaultRule | undefined;
  for (const state of rules) {
    if (!matches(state.rule, req)) continue;
    state.matched += 1;
    if (firing) continue;
    const { nth, times } = state.rule;
    if (nth !== undefined && !(typeof nth === "number" ? [nth] : nth).includes(state.matched)) {
      continue;
    }
    if (times !== undefined && state.fired >= times) continue;
    state.fired += 1;
    firing = state.rule;
  }
  return firing;
}

function matches(rule: FaultRule, req: IncomingMessage): boolean {
  if (rule.method !== undefined) {
    const methods = (typeof rule.method === "string" ? [rule.method] : rule.method).map((m) =>
      m.toUpperCase(),
    );
    if (!methods.includes((req.method ?? "GET").toUpperCase())) return false;
  }
  if (rule.path && !rule.path.test(req.url ?? "/")) return false;
  for (const name of rule.withHeaders ?? []) {
    if (req.headers[name.toLowerCase()] === undefined) return false;
  }
  for (const name of rule.withoutHeaders ?? []) {
    if (req.headers[name.toLowerCase()] !== undefined) return false;
  }
  return true;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

// Hop-by-hop headers belong to one connection; the rest (Host included: SigV4 signs it)
// go upstream unchanged.
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
]);

function forwardableHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

interface UpstreamAnswer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Sends the request upstream and buffers the whole answer (bodies in tests are small). */
function forward(
  target: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
): Promise<UpstreamAnswer | Error> {
  return new Promise((resolve) => {
    const outgoing = httpRequest(
      {
        host: target.hostname,
        port: target.port || 80,
        method,
        path,
        headers:
          headers["content-length"] === undefined && body.byteLength > 0
            ? { ...headers, "content-length": String(body.byteLength) }
            : headers,
        agent: false,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("end", () => {
          const responseHeaders: OutgoingHttpHeaders = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && !HOP_BY_HOP.has(name)) responseHeaders[name] = value;
          }
          const buffered = Buffer.concat(chunks);
          // HEAD (and 204/304) answers describe a body they do not carry: keep their length.
          if (method !== "HEAD" && answer.statusCode !== 204 && answer.statusCode !== 304) {
            responseHeaders["content-length"] = String(buffered.byteLength);
          }
          resolve({ status: answer.statusCode ?? 502, headers: responseHeaders, body: buffered });
        });
        answer.on("error", (error) => resolve(error));
      },
    );
    outgoing.on("error", (error) => resolve(error));
    // GET/HEAD/DELETE without a body must not grow one; an empty buffer writes nothing.
    outgoing.end(body);
  });
}

function destroyQuietly(socket: Socket): void {
  if (!socket.destroyed) socket.destroy();
}

function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
