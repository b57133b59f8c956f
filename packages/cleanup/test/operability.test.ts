import { HoldfastError, isHoldfastError } from "@holdfast/conditional-store";
import { FakeTime, FaultStore } from "@holdfast/conditional-store/testing";
import { acquireLease } from "@holdfast/leases";
import { createTag, holdfastFormat } from "@holdfast/refs-lifecycle";
import {
  acquireCleanupLock,
  CLEANUP_LOCK_KEY,
  commit,
  drain,
  readAdmission,
  retirementKey,
  seal,
} from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { type CleanupStats, cleanup, planCleanup, recover } from "../src/index.js";
import {
  DAY,
  formatWithCensus,
  keysUnder,
  MINUTE,
  seedDataset,
  versionsOf,
  world,
} from "./helpers.js";

const GARBAGE: [string, Uint8Array][] = [
  ["invalid JSON", new TextEncoder().encode('{"schema":1,')],
  ["an empty body", new Uint8Array()],
  ["binary", new Uint8Array([0, 0xff, 0x13, 0x37])],
];

describe("garbage retirement records fail closed with a typed error (docs/operations.md)", () => {
  for (const [what, body] of GARBAGE) {
    it(`${what}: cleanup, recover, lease acquire and tag create name the key`, async () => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 3 });
      const key = retirementKey("main", 1, 3, "01GARBAGE");
      await store.put(key, body);
      for (const attempt of [
        () => cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat }),
        () => recover(ctx, { format: holdfastFormat }),
        () =>
          acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 2, ttlMs: MINUTE }),
        () =>
          createTag(
            ctx,
            { name: "t", target: { branch: "main", version: 2 } },
            { format: holdfastFormat },
          ),
      ]) {
        const error = await attempt().catch((e: unknown) => e);
        expect(isHoldfastError(error, "invalid-input")).toBe(true);
        expect(error).toMatchObject({ code: "MALFORMED_OBJECT", key });
        expect((error as Error).cause).toBeInstanceOf(SyntaxError);
      }
      expect(versionsOf(store)).toEqual([1, 2, 3]);
    });
  }
});

describe("the dry run judges leases in storage time", () => {
  for (const skew of [+DAY, -DAY]) {
    it(`plan == run with the host clock ${skew > 0 ? "one day ahead" : "one day behind"}`, async () => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 4 });
      // version 2 has an active lease (1 h), version 3 one that expired 10 min ago
      await acquireLease(ctx, {
        format: holdfastFormat,
        branch: "main",
        version: 3,
        ttlMs: MINUTE,
      });
      await time.advance(10 * MINUTE);
      await acquireLease(ctx, {
        format: holdfastFormat,
        branch: "main",
        version: 2,
        ttlMs: 60 * MINUTE,
      });
      const host = new FakeTime(time.now() + skew);
      const skewed = { ...ctx, clock: host };
      const plan = await planCleanup(skewed, { retainVersions: 1 }, { format: holdfastFormat });
      const run = await cleanup(skewed, { retainVersions: 1 }, { format: holdfastFormat });
      expect(run.retired.map((r) => r.version)).toEqual([1, 3]);
      expect(plan.retired).toEqual(run.retired);
      expect(plan.retained.filter((r) => r.reason === "lease")).toEqual([
        { branch: "main", version: 2, reason: "lease", reasons: ["lease"] },
      ]);
      expect(versionsOf(store)).toEqual([2, 4]);
    });
  }
});

