import { encodeJson, isHoldfastError, seededRandomBytes } from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { holdfastLayout } from "@holdfast/dataset";
import {
  acquireLease,
  censusLeases,
  describeLeases,
  encodeLeaseBody,
  INVALID_LEASE_HANDLE,
  type Lease,
  type LeaseEntry,
  leaseKey,
  listLeases,
  parseLeaseKey,
  releaseLease,
  renewLease,
  StoredLeaseBodySchema,
} from "@holdfast/leases";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { commitVersions, OTHER_SECRET, T0, type World, world } from "./helpers.js";

// docs/protocol.md §4.2: a lease handle is a capability. Everything an
// attacker can read (the key, the ETag, the listing, the body) is not enough to renew,
// shorten, stretch or release someone else's lease.

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Another process on the same store, with its own ids and randomness. */
function attackerContext(w: World, store = w.fault): ProtocolContext {
  return createContext(store, {
    clock: w.storeTime,
    sleep: w.storeTime.sleep,
    random: seededRandomBytes(4242),
  });
}

/** The handle an attacker builds from a listing: every readable field, a made-up secret. */
function forgedFrom(entry: LeaseEntry, ttlMs: number, secret = OTHER_SECRET): Lease {
  return {
    leaseId: entry.leaseId,
    branch: entry.branch,
    version: entry.version,
    ttlMs,
    secret,
    key: entry.key,
    etag: entry.etag,
    renewal: 0,
    writerId: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
    writtenAtLocalMs: T0,
  };
}

async function ownerWithLease(w: World): Promise<Lease> {
  await commitVersions(w, 1);
  return acquireLease(w.reader, {
    format: holdfastLayout,
    branch: "main",
    version: 1,
    ttlMs: 30_000,
  });
}

async function snapshot(w: World, key: string) {
  const got = await w.memory.get(key);
  return got === null ? null : { etag: got.etag, body: new TextDecoder().decode(got.body) };
}

const STORES = [
  { name: "conditional delete", atomicConditionalDelete: true },
  { name: "no conditional delete (RGW)", atomicConditionalDelete: false },
] as const;

describe.each(STORES)("forged handles, $name", ({ atomicConditionalDelete }) => {
  const setup = async () => {
    const w = world();
    const owner = await ownerWithLease(w);
    const store = new FaultStore(w.memory, { capabilities: { atomicConditionalDelete } });
    const attacker = attackerContext(w, store);
    const [entry] = await collect(listLeases(attacker, { branch: "main" }));
    return { w, owner, attacker, store, entry: entry!, before: await snapshot(w, owner.key) };
  };

  it("invariant 1 a handle built from the listing cannot release the lease", async () => {
    const { w, owner, attacker, store, entry, before } = await setup();
    store.resetCounts();
    await expect(releaseLease(attacker, forgedFrom(entry, owner.ttlMs))).rejects.toMatchObject({
      kind: "invalid-input",
      code: INVALID_LEASE_HANDLE,
    });
    expect(store.requests()).toEqual([]); // refused before any request
    expect(await snapshot(w, owner.key)).toEqual(before);
    await expect(renewLease(w.reader, owner)).resolves.toMatchObject({ renewal: 1 });
  });

  it("invariant 1 a handle built from the listing cannot shorten the lease to 100 ms", async () => {
    const { w, owner, attacker, store, entry, before } = await setup();
    store.resetCounts();
    await expect(renewLease(attacker, forgedFrom(entry, 100))).rejects.toMatchObject({
      kind: "invalid-input",
      code: INVALID_LEASE_HANDLE,
    });
    expect(store.requests()).toEqual([]);
    expect(await snapshot(w, owner.key)).toEqual(before);
    // The census still sees the owner's 30 s term, not 100 ms.
    await w.storeTime.advance(10_000);
    expect(await censusLeases(attacker)("main", [1], new Date(T0 + 10_000))).toEqual(
      new Map([[1, "lease"]]),
    );
    await expect(renewLease(w.reader, owner)).resolves.toMatchObject({ renewal: 1 });
  });

  it("invariant 1 a handle built from the listing cannot stretch the lease to a day", async () => {
    const { w, owner, attacker, store, entry, before } = await setup();
    store.resetCounts();
    await expect(renewLease(attacker, forgedFrom(entry, 86_400_000))).rejects.toMatchObject({
      kind: "invalid-input",
      code: INVALID_LEASE_HANDLE,
    });
    expect(store.requests()).toEqual([]);
    expect(await snapshot(w, owner.key)).toEqual(before);
    const stored = StoredLeaseBodySchema.parse(JSON.parse(before!.body));
    expect(stored.ttlMs).toBe(30_000);
  });

  it("invariant 1 a self-consistent forged handle names another key and touches nothing", async () => {
    const { w, owner, attacker, entry, before } = await setup();
    // Key recomputed from the attacker's own secret: it passes the check, and names no lease.
    const consistent = {
      ...forgedFrom(entry, 100),
      key: leaseKey(entry.branch, entry.version, entry.leaseId, OTHER_SECRET),
    };
    expect(consistent.key).not.toBe(owner.key);
    await expect(renewLease(attacker, consistent)).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_LOST",
    });
    await releaseLease(attacker, consistent); // idempotent on a key that does not exist
    expect(await snapshot(w, owner.key)).toEqual(before);
    expect(await w.memory.head(consistent.key)).toBeNull();
  });

  it("invariant 6 the owner's key and ETag with any other secret is refused, the owner's own handle works", async () => {
    const { w, owner, attacker, before } = await setup();
    for (const secret of [OTHER_SECRET, `${owner.secret.slice(0, 42)}A`, "", owner.key]) {
      if (secret === owner.secret) continue;
      await expect(renewLease(attacker, { ...owner, secret, ttlMs: 100 })).rejects.toMatchObject({
        kind: "invalid-input",
        code: INVALID_LEASE_HANDLE,
      });
      await expect(releaseLease(attacker, { ...owner, secret })).rejects.toMatchObject({
        kind: "invalid-input",
      });
    }
    expect(await snapshot(w, owner.key)).toEqual(before);
    // The handle is the capability: handed to another process, it works there.
    await releaseLease(attacker, owner);
    expect(await w.memory.head(owner.key)).toBeNull();
  });
});

