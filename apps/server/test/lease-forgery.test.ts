import { randomBytes } from "node:crypto";
import { LeaseHeldShape, ProblemShape } from "@holdfast/api-shapes";
import { encodeJson, type ObjectStore } from "@holdfast/conditional-store";
import { leaseKey } from "@holdfast/leases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken, type ZodApp } from "../src/index.js";
import { as, BACKENDS, freshStore, seedDataset, TOKEN_ENTRIES, testServer } from "./support.js";

// docs/protocol.md §4.2: through the server too, a lease handle is a
// capability. Another reader token sees the lease listing (ids, keys, expiry) but never the
// secret, and cannot release, shorten or stretch a lease it did not take.
const OTHER_READER = "hf_test_reader_two_token";

// On every backend: RGW has no conditional DELETE, so there the key binding alone keeps a
// forged release away from the lease.
describe.each(BACKENDS)("forged lease handles over HTTP (invariant 1), %s", (backend) => {
  let app: ZodApp;
  let store: ObjectStore;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshStore(backend);
    dispose = fresh.dispose;
    store = fresh.store;
    await seedDataset(store, 2);
    app = await testServer([{ name: "ds", store }], {
      tokens: [
        ...TOKEN_ENTRIES,
        { name: "test-reader-two", role: "reader", sha256: hashToken(OTHER_READER) },
      ],
    });
  });
  afterAll(async () => {
    await app?.close();
    await dispose?.();
  });

  const attacker = { authorization: `Bearer ${OTHER_READER}` };
  const acquire = async () => {
    const res = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/leases",
      headers: as("reader"),
      payload: { version: 1, ttlMs: 30_000 },
    });
    expect(res.statusCode, res.body).toBe(201);
    return LeaseHeldShape.parse(res.json());
  };
  const call = (
    action: "renew" | "release",
    handle: object & { leaseId: string },
    headers = attacker,
  ) =>
    app.inject({
      method: "POST",
      url: `/v1/datasets/ds/leases/${handle.leaseId}/${action}`,
      headers,
      payload: { handle },
    });
  /** What another reader builds from the listing: every shown field and a made-up secret. */
  const forge = async (leaseId: string, ttlMs: number) => {
    const listing = await app.inject({
      url: "/v1/datasets/ds/leases?version=1",
      headers: attacker,
    });
    const shown = (listing.json().leases as { leaseId: string; key: string }[]).find(
      (l) => l.leaseId === leaseId,
    )!;
    return {
      leaseId,
      branch: "main",
      version: 1,
      ttlMs,
      secret: randomBytes(32).toString("base64url"),
      key: shown.key,
      etag: "unknown",
      renewal: 0,
      writerId: leaseId,
    };
  };
  const stored = async (key: string) => {
    const got = await store.get(key);
    return got === null ? null : { etag: got.etag, body: new TextDecoder().decode(got.body) };
  };

  it.each([
    { what: "release", action: "release" as const, ttlMs: 30_000 },
    { what: "shorten to 100 ms", action: "renew" as const, ttlMs: 100 },
    { what: "stretch to a day", action: "renew" as const, ttlMs: 86_400_000 },
  ])("invariant 1 another reader token cannot $what a lease from the listing", async (c) => {
    const held = await acquire();
    const before = await stored(held.handle.key);
    const res = await call(c.action, await forge(held.handle.leaseId, c.ttlMs));
    expect(res.statusCode, res.body).toBe(400);
    expect(ProblemShape.parse(res.json())).toMatchObject({
      kind: "invalid-input",
      code: "INVALID_LEASE_HANDLE",
    });
    expect(await stored(held.handle.key)).toEqual(before);
    // The owner's handle still renews and releases.
    const renewed = await call("renew", held.handle, as("reader"));
    expect(renewed.statusCode, renewed.body).toBe(200);
    const next = LeaseHeldShape.parse(renewed.json()).handle;
    expect(next.ttlMs).toBe(30_000);
    expect((await call("release", next, as("reader"))).statusCode).toBe(200);
  });

  it("invariant 1 a forged handle with a self-consistent key names no lease and touches nothing", async () => {
    const held = await acquire();
    const before = await stored(held.handle.key);
    const forged = await forge(held.handle.leaseId, 100);
    const consistent = { ...forged, key: leaseKey("main", 1, forged.leaseId, forged.secret) };
    const renew = await call("renew", consistent);
    expect(renew.statusCode).toBe(404);
    expect(ProblemShape.parse(renew.json())).toMatchObject({ code: "LEASE_LOST" });
    expect((await call("release", consistent)).statusCode).toBe(200); // idempotent, on its own key
    expect(await stored(held.handle.key)).toEqual(before);
    expect(await store.head(consistent.key)).toBeNull();
    expect((await call("release", held.handle, as("reader"))).statusCode).toBe(200);
  });

  it("invariant 1 an owner whose lease another writer rewrote gets LEASE_LOST at its next renewal", async () => {
    const held = await acquire();
    const { handle } = held;
    await store.put(
      handle.key,
      encodeJson({
        schema: 2,
        leaseId: handle.leaseId,
        branch: "main",
        version: 1,
        ttlMs: 100,
        renewal: 5,
        writerId: handle.writerId,
        proof: "0".repeat(64),
      }),
    );
    const res = await call("renew", handle, as("reader"));
    expect(res.statusCode, res.body).toBe(404);
    expect(ProblemShape.parse(res.json())).toMatchObject({ code: "LEASE_LOST" });
    await store.delete(handle.key);
  });

  it("invariant 1 the handle is the capability: another token holding it may renew and release", async () => {
    const held = await acquire();
    const renewed = await call("renew", held.handle, attacker);
    expect(renewed.statusCode, renewed.body).toBe(200);
    const released = await call("release", LeaseHeldShape.parse(renewed.json()).handle, attacker);
    expect(released.statusCode).toBe(200);
    expect(await store.head(held.handle.key)).toBeNull();
  });

  it("invariant 1 the secret is in the acquire and renew answers only: never a listing, status or metric", async () => {
    const held = await acquire();
    expect(held.handle.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const renewed = await call("renew", held.handle, as("reader"));
    const secrets = [held.handle.secret, LeaseHeldShape.parse(renewed.json()).handle.secret];
    expect(secrets[1]).toBe(secrets[0]);
    expect(renewed.body).toContain(secrets[0]);
    const pages = await Promise.all(
      [
        "/v1/datasets/ds/leases",
        "/v1/datasets/ds/leases?version=1",
        "/v1/datasets/ds/status",
        "/v1/datasets",
        "/metrics",
        "/readyz",
      ].map((url) => app.inject({ url, headers: as("admin") })),
    );
    for (const page of pages) {
      expect(page.statusCode, page.body).toBeLessThan(500);
      expect(page.body).not.toContain(secrets[0]);
    }
    expect(pages[0]!.body).toContain(held.handle.leaseId); // the listing does show the lease
    expect(await stored(held.handle.key)).not.toBeNull();
    expect((await stored(held.handle.key))!.body).not.toContain(secrets[0]);
    expect((await call("release", held.handle, as("reader"))).statusCode).toBe(200);
  });
});
