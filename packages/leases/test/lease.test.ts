import { CountingStore, isHoldfastError } from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { holdfastLayout } from "@holdfast/dataset";
import {
  acquireLease,
  censusLeases,
  deleteLeasesOf,
  describeLeases,
  leaseKey,
  listLeases,
  MAX_TTL_MS,
  MIN_TTL_MS,
  releaseLease,
  renewLease,
  sweepExpiredLeases,
} from "@holdfast/leases";
import { createContext, storageNow } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { commitVersions, OTHER_SECRET, putRetirement, T0, world } from "./helpers.js";

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("acquire", () => {
  it("writes one lease object and returns it", async () => {
    const w = world();
    await commitVersions(w, 2);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    });
    expect(lease).toMatchObject({ branch: "main", version: 2, ttlMs: 30_000, renewal: 0 });
    expect(lease.key).toBe(leaseKey("main", 2, lease.leaseId, lease.secret));
    const listed = await collect(listLeases(w.reader, { branch: "main", version: 2 }));
    expect(listed.map((l) => l.leaseId)).toEqual([lease.leaseId]);
    expect(listed[0]?.lastModified.getTime()).toBe(T0);
  });

  it("fails with not-found on a version that does not exist and leaves no lease behind", async () => {
    const w = world();
    await commitVersions(w, 1);
    const err = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: "not-found", code: "VERSION_NOT_FOUND" });
    expect(await collect(listLeases(w.reader, { branch: "main" }))).toEqual([]);
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "dev", version: 1, ttlMs: 30_000 }),
    ).rejects.toMatchObject({
      kind: "not-found",
    });
  });

  it.each([
    ["a TTL below the minimum", { branch: "main", version: 1, ttlMs: MIN_TTL_MS - 1 }],
    ["a TTL above the maximum", { branch: "main", version: 1, ttlMs: MAX_TTL_MS + 1 }],
    ["a fractional TTL", { branch: "main", version: 1, ttlMs: 1000.5 }],
    ["a string TTL", { branch: "main", version: 1, ttlMs: "1000" }],
    ["version 0", { branch: "main", version: 0, ttlMs: 1000 }],
    ["a bad branch", { branch: "../main", version: 1, ttlMs: 1000 }],
  ])("rejects %s with invalid-input and sends nothing", async (_what, options) => {
    const w = world();
    await commitVersions(w, 1);
    const err = await acquireLease(w.reader, options as never).catch((e: unknown) => e);
    expect(isHoldfastError(err, "invalid-input")).toBe(true);
    expect(w.fault.requests()).toEqual([]);
  });

  it("accepts the minimum TTL", async () => {
    const w = world();
    await commitVersions(w, 1);
    await expect(
      acquireLease(w.reader, {
        format: holdfastLayout,
        branch: "main",
        version: 1,
        ttlMs: MIN_TTL_MS,
      }),
    ).resolves.toMatchObject({
      ttlMs: MIN_TTL_MS,
    });
  });

  it.each([
    ["draining", "RETIRING"],
    ["sealed", "SEALED"],
    ["committed", "COMMITTED"],
  ] as const)(
    "is refused while the version is %s, and removes its own lease",
    async (state, code) => {
      const w = world();
      await commitVersions(w, 3);
      await putRetirement(w, state, [1, 2]);
      const err = await acquireLease(w.reader, {
        format: holdfastLayout,
        branch: "main",
        version: 2,
        ttlMs: 30_000,
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({ kind: "refused", code });
      expect(await collect(listLeases(w.reader))).toEqual([]);
      // The write came first, then the admission read (docs/protocol.md §4).
      const ops = w.fault.requests().map((r) => `${r.operation}:${r.key.split("/")[1]}`);
      expect(ops.indexOf("put:leases")).toBeLessThan(ops.indexOf("list:retirement"));
      // Other versions are unaffected.
      await expect(
        acquireLease(w.reader, {
          format: holdfastLayout,
          branch: "main",
          version: 3,
          ttlMs: 30_000,
        }),
      ).resolves.toBeDefined();
    },
  );

  it("L5 a drain whose owner is gone past its ownership bound does not block acquisition", async () => {
    const w = world();
    await commitVersions(w, 1);
    await putRetirement(w, "draining", [1], { ownershipBoundMs: 60_000 });
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).rejects.toMatchObject({
      code: "RETIRING",
    });
    await w.storeTime.advance(62_000);
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).resolves.toBeDefined();
  });

  it("a cancelled retirement does not block acquisition", async () => {
    const w = world();
    await commitVersions(w, 1);
    await putRetirement(w, "cancelled", [1]);
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).resolves.toBeDefined();
  });
});