describe("a lease rewritten by someone without its secret is lost to its owner", () => {
  const rewriteCases: { name: string; bytes: (owner: Lease) => Uint8Array }[] = [
    {
      name: "a schema 2 body with the owner's fields and a later renewal, proved under another secret",
      bytes: (owner) =>
        encodeLeaseBody(OTHER_SECRET, {
          leaseId: owner.leaseId,
          branch: owner.branch,
          version: owner.version,
          ttlMs: 100,
          renewal: owner.renewal + 1,
          writerId: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        }),
    },
    {
      name: "a schema 2 body with a proof copied from the owner's own write",
      bytes: (owner) => {
        const real = encodeLeaseBody(owner.secret, { ...owner, renewal: owner.renewal });
        const body = JSON.parse(new TextDecoder().decode(real)) as Record<string, unknown>;
        return encodeJson({ ...body, renewal: owner.renewal + 1, ttlMs: 86_400_000 });
      },
    },
    {
      name: "a schema 1 body naming the lease",
      bytes: (owner) =>
        encodeJson({
          schema: 1,
          leaseId: owner.leaseId,
          branch: owner.branch,
          version: owner.version,
          ttlMs: 100,
          renewal: owner.renewal + 1,
          writerId: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
        }),
    },
  ];

  it.each(rewriteCases)("invariant 1 renew after $name fails LEASE_LOST", async ({ bytes }) => {
    const w = world();
    const owner = await ownerWithLease(w);
    await w.memory.put(owner.key, bytes(owner));
    const planted = await snapshot(w, owner.key);
    await expect(renewLease(w.reader, owner)).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_LOST",
    });
    expect(await snapshot(w, owner.key)).toEqual(planted); // not adopted, not rewritten
  });

  it.each(rewriteCases)("invariant 1 release after $name fails LEASE_LOST", async ({ bytes }) => {
    const w = world();
    const owner = await ownerWithLease(w);
    await w.memory.put(owner.key, bytes(owner));
    const planted = await snapshot(w, owner.key);
    await expect(releaseLease(w.reader, owner)).rejects.toMatchObject({
      kind: "conflict",
      code: "LEASE_LOST",
    });
    expect(await snapshot(w, owner.key)).toEqual(planted);
  });

  it("invariant 1 renew after an older body of the lease was put back fails LEASE_LOST", async () => {
    const w = world();
    const owner = await ownerWithLease(w);
    const acquiredBytes = (await w.memory.get(owner.key))!.body;
    const renewed = await renewLease(w.reader, owner);
    // A replay: the acquire's own bytes (proof valid, renewal 0) rewritten over renewal 1.
    await w.memory.put(owner.key, acquiredBytes);
    await expect(renewLease(w.reader, renewed)).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_LOST",
    });
    await expect(releaseLease(w.reader, renewed)).rejects.toMatchObject({ code: "LEASE_LOST" });
  });
});

