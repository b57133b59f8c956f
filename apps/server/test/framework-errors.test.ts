import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ProblemShape } from "@holdfast/api-shapes";
import { createLocalStore } from "@holdfast/backends-local";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, freshStore, seedDataset, testServer } from "./support.js";

const WEB = fileURLToPath(new URL("../dist/web", import.meta.url));

/** Asserts an answer is an RFC 9457 problem document with this status. */
function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
  status: number,
) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
  const problem = ProblemShape.parse(JSON.parse(res.body));
  expect(problem.status).toBe(status);
  return problem;
}

describe("path parameters up to the documented name length (128)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  for (const length of [101, 128]) {
    it(`P1 a tag, a branch and a dataset named with ${length} characters are reached by every path route`, async () => {
      const root = await mkdtemp(join(tmpdir(), "holdfast-names-"));
      cleanups.push(() => rm(root, { recursive: true, force: true }));
      const dataset = `d${"s".repeat(length - 1)}`;
      const store = createLocalStore({ root, createRoot: true });
      await seedDataset(store, 2);
      // With the dashboard's wildcard route too: a too long parameter must not fall into it.
      const app = await testServer([{ name: dataset, store }], { dashboardDir: WEB });
      cleanups.push(() => app.close());
      const api = `/v1/datasets/${dataset}`;
      const name = `t${"x".repeat(length - 1)}`;
      const versions = await app.inject({ url: `${api}/versions`, headers: as("reader") });
      expect(versions.statusCode, versions.body).toBe(200);
      const created = await app.inject({
        method: "POST",
        url: `${api}/tags`,
        headers: as("writer"),
        payload: { name, version: 1 },
      });
      expect(created.statusCode, created.body).toBe(201);
      const moved = await app.inject({
        method: "PUT",
        url: `${api}/tags/${name}`,
        headers: as("writer"),
        payload: { version: 2 },
      });
      expect(moved.statusCode, moved.body).toBe(200);
      const deleted = await app.inject({
        method: "DELETE",
        url: `${api}/tags/${name}`,
        headers: as("writer"),
      });
      expect(deleted.statusCode, deleted.body).toBe(200);
      const branch = await app.inject({
        method: "POST",
        url: `${api}/branches`,
        headers: as("writer"),
        payload: { name, from: { version: 1 } },
      });
      expect(branch.statusCode, branch.body).toBe(201);
      const gone = await app.inject({
        method: "DELETE",
        url: `${api}/branches/${name}`,
        headers: as("writer"),
      });
      expect(gone.statusCode, gone.body).toBe(200);
    });
  }
});

describe("every error is a problem document, framework errors included", () => {
  let app: ZodApp;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshStore("local");
    dispose = fresh.dispose;
    await seedDataset(fresh.store, 1);
    app = await testServer([{ name: "ds", store: fresh.store }], { dashboardDir: WEB });
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  it("P2 malformed percent-encoding in a path (%ff) is a 400 problem", async () => {
    const res = await app.inject({ url: "/v1/datasets/%ff/tags", headers: as("reader") });
    expect(expectProblem(res, 400)).toMatchObject({ kind: "invalid-input", code: "BAD_URL" });
  });

  it("P2 a path parameter over 128 characters is a problem (414), with or without the dashboard's wildcard", async () => {
    const long = "a".repeat(129);
    const res = await app.inject({
      method: "DELETE",
      url: `/v1/datasets/ds/tags/${long}`,
      headers: as("writer"),
    });
    expect(expectProblem(res, 414)).toMatchObject({ code: "PARAM_TOO_LONG" });
    const plain = await testServer([{ name: "ds", store: createLocalStore({ root: tmpdir() }) }]);
    try {
      const again = await plain.inject({
        url: `/v1/datasets/${long}/versions`,
        headers: as("reader"),
      });
      expectProblem(again, 414);
    } finally {
      await plain.close();
    }
  });

  it("P2 a body that is not JSON, or empty, is a 400 problem", async () => {
    for (const payload of ["{bad", ""]) {
      const res = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/tags",
        headers: { ...as("writer"), "content-type": "application/json" },
        payload,
      });
      expectProblem(res, 400);
    }
  });

  it("P2 a request the HTTP parser refuses gets a problem document before the socket closes", async () => {
    const fresh = await freshStore("local");
    const live = await testServer([{ name: "ds", store: fresh.store }]);
    try {
      const address = await live.listen({ host: "127.0.0.1", port: 0 });
      const { port } = new URL(address);
      const raw = (request: string) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect({ host: "127.0.0.1", port: Number(port) });
          let answer = "";
          socket.on("data", (chunk) => {
            answer += chunk.toString("utf8");
          });
          socket.on("end", () => resolve(answer));
          socket.on("error", reject);
          socket.write(request);
        });
      for (const [request, status] of [
        ["NOT HTTP AT ALL\r\n\r\n", 400],
        [`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`, 431],
      ] as const) {
        const answer = await raw(request);
        const [head, body] = answer.split("\r\n\r\n");
        expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(head).toMatch(/content-type: application\/problem\+json/i);
        expect(ProblemShape.parse(JSON.parse(body!)).status).toBe(status);
      }
    } finally {
      await live.close();
      await fresh.dispose();
    }
  });
});

describe("public routes carry no storage location", () => {
  it("P3 /readyz names datasets and checks, never the store's location: ready, not a dataset, or a store that ignores preconditions", async () => {
    const fresh = await freshStore("local");
    const empty = await mkdtemp(join(tmpdir(), "holdfast-empty-"));
    try {
      await seedDataset(fresh.store, 1);
      const ignoring = new FaultStore(fresh.store).on(
        { operation: "put", times: Number.POSITIVE_INFINITY },
        { type: "strip-precondition" },
      );
      const cases = [
        { store: fresh.store, ready: true },
        { store: createLocalStore({ root: empty }), ready: false },
        { store: ignoring, ready: false },
      ];
      for (const { store, ready } of cases) {
        const app = await testServer([{ name: "ds", store }]);
        try {
          const res = await app.inject({ url: "/readyz" });
          expect(res.statusCode, res.body).toBe(ready ? 200 : 503);
          expect(res.json().datasets[0].ready).toBe(ready);
          for (const secret of [store.location, fresh.url, empty, tmpdir()]) {
            expect(res.body).not.toContain(secret);
          }
        } finally {
          await app.close();
        }
      }
    } finally {
      await fresh.dispose();
      await rm(empty, { recursive: true, force: true });
    }
  });
});
