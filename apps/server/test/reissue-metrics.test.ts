import { LeaseHeldShape, ProblemShape } from "@holdfast/api-shapes";
import { MemoryStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, seedDataset, testServer } from "./support.js";

// A protocol unit test: the scripted fault store loses answers, and /metrics must say so.
const LEASE_KEY = /^_holdfast\/leases\/main\/0+1\//;

describe("re-issue and unresolved-outcome metrics", () => {
  let app: ZodApp;
  let faults: FaultStore;

  beforeAll(async () => {
    faults = new FaultStore(new MemoryStore());
    await seedDataset(faults, 2);
    // No real waiting between re-issues.
    app = await testServer([{ name: "ds", store: faults }], {
      context: { sleep: async () => {} },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const counter = async (name: string): Promise<number> => {
    const text = (await app.inject({ url: "/metrics", headers: as("reader") })).body;
    const values = text
      .split("\n")
      .filter((line) => line.startsWith(`${name}{`) && line.includes('dataset="ds"'))
      .map((line) => Number(line.split(" ").at(-1)));
    return values.reduce((sum, v) => sum + v, 0);
  };

  it("M1 a lease put that landed but whose answer was lost is re-issued: the lease is granted and the re-issue counted", async () => {
    const before = await counter("holdfast_store_reissues_total");
    faults.script({
      operation: "put",
      key: LEASE_KEY,
      precondition: "create",
      fault: { type: "apply-then-lose" },
    });
    const res = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/leases",
      headers: as("reader"),
      payload: { version: 1, ttlMs: 30_000 },
    });
    expect(res.statusCode, res.body).toBe(201);
    LeaseHeldShape.parse(res.json());
    expect(await counter("holdfast_store_reissues_total")).toBe(before + 1);
    expect(await counter("holdfast_unresolved_outcomes_total")).toBe(0);
  });

  it("M2 a lease put whose every answer is lost is reported unresolved (502), never granted or refused, and counted", async () => {
    const before = await counter("holdfast_store_reissues_total");
    faults.script({
      operation: "put",
      key: LEASE_KEY,
      precondition: "create",
      times: Number.POSITIVE_INFINITY,
      fault: { type: "lose-before-apply" },
    });
    const res = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/leases",
      headers: as("reader"),
      payload: { version: 1, ttlMs: 30_000 },
    });
    expect(res.statusCode, res.body).toBe(502);
    expect(ProblemShape.parse(res.json())).toMatchObject({ kind: "unresolved" });
    expect(await counter("holdfast_store_reissues_total")).toBeGreaterThan(before);
    expect(await counter("holdfast_unresolved_outcomes_total")).toBe(1);
    const text = (await app.inject({ url: "/metrics", headers: as("reader") })).body;
    expect(text).toContain(
      'holdfast_unresolved_outcomes_total{dataset="ds",route="/v1/datasets/:dataset/leases"} 1',
    );
  });
});
