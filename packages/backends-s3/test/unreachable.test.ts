import { createServer, type Server, type Socket } from "node:net";
import { UNREACHABLE_HINT } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import { createS3Store } from "../src/index.js";
import { rejection } from "./rejection.js";

// A wrong endpoint is a refusal, not an unknown outcome: nothing reached the store
// (docs/guarantees.md: an unknown outcome is reported as unknown, and only then).

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A port whose first connection is reset once its request arrived; then nothing listens. */
async function resetOnceThenClose(): Promise<number> {
  const server = createServer((socket: Socket) => {
    socket.once("data", () => {
      socket.destroy();
      server.close();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

const credentials = { accessKeyId: "k", secretAccessKey: "s" };

function storeAt(port: number, client: "repeating" | "single-attempt") {
  return createS3Store({
    bucket: "holdfast-test",
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    region: "us-east-1",
    credentials,
    client,
  });
}

describe("a connection refused before anything was sent", () => {
  for (const client of ["repeating", "single-attempt"] as const) {
    it(`${client}: put (the SDK), get and list (signed requests) and delete are refused with the endpoint hint`, async () => {
      const store = storeAt(await closedPort(), client);
      for (const attempt of [
        () => store.put("a", new Uint8Array(1), { precondition: { ifNoneMatch: "*" } }),
        () => store.get("a"),
        () => store.head("a"),
        () => store.list(""),
        () => store.delete("a"),
      ]) {
        const error = await rejection(attempt());
        expect(error).toMatchObject({
          kind: "refused",
          code: "ECONNREFUSED",
          hint: UNREACHABLE_HINT,
        });
        expect(String(error.message)).toMatch(/could not connect/);
      }
    });
  }

  it("a host name that does not resolve is refused too", async () => {
    const store = createS3Store({
      bucket: "holdfast-test",
      endpoint: "http://holdfast-no-such-host.invalid:7480",
      forcePathStyle: true,
      credentials,
      client: "single-attempt",
    });
    const error = await rejection(
      store.put("a", new Uint8Array(1), { precondition: { ifNoneMatch: "*" } }),
    );
    expect(error).toMatchObject({ kind: "refused", hint: UNREACHABLE_HINT });
    expect(["ENOTFOUND", "EAI_AGAIN"]).toContain(error.code);
  });

  it("an attempt that connected and was reset, then a retry refused: the outcome stays unknown (the first may have applied)", async () => {
    // Accepts one connection, reads the request, destroys the socket, and stops listening:
    // the SDK's retry then finds the port closed.
    let server: Server | undefined;
    const port = await new Promise<number>((resolve) => {
      server = createServer((socket: Socket) => {
        socket.once("data", () => {
          socket.destroy();
          server!.close();
        });
      });
      server.listen(0, "127.0.0.1", () => resolve((server!.address() as { port: number }).port));
    });
    const store = storeAt(port, "repeating");
    const put = await rejection(
      store.put("a", new Uint8Array(1), { precondition: { ifNoneMatch: "*" } }),
    );
    expect(put.kind).toBe("ambiguous");
    expect(put.hint).not.toBe(UNREACHABLE_HINT);
    // The signed path's own retry loop keeps the same rule.
    const get = await rejection(storeAt(await resetOnceThenClose(), "repeating").get("a"));
    expect(get.kind).toBe("ambiguous");
  });

  it("a reset after connecting on a single attempt stays unknown", async () => {
    const server = createServer((socket: Socket) => socket.once("data", () => socket.destroy()));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const store = storeAt(port, "single-attempt");
      const put = await rejection(
        store.put("a", new Uint8Array(1), { precondition: { ifNoneMatch: "*" } }),
      );
      expect(put.kind).toBe("ambiguous");
      const get = await rejection(store.get("a"));
      expect(get.kind).toBe("ambiguous");
    } finally {
      server.close();
    }
  });
});