describe("legitimate recovery still works", () => {
  it("invariant 1 a renewal whose answer was lost (fault store) is adopted by its owner", async () => {
    const w = world();
    const owner = await ownerWithLease(w);
    // The rewrite lands, every answer is lost, the resolver's read-back fails too.
    w.fault.on(
      { operation: "put", key: owner.key, precondition: "if-match" },
      { type: "apply-then-lose" },
    );
    w.fault.on(
      { operation: "put", key: owner.key, precondition: "if-match", times: 4 },
      { type: "lose-before-apply" },
    );
    w.fault.on({ operation: "get", key: owner.key }, { type: "lose-before-apply" });
    const ctx = { ...w.reader, sleep: recordingSleep() };
    const err = await renewLease(ctx, owner).catch((e: unknown) => e);
    expect(isHoldfastError(err, "unresolved")).toBe(true);
    const landed = StoredLeaseBodySchema.parse(
      JSON.parse(new TextDecoder().decode((await w.memory.get(owner.key))!.body)),
    );
    expect(landed.renewal).toBe(1);
    // The owner still holds the renewal-0 handle: the landed write proves itself ours.
    const renewed = await renewLease(ctx, owner);
    expect(renewed.renewal).toBe(2); // counts on from the adopted write
    expect((await w.memory.head(owner.key))?.etag).toBe(renewed.etag);
    expect(w.fault.pendingRules()).toEqual([]);
    await releaseLease(ctx, renewed);
    expect(await w.memory.head(owner.key)).toBeNull();
  });

  it("invariant 1 release with a handle whose renewal answer was lost deletes its own later write", async () => {
    const w = world();
    const owner = await ownerWithLease(w);
    await renewLease(w.reader, owner); // its answer "lost": the owner keeps the older handle
    await releaseLease(w.reader, owner);
    expect(await w.memory.head(owner.key)).toBeNull();
  });

  it("two copies of one handle (two replicas) keep renewing one lease", async () => {
    const w = world();
    const owner = await ownerWithLease(w);
    const a = await renewLease(w.reader, owner);
    const b = await renewLease(w.reader, owner); // stale copy: adopts a's write
    expect(b.renewal).toBe(2);
    const a2 = await renewLease(w.reader, a); // a is stale now: adopts b's write
    expect(a2.renewal).toBe(3);
  });
});

describe("schema 1 leases (from before lease secrets)", () => {
  const legacyKey = (leaseId: string) =>
    `_holdfast/leases/main/${"1".padStart(20, "0")}/${leaseId}.json`;
  const legacyBody = (leaseId: string) =>
    encodeJson({
      schema: 1,
      leaseId,
      writerId: "01ARZ3NDEKTSV4RRFFQ69G5FAW",
      branch: "main",
      version: 1,
      ttlMs: 120_000,
      renewal: 0,
    });

  it("invariant 1 an old-shape lease still protects its version in the census", async () => {
    const w = world();
    await commitVersions(w, 1);
    const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    await w.memory.put(legacyKey(id), legacyBody(id));
    expect(parseLeaseKey(legacyKey(id))).toMatchObject({ leaseId: id, tag: null });
    const census = censusLeases(w.reader);
    // Aged past the minimum TTL: the census reads its schema 1 body for the TTL.
    expect(await census("main", [1], new Date(T0 + 60_000))).toEqual(new Map([[1, "lease"]]));
    expect(await census("main", [1], new Date(T0 + 122_000))).toEqual(new Map());
    const [view] = await describeLeases(w.reader);
    expect(view).toMatchObject({ leaseId: id, ttlMs: 120_000 });
  });

  it("invariant 6 renew and release of an old-shape handle are refused before any request", async () => {
    const w = world();
    await commitVersions(w, 1);
    const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    await w.memory.put(legacyKey(id), legacyBody(id));
    const meta = (await w.memory.head(legacyKey(id)))!;
    const old = {
      leaseId: id,
      branch: "main",
      version: 1,
      ttlMs: 120_000,
      key: legacyKey(id),
      etag: meta.etag,
      renewal: 0,
      writerId: "01ARZ3NDEKTSV4RRFFQ69G5FAW",
      writtenAtLocalMs: T0,
    };
    w.fault.resetCounts();
    for (const handle of [old, { ...old, secret: OTHER_SECRET }]) {
      const err = await renewLease(w.reader, handle as Lease).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: "invalid-input", code: INVALID_LEASE_HANDLE });
      expect((err as Error).message).toMatch(/before lease schema 2/);
      await expect(releaseLease(w.reader, handle as Lease)).rejects.toMatchObject({
        code: INVALID_LEASE_HANDLE,
      });
    }
    expect(w.fault.requests()).toEqual([]);
    expect((await w.memory.head(legacyKey(id)))?.etag).toBe(meta.etag);
  });
});

describe("the secret is never stored or shown", () => {
  it("invariant 1 neither the lease object, its listing, its view nor a refusal carries the secret", async () => {
    const w = world();
    const owner = await ownerWithLease(w);
    const renewed = await renewLease(w.reader, owner);
    const raw = Buffer.from(renewed.secret, "base64url");
    const spellings = [renewed.secret, raw.toString("hex"), raw.toString("base64")];
    const seen: string[] = [];
    for (const key of (await collect(listLeases(w.reader))).map((e) => e.key)) {
      seen.push(key, new TextDecoder().decode((await w.memory.get(key))!.body));
    }
    seen.push(JSON.stringify(await collect(listLeases(w.reader))));
    seen.push(JSON.stringify(await describeLeases(w.reader)));
    const refusal = await renewLease(w.reader, { ...renewed, ttlMs: Number.NaN }).catch(
      (e: unknown) => e,
    );
    seen.push(JSON.stringify(refusal), String(refusal), (refusal as Error).stack ?? "");
    for (const text of seen) for (const s of spellings) expect(text).not.toContain(s);
  });
});