describe("interrupts stop a cleanup at the next safe point", () => {
  it("an abort during the lease census gives up the drain in-process and reports what was done", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 4 });
    const stop = new AbortController();
    const error = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        signal: stop.signal,
        leaseCensus: async () => {
          stop.abort(new Error("interrupted by SIGINT"));
          return new Map();
        },
      },
    ).catch((e: unknown) => e);
    expect(isHoldfastError(error, "aborted")).toBe(true);
    expect(error).toMatchObject({ code: "CLEANUP_INTERRUPTED" });
    const stats = (error as HoldfastError & { stats: CleanupStats }).stats;
    expect(stats.retired).toEqual([]);
    // nothing blocks leases afterwards: the drain was abandoned, the lock released
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    expect(keysUnder(store, "_holdfast/cleanup/")).toEqual([]);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: MINUTE });
    expect(versionsOf(store)).toEqual([1, 2, 3, 4]);
  });

  it("an abort after the commit stops before the next record; recovery finishes it", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const stop = new AbortController();
    const error = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        signal: stop.signal,
        maxVersionsPerRecord: 2,
        onProgress: (p) => {
          // The first record's 4 data files and 2 manifests are deleted (objects, types.ts).
          if (p.phase === "delete" && p.done === 6) stop.abort(new Error("SIGTERM"));
        },
      },
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: "aborted", code: "CLEANUP_INTERRUPTED" });
    const stats = (error as HoldfastError & { stats: CleanupStats }).stats;
    expect(stats.retired.map((r) => r.version)).toEqual([1, 2]);
    expect(versionsOf(store)).toEqual([3, 4, 5]);
    const after = await recover(ctx, { format: holdfastFormat });
    expect(after.finished.map((r) => r.version)).toEqual([3, 4]);
    expect(versionsOf(store)).toEqual([5]);
  });
});

describe("one cleanup at a time per dataset", () => {
  it("a second cleanup exits with CLEANUP_RUNNING (owner, since); --concurrent runs; a stale lock is taken over", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    await acquireCleanupLock(ctx, { owner: "01OTHERCLEANER" });
    const error = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat }).catch(
      (e: unknown) => e,
    );
    expect(isHoldfastError(error, "conflict")).toBe(true);
    expect(error).toMatchObject({ code: "CLEANUP_RUNNING" });
    expect((error as Error).message).toMatch(
      /another cleanup is running \(owner 01OTHERCLEANER, since /,
    );
    expect(versionsOf(store)).toEqual([1, 2, 3]);
    const concurrent = await cleanup(
      ctx,
      { retainVersions: 2 },
      { format: holdfastFormat, concurrent: true },
    );
    expect(concurrent.retired.map((r) => r.version)).toEqual([1]);
    await time.advance(2 * MINUTE); // the other cleaner stopped renewing
    const taken = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(taken.retired.map((r) => r.version)).toEqual([2]);
    expect(keysUnder(store, "_holdfast/cleanup/")).toEqual([]);
  });

  it("a run's storage time is its own lock write's Last-Modified (no clock probe); a lock that does not show the write means a probe", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const run = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(run.retired.map((r) => r.version)).toEqual([1, 2]);
    // lock + drain + seal + commit + the deletion mark (docs/protocol.md §5.5) + the retired floor
    // (§2.1, F1); the lock's HEAD gave the run its "now"
    expect(run.requests.put).toBe(6);
    await seedDataset(ctx, time, { versions: 2 });
    // A store whose HEAD of the lock shows no write of this run: the run probes instead.
    let probes = 0;
    const hidden = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === "head") {
          return async (key: string, options?: object) => {
            if (key === CLEANUP_LOCK_KEY) return null;
            if (key.startsWith("_holdfast/clock/")) probes += 1;
            return target.head(key, options);
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const probed = await cleanup(
      { ...ctx, store: hidden },
      { retainVersions: 1 },
      { format: holdfastFormat },
    );
    expect(probed.retired.map((r) => r.version)).toEqual([3, 4]);
    expect(probes).toBe(1);
    // lock + the probe + drain + seal + commit + the deletion mark + the retired floor
    expect(probed.requests.put).toBe(7);
    expect(keysUnder(store, "_holdfast/clock/")).toEqual([]); // the probe deleted its object
    expect(keysUnder(store, "_holdfast/cleanup/")).toEqual([]);
  });

  it("three cleaners at once: one runs, the others are told; retirements are counted once", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 10 });
    const results = await Promise.allSettled(
      [1, 2, 3].map(() => cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat })),
    );
    const done = results.filter((r) => r.status === "fulfilled");
    expect(done).toHaveLength(1);
    const refused = results.filter((r) => r.status === "rejected");
    for (const r of refused)
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "CLEANUP_RUNNING" });
    const total = done.reduce(
      (n, r) => n + (r as PromiseFulfilledResult<CleanupStats>).value.retired.length,
      0,
    );
    expect(total).toBe(9);
    expect(versionsOf(store)).toEqual([10]);
  });

  it("a run that finishes another run's committed retirement reports it as finished, not retired", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 4 });
    const { readManifest } = await import("@holdfast/dataset");
    const etag = async (v: number) => (await readManifest(ctx, "main", v)).etag;
    // Another cleaner committed versions 1-2 and crashed before deleting them.
    const versions = [
      { version: 1, manifestEtag: await etag(1) },
      { version: 2, manifestEtag: await etag(2) },
    ];
    await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions, owner: "01A" })),
    );
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.retired.map((r) => r.version)).toEqual([3]);
    expect(stats.finished.map((r) => r.version)).toEqual([1, 2]);
    expect(versionsOf(store)).toEqual([4]);
  });
});

