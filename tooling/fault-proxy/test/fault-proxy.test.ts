import { createServer, type IncomingHttpHeaders, request, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { azureError, gcsError, s3Error, slowDown, startFaultProxy } from "../src/index.js";

/** A tiny upstream that stores PUT bodies by path and records what it received. */
interface Upstream {
  url: string;
  objects: Map<string, string>;
  received: { method: string; path: string; headers: IncomingHttpHeaders; body: string }[];
  server: Server;
}

async function startUpstream(): Promise<Upstream> {
  const objects = new Map<string, string>();
  const received: Upstream["received"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString();
      const path = req.url ?? "/";
      received.push({ method: req.method ?? "", path, headers: req.headers, body });
      if (req.method === "PUT") {
        if (req.headers["if-none-match"] === "*" && objects.has(path)) {
          res.writeHead(412).end("exists");
          return;
        }
        objects.set(path, body);
        res.writeHead(200, { etag: '"e1"' }).end();
        return;
      }
      const value = objects.get(path);
      if (value === undefined) res.writeHead(404).end("missing");
      else if (req.method === "HEAD") res.writeHead(200, { "content-length": "5" }).end();
      else res.writeHead(200).end(value);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, objects, received, server };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function send(
  url: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

let upstream: Upstream;
beforeEach(async () => {
  upstream = await startUpstream();
});
afterEach(async () => {
  await new Promise((resolve) => upstream.server.close(resolve));
});

describe("startFaultProxy", () => {
  it("forwards requests untouched when no rule fires, and records them", async () => {
    await using proxy = await startFaultProxy({ target: upstream.url });
    expect((await send(proxy.url, "PUT", "/b/k", "hello")).status).toBe(200);
    const got = await send(proxy.url, "GET", "/b/k");
    expect(got).toMatchObject({ status: 200, body: "hello" });
    const head = await send(proxy.url, "HEAD", "/b/k");
    expect(head.headers["content-length"]).toBe("5");
    expect(proxy.requests.map((r) => [r.method, r.path, r.action, r.status])).toEqual([
      ["PUT", "/b/k", "forward", 200],
      ["GET", "/b/k", "forward", 200],
      ["HEAD", "/b/k", "forward", 200],
    ]);
    // Host is forwarded as the client sent it (SigV4 signs it).
    expect(upstream.received[0]?.headers.host).toBe(new URL(proxy.url).host);
  });

  it("drop-response applies the request upstream but loses the answer", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "PUT", action: { type: "drop-response" } }],
    });
    await expect(send(proxy.url, "PUT", "/b/k", "landed")).rejects.toThrow();
    expect(upstream.objects.get("/b/k")).toBe("landed");
    expect(proxy.requests[0]).toMatchObject({ action: "drop-response", status: 200 });
  });

  it("repeat sends the request to the store twice and answers the second copy's answer", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "PUT", withHeaders: ["if-none-match"], action: { type: "repeat" } }],
    });
    const answer = await send(proxy.url, "PUT", "/b/k", "mine", { "if-none-match": "*" });
    // The first copy created the object; the second met it and was refused.
    expect(answer.status).toBe(412);
    expect(upstream.objects.get("/b/k")).toBe("mine");
    expect(upstream.received.map((r) => [r.method, r.body, r.headers["if-none-match"]])).toEqual([
      ["PUT", "mine", "*"],
      ["PUT", "mine", "*"],
    ]);
    expect(proxy.requests[0]).toMatchObject({ action: "repeat", firstStatus: 200, status: 412 });
  });

  it("replace-response applies the request upstream and answers the replacement instead", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "PUT", action: gcsError(500, "backendError", { after: "forward" }) }],
    });
    const answer = await send(proxy.url, "PUT", "/b/k", "landed");
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: 500, errors: [{ reason: "backendError" }] },
    });
    expect(upstream.objects.get("/b/k")).toBe("landed");
    // The record keeps what the server really answered.
    expect(proxy.requests[0]).toMatchObject({ action: "replace-response", status: 200 });
  });

  it("truncate-response sends the full Content-Length, part of the body, then closes", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "GET", action: { type: "truncate-response", bytes: 4 } }],
    });
    await send(proxy.url, "PUT", "/b/k", "0123456789");
    const cut = new Promise<{ headers: IncomingHttpHeaders; received: string; error: unknown }>(
      (resolve) => {
        const req = request(`${proxy.url}/b/k`, { agent: false }, (res) => {
          let received = "";
          res.on("data", (c: Buffer) => {
            received += c.toString();
          });
          res.on("error", (error) => resolve({ headers: res.headers, received, error }));
          res.on("end", () => resolve({ headers: res.headers, received, error: undefined }));
        });
        req.end();
      },
    );
    const { headers, received, error } = await cut;
    expect(headers["content-length"]).toBe("10");
    expect(received).toBe("0123");
    expect(error).toMatchObject({ code: "ECONNRESET" });
    expect(proxy.requests.at(-1)).toMatchObject({ action: "truncate-response", status: 200 });
  });

  it("gcsError without `after` answers without forwarding", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "PUT", action: gcsError(429, "rateLimitExceeded") }],
    });
    const answer = await send(proxy.url, "PUT", "/b/k", "never");
    expect(answer.status).toBe(429);
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    expect(upstream.received).toHaveLength(0);
  });

  it("drop-request and reset never reach the upstream", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [
        { path: /^\/b\/dropped$/, action: { type: "drop-request" } },
        { path: /^\/b\/reset$/, action: { type: "reset" } },
      ],
    });
    await expect(send(proxy.url, "PUT", "/b/dropped", "x")).rejects.toThrow();
    await expect(send(proxy.url, "PUT", "/b/reset", "x")).rejects.toMatchObject({
      code: "ECONNRESET",
    });
    expect(upstream.received).toHaveLength(0);
  });

  it("answers S3-style errors without forwarding", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [
        { method: "PUT", nth: 1, action: s3Error(409, "ConditionalRequestConflict") },
        { method: "PUT", nth: 1, action: slowDown() },
      ],
    });
    const conflict = await send(proxy.url, "PUT", "/b/k", "x");
    expect(conflict.status).toBe(409);
    expect(conflict.body).toContain("<Code>ConditionalRequestConflict</Code>");
    // The second rule's first match was the same request: the first rule won it, so it
    // never fires; the second PUT goes through.
    expect((await send(proxy.url, "PUT", "/b/k", "y")).status).toBe(200);
    expect(upstream.received.map((r) => r.body)).toEqual(["y"]);
  });

  it("answers Azure-style errors with the code in the body and in x-ms-error-code", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "PUT", action: azureError(409, "BlobAlreadyExists") }],
    });
    const answer = await send(proxy.url, "PUT", "/container/blob", "x", { "if-none-match": "*" });
    expect(answer.status).toBe(409);
    expect(answer.headers["x-ms-error-code"]).toBe("BlobAlreadyExists");
    expect(answer.body).toContain("<Code>BlobAlreadyExists</Code>");
    expect(upstream.received).toHaveLength(0);
  });

  it("fires only on the nth matching request, at most `times` times, and only with the header", async () => {
    await using proxy = await startFaultProxy({ target: upstream.url });
    proxy.addRule({
      method: "put",
      withHeaders: ["If-None-Match"],
      nth: [2, 3],
      times: 1,
      action: { type: "respond", status: 503 },
    });
    const statuses: number[] = [];
    statuses.push((await send(proxy.url, "PUT", "/b/plain", "p")).status);
    for (const name of ["a", "b", "c"]) {
      const answer = await send(proxy.url, "PUT", `/b/${name}`, name, { "if-none-match": "*" });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([200, 200, 503, 200]);
    proxy.clearRules();
    expect((await send(proxy.url, "PUT", "/b/b", "b", { "if-none-match": "*" })).status).toBe(200);
  });

  it("strip-header forwards without the header and lets a hook re-sign", async () => {
    const resigned: string[] = [];
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [
        {
          withHeaders: ["if-none-match"],
          action: { type: "strip-header", headers: ["If-None-Match"] },
        },
      ],
      resign: ({ headers, body }) => {
        resigned.push(body.toString());
        return { ...headers, authorization: "re-signed" };
      },
    });
    await send(proxy.url, "PUT", "/b/k", "one");
    // The upstream would refuse this create-only put; without the header it overwrites.
    const second = await send(proxy.url, "PUT", "/b/k", "two", { "if-none-match": "*" });
    expect(second.status).toBe(200);
    expect(upstream.objects.get("/b/k")).toBe("two");
    expect(upstream.received[1]?.headers["if-none-match"]).toBeUndefined();
    expect(upstream.received[1]?.headers.authorization).toBe("re-signed");
    expect(resigned).toEqual(["two"]);
  });

  it("delay holds the request, then does the follow-up action", async () => {
    await using proxy = await startFaultProxy({
      target: upstream.url,
      rules: [{ method: "GET", action: { type: "delay", ms: 120 } }],
    });
    await send(proxy.url, "PUT", "/b/k", "v");
    const started = performance.now();
    expect((await send(proxy.url, "GET", "/b/k")).body).toBe("v");
    expect(performance.now() - started).toBeGreaterThanOrEqual(110);
    proxy.clearRules();
    proxy.addRule({ action: { type: "delay", ms: 10, next: { type: "respond", status: 500 } } });
    expect((await send(proxy.url, "GET", "/b/k")).status).toBe(500);
  });

  it("keeps an idle keep-alive connection open through an event-loop stall: the next request is answered, not reset", async () => {
    await using proxy = await startFaultProxy({ target: upstream.url });
    const { port } = new URL(proxy.url);
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    const closed = new Promise<string>((resolve) => {
      socket.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
      socket.on("close", () => resolve("closed"));
    });
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString();
    });
    const answers = async (n: number) => {
      while ((received.match(/missing/g) ?? []).length < n) {
        const ended = await Promise.race([closed, new Promise((r) => setTimeout(r, 5))]);
        if (typeof ended === "string") return ended;
      }
      return "answered";
    };
    const get = "GET /b/none HTTP/1.1\r\nHost: proxy\r\n\r\n";
    socket.write(get);
    expect(await answers(1)).toBe("answered");
    // The client reuses the connection (as an HTTP pool does) while this process is busy
    // for longer than the proxy's old 1 s keep-alive timeout (Node adds 1 s to it): the
    // request waits unread in the socket when the idle timer comes due.
    socket.write(get);
    const busyUntil = performance.now() + 2_500;
    while (performance.now() < busyUntil) {
      // a stalled event loop, as on a loaded machine
    }
    expect(await answers(2)).toBe("answered");
    expect(proxy.requests).toHaveLength(2);
    socket.destroy();
  });

  it("close() stops listening", async () => {
    const proxy = await startFaultProxy({ target: upstream.url });
    await proxy.close();
    await expect(send(proxy.url, "GET", "/b/k")).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("refuses a non-http target", async () => {
    await expect(startFaultProxy({ target: "https://example.invalid" })).rejects.toThrow(/http/);
  });
});