describe("request counts (no cleanup in flight)", () => {
  it("acquire takes 3 requests, renew 2, release 1", async () => {
    const w = world();
    await commitVersions(w, 1);
    const counting = new CountingStore(w.memory);
    const ctx = { ...w.reader, store: counting };
    // The first acquire through a store object also HEADs the dataset marker (docs/protocol.md
    // §1.1); every later one is the 3 requests of §4.
    await releaseLease(
      ctx,
      await acquireLease(ctx, {
        format: holdfastLayout,
        branch: "main",
        version: 1,
        ttlMs: 30_000,
      }),
    );
    expect(counting.requestCounts()).toMatchObject({ head: 2, put: 1, list: 1, delete: 1 });
    counting.resetCounts();
    const lease = await acquireLease(ctx, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    expect(counting.requestCounts()).toEqual({
      get: 0,
      head: 1,
      put: 1,
      delete: 0,
      deleteMany: 0,
      list: 1,
    });
    counting.resetCounts();
    const renewed = await renewLease(ctx, lease);
    expect(counting.requestCounts()).toEqual({
      get: 0,
      head: 0,
      put: 1,
      delete: 0,
      deleteMany: 0,
      list: 1,
    });
    counting.resetCounts();
    await releaseLease(ctx, renewed);
    expect(counting.requestCounts()).toEqual({
      get: 0,
      head: 0,
      put: 0,
      delete: 1,
      deleteMany: 0,
      list: 0,
    });
  });

  it("a cleanup in flight costs acquire and renew only the covering record reads", async () => {
    const w = world();
    await commitVersions(w, 3);
    const counting = new CountingStore(w.memory);
    const ctx = { ...w.reader, store: counting };
    const lease = await acquireLease(ctx, {
      format: holdfastLayout,
      branch: "main",
      version: 3,
      ttlMs: 30_000,
    });
    await putRetirement(w, "draining", [1, 2]); // does not cover version 3
    counting.resetCounts();
    await renewLease(ctx, lease);
    expect(counting.requestCounts()).toEqual({
      get: 0,
      head: 0,
      put: 1,
      delete: 0,
      deleteMany: 0,
      list: 1,
    });
  });
});

describe("renew and release", () => {
  it("rewrites the object with new bytes and a later Last-Modified", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    const before = await w.memory.get(lease.key);
    await w.storeTime.advance(5_000);
    const renewed = await renewLease(w.reader, lease);
    const after = await w.memory.get(lease.key);
    expect(renewed.renewal).toBe(1);
    expect(renewed.etag).not.toBe(lease.etag);
    expect(renewed.writerId).not.toBe(lease.writerId);
    expect(Buffer.compare(before!.body, after!.body)).not.toBe(0);
    expect(after!.lastModified.getTime()).toBe(T0 + 5_000);
  });

  it("L1 an admitted lease renews while its version drains, and is refused once sealed", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    const key = await putRetirement(w, "draining", [1]);
    const renewed = await renewLease(w.reader, lease);
    expect(renewed.renewal).toBe(1);
    // The cleaner's census sees the renewed lease and keeps the version.
    const ref = await storageNow(createContext(w.memory));
    expect(await censusLeases(w.reader)("main", [1], ref)).toEqual(new Map([[1, "lease"]]));
    await putRetirement(w, "sealed", [1], { key });
    await expect(renewLease(w.reader, renewed)).rejects.toMatchObject({
      kind: "refused",
      code: "SEALED",
    });
    await putRetirement(w, "committed", [1], { key });
    const latest = await w.memory.head(lease.key);
    await expect(
      renewLease(w.reader, { ...renewed, etag: latest!.etag, renewal: 2 }),
    ).rejects.toMatchObject({
      kind: "refused",
      code: "COMMITTED",
    });
  });

  it("a renewal after an earlier renewal's unknown outcome adopts the landed rewrite", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    // The rewrite lands but every answer is lost, and the read-back fails too.
    w.fault.on(
      { operation: "put", key: lease.key, precondition: "if-match" },
      { type: "apply-then-lose" },
    );
    w.fault.on(
      { operation: "put", key: lease.key, precondition: "if-match", times: 4 },
      { type: "lose-before-apply" },
    );
    w.fault.on({ operation: "get", key: lease.key }, { type: "lose-before-apply" });
    const ctx = { ...w.reader, sleep: recordingSleep() };
    const err = await renewLease(ctx, lease).catch((e: unknown) => e);
    expect(isHoldfastError(err, "unresolved")).toBe(true);
    expect((await w.memory.head(lease.key))?.etag).not.toBe(lease.etag);
    // The holder still has the old ETag; the next renewal recognizes its own lease.
    const renewed = await renewLease(ctx, lease);
    expect((await w.memory.head(lease.key))?.etag).toBe(renewed.etag);
    expect(w.fault.pendingRules()).toEqual([]);
  });

  it("a renewal does not adopt a lease object that is not its own", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    await w.memory.put(lease.key, new TextEncoder().encode("{}"));
    await expect(renewLease(w.reader, lease)).rejects.toMatchObject({ code: "LEASE_LOST" });
  });

  it("a renewal of a lease that was deleted fails as LEASE_LOST and does not recreate it", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    await deleteLeasesOf(w.reader, "main", [1]);
    await expect(renewLease(w.reader, lease)).rejects.toMatchObject({
      kind: "not-found",
      code: "LEASE_LOST",
    });
    expect(await w.memory.head(lease.key)).toBeNull();
  });

  it("refuses to renew a lease its own clock sees as expired, without writing", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 2_000,
    });
    await w.storeTime.advance(1_999);
    const renewed = await renewLease(w.reader, lease);
    await w.storeTime.advance(2_000);
    w.fault.resetCounts();
    await expect(renewLease(w.reader, renewed)).rejects.toMatchObject({
      kind: "refused",
      code: "LEASE_EXPIRED",
    });
    expect(w.fault.requests()).toEqual([]);
  });

  it("release deletes the lease and is idempotent", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    await releaseLease(w.reader, lease);
    await releaseLease(w.reader, lease);
    expect(await collect(listLeases(w.reader))).toEqual([]);
  });
});

