import { ProblemShape } from "@holdfast/api-shapes";
import { CountingStore } from "@holdfast/conditional-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { BACKENDS, freshStore, seedDataset, TOKENS, testServer } from "./support.js";

const ULID = "01J9Z3K4V6W8X0Y2Z4A6B8C0D2";
const HANDLE = {
  leaseId: ULID,
  branch: "main",
  version: 1,
  ttlMs: 1000,
  secret: "A".repeat(43),
  key: `_holdfast/leases/main/00000000000000000001/${ULID}.66687aadf862bd776c8fc18b8e9f8e20.json`,
  etag: "x",
  renewal: 0,
  writerId: ULID,
};

/** Every authenticated route with the least role it needs and a well-formed request. */
const MATRIX: {
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  role: "reader" | "writer" | "admin";
  payload?: object;
  headers?: Record<string, string>;
}[] = [
  { method: "GET", url: "/metrics", role: "reader" },
  { method: "GET", url: "/v1/datasets", role: "reader" },
  { method: "GET", url: "/v1/datasets/ds/versions", role: "reader" },
  {
    method: "POST",
    url: "/v1/datasets/ds/versions",
    role: "writer",
    payload: { files: [] },
  },
  {
    method: "POST",
    url: "/v1/datasets/ds/files",
    role: "writer",
    payload: Buffer.from("bytes of a data file"),
    headers: { "content-type": "application/octet-stream" },
  },
  { method: "GET", url: "/v1/datasets/ds/status", role: "reader" },
  { method: "GET", url: "/v1/datasets/ds/doctor", role: "reader" },
  { method: "GET", url: "/v1/datasets/ds/leases", role: "reader" },
  {
    method: "POST",
    url: "/v1/datasets/ds/leases",
    role: "reader",
    payload: { version: 1, ttlMs: 5000 },
  },
  {
    method: "POST",
    url: `/v1/datasets/ds/leases/${ULID}/renew`,
    role: "reader",
    payload: { handle: HANDLE },
  },
  {
    method: "POST",
    url: `/v1/datasets/ds/leases/${ULID}/release`,
    role: "reader",
    payload: { handle: HANDLE },
  },
  { method: "GET", url: "/v1/datasets/ds/tags", role: "reader" },
  {
    method: "POST",
    url: "/v1/datasets/ds/tags",
    role: "writer",
    payload: { name: "t1", version: 1 },
  },
  { method: "PUT", url: "/v1/datasets/ds/tags/t1", role: "writer", payload: { version: 2 } },
  { method: "DELETE", url: "/v1/datasets/ds/tags/t1", role: "writer" },
  { method: "GET", url: "/v1/datasets/ds/branches", role: "reader" },
  { method: "POST", url: "/v1/datasets/ds/branches", role: "writer", payload: { name: "b1" } },
  { method: "DELETE", url: "/v1/datasets/ds/branches/b1", role: "writer" },
  {
    method: "POST",
    url: "/v1/datasets/ds/cleanup/plan",
    role: "admin",
    payload: { policy: { retainVersions: 5 } },
  },
  { method: "GET", url: "/v1/datasets/ds/cleanup/plan", role: "reader" },
  {
    method: "POST",
    url: "/v1/datasets/ds/cleanup/jobs",
    role: "admin",
    payload: { policy: { retainVersions: 5 } },
  },
  { method: "GET", url: "/v1/datasets/ds/cleanup/jobs", role: "reader" },
  { method: "GET", url: `/v1/datasets/ds/cleanup/jobs/${ULID}`, role: "reader" },
  { method: "GET", url: `/v1/datasets/ds/cleanup/jobs/${ULID}/events`, role: "reader" },
  { method: "GET", url: "/v1/datasets/ds/cleanup/history", role: "reader" },
  { method: "GET", url: "/v1/datasets/ds/usage", role: "reader" },
  { method: "POST", url: "/v1/datasets/ds/recover", role: "admin" },
];

const BELOW = { reader: null, writer: "reader", admin: "writer" } as const;
const ABOVE = { reader: "writer", writer: "admin", admin: null } as const;

