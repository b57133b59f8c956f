import { LeaseHeldShape, ProblemShape } from "@holdfast/api-shapes";
import { CountingStore, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, freshStore, seedDataset, testServer } from "./support.js";

const ULID = "01J9Z3K4V6W8X0Y2Z4A6B8C0D2";

describe("bad input: a clear 4xx problem and nothing written", () => {
  let app: ZodApp;
  let counting: CountingStore;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshStore("local");
    dispose = fresh.dispose;
    await seedDataset(fresh.store, 2);
    counting = new CountingStore(fresh.store);
    app = await testServer([{ name: "ds", store: counting }], { bodyLimitBytes: 4096 });
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  const BAD: {
    name: string;
    method: "POST" | "PUT" | "GET";
    url: string;
    payload?: unknown;
    headers?: Record<string, string>;
    status: number;
  }[] = [
    {
      name: "unknown field",
      method: "POST",
      url: "/v1/datasets/ds/leases",
      payload: { version: 1, ttlMs: 5000, extra: 1 },
      status: 400,
    },
    {
      name: "TTL below the minimum",
      method: "POST",
      url: "/v1/datasets/ds/leases",
      payload: { version: 1, ttlMs: 10 },
      status: 400,
    },
    {
      name: "TTL above 24 h",
      method: "POST",
      url: "/v1/datasets/ds/leases",
      payload: { version: 1, ttlMs: 90_000_000 },
      status: 400,
    },
    {
      name: "version zero",
      method: "POST",
      url: "/v1/datasets/ds/leases",
      payload: { version: 0, ttlMs: 5000 },
      status: 400,
    },
    {
      name: "version as a string",
      method: "POST",
      url: "/v1/datasets/ds/leases",
      payload: { version: "1", ttlMs: 5000 },
      status: 400,
    },
    {
      name: "bad branch name",
      method: "POST",
      url: "/v1/datasets/ds/leases",
      payload: { version: 1, branch: "../x", ttlMs: 5000 },
      status: 400,
    },
    {
      name: "not JSON",
      method: "POST",
      url: "/v1/datasets/ds/tags",
      payload: "{nope",
      headers: { "content-type": "application/json" },
      status: 400,
    },
    {
      name: "wrong media type",
      method: "POST",
      url: "/v1/datasets/ds/tags",
      payload: "name=x",
      headers: { "content-type": "text/plain" },
      status: 415,
    },
    {
      name: "body over the limit",
      method: "POST",
      url: "/v1/datasets/ds/tags",
      payload: { name: "x".repeat(5000), version: 1 },
      status: 413,
    },
    {
      name: "tag name with a slash",
      method: "POST",
      url: "/v1/datasets/ds/tags",
      payload: { name: "a/b", version: 1 },
      status: 400,
    },
    {
      name: "empty cleanup policy",
      method: "POST",
      url: "/v1/datasets/ds/cleanup/jobs",
      payload: { policy: {} },
      status: 400,
    },
    {
      name: "negative retain",
      method: "POST",
      url: "/v1/datasets/ds/cleanup/plan",
      payload: { policy: { retainVersions: 0 } },
      status: 400,
    },
    {
      name: "commit without files",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: { branch: "main" },
      status: 400,
    },
    {
      name: "commit naming a key outside data/",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: { files: [{ key: "_holdfast/dataset.json", size: 1 }] },
      status: 400,
    },
    {
      name: "commit naming a file twice",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: {
        files: [
          { key: "data/a.bin", size: 1 },
          { key: "data/a.bin", size: 1 },
        ],
      },
      status: 400,
    },
    {
      name: "commit with a negative size",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: { files: [{ key: "data/a.bin", size: -1 }] },
      status: 400,
    },
    {
      name: "commit with an unknown file field",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: { files: [{ key: "data/a.bin", size: 1, path: "/etc/passwd" }] },
      status: 400,
    },
    {
      name: "commit with a malformed parent",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: { files: [], parent: { branch: "main", version: 0 } },
      status: 400,
    },
    {
      name: "commit with a source on a bad branch name",
      method: "POST",
      url: "/v1/datasets/ds/versions",
      payload: { files: [], sources: [{ branch: "../x", version: 1 }] },
      status: 400,
    },
    { name: "unknown dataset", method: "GET", url: "/v1/datasets/nope/versions", status: 404 },
    { name: "bad page size", method: "GET", url: "/v1/datasets/ds/versions?limit=0", status: 400 },
    {
      name: "bad lease id in the path",
      method: "POST",
      url: "/v1/datasets/ds/leases/nope/renew",
      payload: {},
      status: 400,
    },
    { name: "unknown route", method: "GET", url: "/v1/nothing", status: 404 },
  ];

  for (const bad of BAD) {
    it(`${bad.name}: ${bad.status}`, async () => {
      counting.resetCounts();
      const res = await app.inject({
        method: bad.method,
        url: bad.url,
        headers: { ...as("admin"), ...(bad.headers ?? {}) },
        ...(bad.payload === undefined ? {} : { payload: bad.payload as string }),
      });
      expect(res.statusCode, res.body).toBe(bad.status);
      expect(res.headers["content-type"]).toMatch(/^application\/problem\+json/);
      const problem = ProblemShape.parse(res.json());
      expect(problem.status).toBe(bad.status);
      expect(problem.detail.length).toBeGreaterThan(0);
      const counts = counting.requestCounts();
      expect(counts.put + counts.delete + counts.deleteMany).toBe(0);
    });
  }

  it("a tag on a missing version is 404 and leaves no object behind", async () => {
    const before = await allKeys(counting);
    const res = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/tags",
      headers: as("writer"),
      payload: { name: "t", version: 99 },
    });
    expect(res.statusCode).toBe(404);
    expect(ProblemShape.parse(res.json()).kind).toBe("not-found");
    expect(await allKeys(counting)).toEqual(before);
  });

  it("a commit to a branch that does not exist is 404 and leaves no object behind", async () => {
    const before = await allKeys(counting);
    const res = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/versions",
      headers: as("writer"),
      payload: { branch: "nope", files: [] },
    });
    expect(res.statusCode).toBe(404);
    expect(await allKeys(counting)).toEqual(before);
  });

  it("a forged lease handle naming another object is refused before any request (INVALID_LEASE_HANDLE)", async () => {
    const held = LeaseHeldShape.parse(
      (
        await app.inject({
          method: "POST",
          url: "/v1/datasets/ds/leases",
          headers: as("reader"),
          payload: { version: 1, ttlMs: 30_000 },
        })
      ).json(),
    );
    for (const action of ["renew", "release"]) {
      counting.resetCounts();
      const res = await app.inject({
        method: "POST",
        url: `/v1/datasets/ds/leases/${held.handle.leaseId}/${action}`,
        headers: as("reader"),
        payload: { handle: { ...held.handle, key: "_holdfast/dataset.json" } },
      });
      expect(res.statusCode).toBe(400);
      expect(ProblemShape.parse(res.json())).toMatchObject({
        kind: "invalid-input",
        code: "INVALID_LEASE_HANDLE",
      });
      expect(counting.totalRequests()).toBe(0);
    }
    expect(await counting.inner.head("_holdfast/dataset.json")).not.toBeNull();
    const other = await app.inject({
      method: "POST",
      url: `/v1/datasets/ds/leases/${ULID}/release`,
      headers: as("reader"),
      payload: { handle: held.handle },
    });
    expect(other.statusCode).toBe(400);
  });

  it("rate limits are per token: the fourth request of a token in the window is 429, another token still passes", async () => {
    const fresh = await freshStore("local");
    await seedDataset(fresh.store, 1);
    const limited = await testServer([{ name: "ds", store: fresh.store }], {
      rateLimit: { max: 3, windowMs: 60_000 },
    });
    try {
      const codes = [];
      for (let i = 0; i < 4; i++) {
        codes.push(
          (await limited.inject({ url: "/v1/datasets", headers: as("reader") })).statusCode,
        );
      }
      expect(codes).toEqual([200, 200, 200, 429]);
      const last = await limited.inject({ url: "/v1/datasets", headers: as("reader") });
      expect(ProblemShape.parse(last.json())).toMatchObject({ status: 429, kind: "rate-limited" });
      expect(
        (await limited.inject({ url: "/v1/datasets", headers: as("writer") })).statusCode,
      ).toBe(200);
    } finally {
      await limited.close();
      await fresh.dispose();
    }
  });
});

async function allKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const meta of listAll(store, ""))
    if (!meta.key.startsWith("_holdfast/clock/")) keys.push(meta.key);
  return keys.sort();
}
