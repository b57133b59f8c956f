import { LeaseHeldShape, ProblemShape } from "@holdfast/api-shapes";
import { systemClock } from "@holdfast/conditional-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, freshStore, seedDataset, testServer } from "./support.js";

// Leases over HTTP stay storage-timed (docs/protocol.md §4): the handle is all a
// replica needs, and only the store's Last-Modified stamps decide expiry.
describe("leases through several replicas", () => {
  let a: ZodApp;
  let b: ZodApp;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshStore("local");
    dispose = fresh.dispose;
    await seedDataset(fresh.store, 2);
    a = await testServer([{ name: "ds", store: fresh.store }], { replicaId: "a" });
    // Replica b's host clock runs an hour ahead: it must not matter.
    const ahead = { now: () => systemClock.now() + 3_600_000 };
    b = await testServer([{ name: "ds", store: fresh.store }], {
      replicaId: "b",
      context: { clock: ahead },
    });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await dispose?.();
  });

  const acquire = async (app: ZodApp, ttlMs: number) =>
    LeaseHeldShape.parse(
      (
        await app.inject({
          method: "POST",
          url: "/v1/datasets/ds/leases",
          headers: as("reader"),
          payload: { version: 1, ttlMs },
        })
      ).json(),
    );
  const call = (app: ZodApp, action: "renew" | "release", handle: object & { leaseId: string }) =>
    app.inject({
      method: "POST",
      url: `/v1/datasets/ds/leases/${handle.leaseId}/${action}`,
      headers: as("reader"),
      payload: { handle },
    });

  it("L-HTTP1 a lease taken through one replica is renewed and released through another whose clock is skewed", async () => {
    const held = await acquire(a, 30_000);
    const renewed = await call(b, "renew", held.handle);
    expect(renewed.statusCode, renewed.body).toBe(200);
    const again = LeaseHeldShape.parse(renewed.json());
    const back = await call(a, "renew", again.handle);
    expect(back.statusCode, back.body).toBe(200);
    const released = await call(b, "release", LeaseHeldShape.parse(back.json()).handle);
    expect(released.statusCode).toBe(200);
    expect(
      (await a.inject({ url: "/v1/datasets/ds/leases", headers: as("reader") })).json().leases,
    ).toEqual([]);
  });

  it("L-HTTP2 a client that stops renewing loses its lease: a renewal after the storage-time term is refused and the lease removed", async () => {
    const held = await acquire(a, 100);
    // Expiry is truncSec(stamp) + TTL + 1 s of precision: 2.5 s later the term is over in storage
    // time.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const late = await call(b, "renew", held.handle);
    expect(late.statusCode).toBe(409);
    expect(ProblemShape.parse(late.json())).toMatchObject({
      kind: "refused",
      code: "LEASE_EXPIRED",
    });
    expect(
      (await a.inject({ url: "/v1/datasets/ds/leases", headers: as("reader") })).json().leases,
    ).toEqual([]);
  });
});