for (const backend of BACKENDS) {
  describe(`auth matrix on ${backend}: every route × no token, unknown token, wrong role, right role`, () => {
    let app: ZodApp;
    let counting: CountingStore;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      const fresh = await freshStore(backend);
      dispose = fresh.dispose;
      await seedDataset(fresh.store, 3);
      counting = new CountingStore(fresh.store);
      app = await testServer([{ name: "ds", store: counting }]);
    });
    afterAll(async () => {
      await app?.close();
      await dispose?.();
    });

    it("the matrix names every authenticated route the server registers", () => {
      const registered = app.holdfastRoutes
        .filter((r) => r.role !== null)
        .map((r) => `${r.method} ${r.url}`)
        .sort();
      const pattern = (url: string) =>
        url
          .replace("/ds/", "/:dataset/")
          .replace(/\/ds$/, "/:dataset")
          .replace(`/leases/${ULID}`, "/leases/:leaseId")
          .replace(`/jobs/${ULID}`, "/jobs/:jobId")
          .replace(/\/tags\/t1$/, "/tags/:name")
          .replace(/\/branches\/b1$/, "/branches/:name");
      expect(MATRIX.map((m) => `${m.method} ${pattern(m.url)}`).sort()).toEqual(registered);
      for (const m of MATRIX) {
        expect(
          app.holdfastRoutes.find((r) => r.method === m.method && r.url === pattern(m.url))?.role,
        ).toBe(m.role);
      }
    });

    it("no token and unknown tokens get 401 problems and write nothing", async () => {
      counting.resetCounts();
      for (const m of MATRIX) {
        for (const headers of [
          {},
          { authorization: "Bearer hf_not_a_token" },
          { authorization: "Basic abc" },
        ]) {
          const res = await app.inject({
            method: m.method,
            url: m.url,
            headers,
            ...(m.payload ? { payload: m.payload } : {}),
          });
          expect(res.statusCode, `${m.method} ${m.url}`).toBe(401);
          expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
          expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
          expect(ProblemShape.parse(res.json())).toMatchObject({
            status: 401,
            kind: "unauthenticated",
          });
        }
      }
      expect(counting.totalRequests()).toBe(0);
    });

    it("a role below the route's gets 403 and writes nothing", async () => {
      counting.resetCounts();
      let checked = 0;
      for (const m of MATRIX) {
        const below = BELOW[m.role];
        if (below === null) continue;
        const res = await app.inject({
          method: m.method,
          url: m.url,
          headers: { ...m.headers, authorization: `Bearer ${TOKENS[below]}` },
          ...(m.payload ? { payload: m.payload } : {}),
        });
        expect(res.statusCode, `${m.method} ${m.url}`).toBe(403);
        expect(ProblemShape.parse(res.json())).toMatchObject({ status: 403, kind: "forbidden" });
        checked += 1;
      }
      expect(checked).toBe(MATRIX.filter((m) => m.role !== "reader").length);
      expect(counting.totalRequests()).toBe(0);
    });

    it("the right role (and any above it) passes authentication", async () => {
      for (const m of MATRIX) {
        for (const role of [m.role, ABOVE[m.role]].filter((r) => r !== null)) {
          const res = await app.inject({
            method: m.method,
            url: m.url,
            headers: { authorization: `Bearer ${TOKENS[role]}` },
            ...(m.payload ? { payload: m.payload } : {}),
          });
          expect([401, 403], `${m.method} ${m.url} as ${role}: ${res.body}`).not.toContain(
            res.statusCode,
          );
          expect(res.statusCode, `${m.method} ${m.url} as ${role}: ${res.body}`).toBeLessThan(500);
          if (m.url.endsWith("/cleanup/jobs") && m.method === "POST" && res.statusCode === 202) {
            // Follow the job to its end before the next request needs the dataset's cleanup lock.
            const events = await app.inject({
              url: `/v1/datasets/ds/cleanup/jobs/${res.json().job.id}/events`,
              headers: { authorization: `Bearer ${TOKENS.reader}` },
            });
            expect(events.body).toContain("event: done");
          }
        }
      }
    });

    it("health and the API document need no token", async () => {
      for (const url of ["/healthz", "/readyz", "/openapi.json"]) {
        expect((await app.inject({ url })).statusCode, url).toBe(200);
      }
    });
  });
}