describe("census", () => {
  it("L2 a newly acquired lease survives a cleaner whose clock is one TTL ahead", async () => {
    const readerClock = new FakeTime(T0);
    const w = world({ readerClock });
    await commitVersions(w, 1);
    const ttlMs = 60_000;
    await acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs });
    // The cleaner host's clock runs one TTL ahead; the store's clock has not moved.
    const cleanerClock = new FakeTime(T0 + ttlMs);
    const cleaner = createContext(w.memory, { clock: cleanerClock, sleep: cleanerClock.sleep });
    const reference = await storageNow(cleaner);
    expect(await censusLeases(cleaner)("main", [1], reference)).toEqual(new Map([[1, "lease"]]));
    // The seed's bug: expiry computed on the reader's clock, compared on the cleaner's.
    expect(readerClock.now() + ttlMs > cleanerClock.now()).toBe(false);
    // Still active until the TTL (plus precision) has passed in storage time.
    await w.storeTime.advance(ttlMs);
    expect(await censusLeases(cleaner)("main", [1], await storageNow(cleaner))).toEqual(
      new Map([[1, "lease"]]),
    );
    await w.storeTime.advance(1_000);
    expect(await censusLeases(cleaner)("main", [1], await storageNow(cleaner))).toEqual(new Map());
  });

  it("L4 a sub-second TTL survives whole-second Last-Modified truncation", async () => {
    const w = world();
    await commitVersions(w, 1);
    await w.storeTime.advance(900); // acquired at 100.9 s; stamped 100 s
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 900,
    });
    await w.storeTime.advance(101); // cleanup starts at 101.001 s, while the TTL still runs
    const cleaner = createContext(w.memory);
    const census = censusLeases(cleaner);
    expect(await census("main", [1], await storageNow(cleaner))).toEqual(new Map([[1, "lease"]]));
    // Once the TTL has certainly passed (even counting the truncation), it no longer counts.
    await w.storeTime.advance(999); // 102.0 s
    expect(await census("main", [1], await storageNow(cleaner))).toEqual(new Map());
  });

  it("counts only asked versions with active, unreleased leases", async () => {
    const w = world();
    await commitVersions(w, 4);
    const a = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 5_000,
    });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 5_000,
    });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 3,
      ttlMs: 120_000,
    });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 4,
      ttlMs: 5_000,
    });
    await releaseLease(w.reader, a);
    await w.storeTime.advance(10_000);
    const cleaner = createContext(w.memory);
    w.fault.resetCounts();
    const result = await censusLeases(cleaner)("main", [1, 2, 3], await storageNow(cleaner));
    // 1 released, 2 expired (5 s + 1 s < 10 s), 3 active (read to learn its 120 s TTL), 4 not
    // asked.
    expect(result).toEqual(new Map([[3, "lease"]]));
  });

  it("decides most leases from the listing alone and reads only ambiguous ones", async () => {
    const w = world();
    await commitVersions(w, 2);
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 120_000,
    });
    const census = censusLeases(w.reader);
    const ref = new Date(T0);
    w.fault.resetCounts();
    expect(await census("main", [1], ref)).toEqual(new Map([[1, "lease"]]));
    expect(w.fault.requestCounts().get).toBe(0); // younger than MIN_TTL_MS: active without a read
    w.fault.resetCounts();
    expect(await census("main", [1], new Date(T0 + 60_000))).toEqual(new Map([[1, "lease"]]));
    expect(w.fault.requestCounts().get).toBe(1);
    w.fault.resetCounts();
    expect(await census("main", [1], new Date(T0 + MAX_TTL_MS + 1_000))).toEqual(new Map());
    expect(w.fault.requestCounts().get).toBe(0); // older than any valid TTL: expired without a read
  });

  it("counts an unreadable lease as active (fail closed) until the maximum TTL passes", async () => {
    const w = world();
    await commitVersions(w, 1);
    const key = leaseKey("main", 1, "01ARZ3NDEKTSV4RRFFQ69G5FAV", OTHER_SECRET);
    await w.memory.put(key, new TextEncoder().encode("garbage"));
    const census = censusLeases(w.reader);
    expect(await census("main", [1], new Date(T0 + 60_000))).toEqual(new Map([[1, "lease"]]));
    expect(await census("main", [1], new Date(T0 + MAX_TTL_MS + 1_000))).toEqual(new Map());
  });

  it("describeLeases shows a lease whose body is not JSON, or JSON of another schema, as active with no TTL, never expired", async () => {
    const w = world();
    await commitVersions(w, 2);
    const readable = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 5_000,
    });
    const notJson = leaseKey("main", 2, "01ARZ3NDEKTSV4RRFFQ69G5FAV", OTHER_SECRET);
    const otherSchema = leaseKey("main", 2, "01ARZ3NDEKTSV4RRFFQ69G5FAW", OTHER_SECRET);
    await w.memory.put(notJson, new TextEncoder().encode("garbage"));
    await w.memory.put(otherSchema, new TextEncoder().encode(JSON.stringify({ schema: 99 })));
    await w.storeTime.advance(MAX_TTL_MS); // long past every valid TTL
    const views = new Map((await describeLeases(w.reader)).map((v) => [v.key, v]));
    expect(views.get(readable.key)).toMatchObject({ ttlMs: 5_000, active: false });
    for (const key of [notJson, otherSchema]) {
      expect(views.get(key)).toMatchObject({ ttlMs: null, expiresAt: null, active: true });
    }
  });

  it("deleteLeasesOf removes the named versions' leases, or the whole branch's", async () => {
    const w = world();
    await commitVersions(w, 3);
    await commitVersions(w, 1, "dev");
    for (const version of [1, 2, 2, 3])
      await acquireLease(w.reader, {
        format: holdfastLayout,
        branch: "main",
        version,
        ttlMs: 5_000,
      });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "dev",
      version: 1,
      ttlMs: 5_000,
    });
    expect(await deleteLeasesOf(w.reader, "main", [2])).toEqual({ deleted: 2 });
    expect((await collect(listLeases(w.reader, { branch: "main" }))).map((l) => l.version)).toEqual(
      [1, 3],
    );
    expect(await deleteLeasesOf(w.reader, "main", "all")).toEqual({ deleted: 2 });
    expect((await collect(listLeases(w.reader))).map((l) => l.branch)).toEqual(["dev"]);
  });

  it("sweepExpiredLeases removes leases expired past the grace, and only those", async () => {
    for (const conditionalDelete of [true, false]) {
      const w = world();
      await commitVersions(w, 2);
      await acquireLease(w.reader, {
        format: holdfastLayout,
        branch: "main",
        version: 1,
        ttlMs: 5_000,
      });
      await acquireLease(w.reader, {
        format: holdfastLayout,
        branch: "main",
        version: 2,
        ttlMs: 120_000,
      });
      await w.memory.put(
        leaseKey("main", 2, "01ARZ3NDEKTSV4RRFFQ69G5FAV", OTHER_SECRET),
        new TextEncoder().encode("junk"),
      );
      const store = conditionalDelete
        ? w.memory
        : new FaultStore(w.memory, { capabilities: { atomicConditionalDelete: false } });
      const cleaner = createContext(store);
      const sweep = (ref: number) =>
        sweepExpiredLeases(cleaner, "main", new Date(ref), { graceMs: 10_000 });
      expect(await sweep(T0 + 15_000)).toEqual({ deleted: 0 }); // 5 s + 1 s + 10 s not yet passed
      expect(await sweep(T0 + 16_000)).toEqual({ deleted: 1 });
      expect((await collect(listLeases(cleaner))).map((l) => l.version)).toEqual([2, 2]);
      expect(await sweep(T0 + 131_000)).toEqual({ deleted: 1 }); // the 120 s lease
      // The unreadable object goes only once no valid TTL could still cover it.
      expect(await sweep(T0 + MAX_TTL_MS + 11_000)).toEqual({ deleted: 1 });
      expect(await collect(listLeases(cleaner))).toEqual([]);
    }
  });

  it("a sweep leaves a lease that was renewed after it was judged expired (conditional delete)", async () => {
    const w = world();
    await commitVersions(w, 1);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 5_000,
    });
    // The renewal lands between the sweep's read of the lease and its delete.
    w.fault.on(
      { operation: "delete", key: lease.key },
      { type: "before", run: (inner) => inner.put(lease.key, new TextEncoder().encode("renewed")) },
    );
    const result = await sweepExpiredLeases(w.reader, "main", new Date(T0 + 20_000), {
      graceMs: 10_000,
    });
    expect(result).toEqual({ deleted: 0 });
    expect(await w.memory.head(lease.key)).not.toBeNull();
  });
});