describe("stuck states: the cleanup's own record proves its owner alive", () => {
  it("a cleanup that runs longer than the bound keeps its drain owned (heartbeat in storage time)", async () => {
    const { ctx, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const seen: string[] = [];
    await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        heartbeatSleep: time.sleep,
        leaseCensus: async () => {
          if (seen.length === 0) {
            await time.advance(3 * MINUTE); // a census that takes three bounds
            seen.push((await readAdmission(ctx, "main", 1)).state);
          }
          return new Map();
        },
      },
    );
    expect(seen).toEqual(["draining"]);
  });
});

describe("failed deletions say why", () => {
  it("a read-only store mid-cleanup: the first cause (EROFS, refused) is named, not an unknown outcome", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const readOnly = new (class extends FaultStore {
      override async deleteMany(keys: readonly string[]) {
        return {
          deleted: [],
          failed: keys.map((key) => ({
            key,
            error: new HoldfastError(`EROFS: read-only file system, unlink '${key}'`, {
              kind: "refused",
              operation: "deleteMany",
              key,
              code: "EROFS",
            }),
          })),
        };
      }
    })(store);
    const error = await cleanup(
      { ...ctx, store: readOnly },
      { retainVersions: 1 },
      { format: holdfastFormat },
    ).catch((e: unknown) => e);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error).toMatchObject({ code: "EROFS", operation: "deleteMany" });
    expect((error as Error).message).toMatch(
      /^\d+ deletions failed; first: data\/.* EROFS: read-only file system/,
    );
    expect(isHoldfastError((error as Error).cause, "refused")).toBe(true);
  });

  it("every answer of the commit and its confirmation lost: cleanup reports unresolved, deletes nothing", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const faulty = new FaultStore(store);
    let committing = false;
    faulty.on(
      {
        operation: "put",
        precondition: "if-match",
        key: (k) => committing && k.startsWith("_holdfast/retirement/"),
        times: Infinity,
      },
      { type: "apply-then-lose" },
    );
    faulty.on(
      {
        operation: "get",
        key: (k) => committing && k.startsWith("_holdfast/retirement/"),
        times: Infinity,
      },
      { type: "lose-before-apply" },
    );
    let censuses = 0;
    const error = await cleanup(
      { ...ctx, store: faulty },
      { retainVersions: 1 },
      {
        concurrent: true,
        format: formatWithCensus(async () => {
          committing = true; // the next if-match put on the record is the commit
          return new Map();
        }),
        leaseCensus: async () => {
          censuses += 1;
          return new Map();
        },
      },
    ).catch((e: unknown) => e);
    expect(censuses).toBe(2);
    expect(isHoldfastError(error, "unresolved")).toBe(true);
    expect(error).toMatchObject({ code: "COMMIT_UNRESOLVED" });
    expect(versionsOf(store)).toEqual([1, 2, 3]);
  });
});
