import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { listVersions, readManifest } from "@holdfast/dataset";
import { acquireLease, listLeases, renewLease } from "@holdfast/leases";
import { createBranch, createTag, getTag, holdfastFormat } from "@holdfast/refs-lifecycle";
import { abandon, drain, readAdmission, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup, recover } from "../src/index.js";
import { keysUnder, MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

const BOUND = 15 * MINUTE;

async function etagsOf(ctx: Parameters<typeof listVersions>[0], versions: number[]) {
  const out = [];
  for await (const e of listVersions(ctx, "main")) {
    if (versions.includes(e.version)) out.push({ version: e.version, manifestEtag: e.etag });
  }
  return out;
}

describe("lease scenarios", () => {
  it("L1 a lease raced with the drain stays renewable and the version is retained", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    let lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    let calls = 0;
    let lateAcquire: unknown;
    const { censusLeases } = await import("@holdfast/leases");
    const real = censusLeases(ctx);
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        leaseCensus: async (branch, versions, at) => {
          calls += 1;
          if (calls === 1) {
            // The drain is durable: the admitted lease renews, a new one is refused.
            expect((await readAdmission(ctx, "main", 1)).state).toBe("draining");
            lease = await renewLease(ctx, lease);
            lateAcquire = await acquireLease(ctx, {
              format: holdfastFormat,
              branch: "main",
              version: 2,
              ttlMs: 60_000,
            }).catch((e) => e);
          }
          return real(branch, versions, at);
        },
      },
    );
    expect(isHoldfastError(lateAcquire, "refused")).toBe(true);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
    );
    expect(versionsOf(store)).toEqual([1, 3]);
    lease = await renewLease(ctx, lease);
    expect(lease.renewal).toBe(2);
    // the refused acquirer removed its own lease
    expect((await listLeases(ctx, { branch: "main", version: 2 }).next()).done).toBe(true);
  });

  it("L3 a successful cleanup leaves no retirement marker or lease for removed versions", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 1_000 });
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 3, ttlMs: 600_000 });
    await time.advance(5_000); // the lease on 1 has expired
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.retired.map((r) => r.version)).toEqual([1, 2]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    expect(keysUnder(store, "_holdfast/leases/main/00000000000000000001/")).toEqual([]);
    expect(keysUnder(store, "_holdfast/leases/main/00000000000000000003/")).toHaveLength(1);
  });

  it("L5 a drain dropped in-process does not block later acquisition", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const error = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        leaseCensus: async () => {
          throw new Error("census failed");
        },
      },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(Error);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 60_000 });
    expect(versionsOf(store)).toEqual([1, 2, 3]);
  });

  it("L5 a drain whose owner vanished stops blocking at its bound and is fenced", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const owner = ctx.ids.next();
    const stale = await drain(ctx, { branch: "main", versions: await etagsOf(ctx, [1]), owner });
    const refused = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    }).catch((e) => e);
    expect(isHoldfastError(refused, "refused")).toBe(true);
    await time.advance(BOUND + 2_000);
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 60_000 });
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.recovered.cancelled).toBe(1);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
    );
    const late = await seal(ctx, stale).catch((e) => e);
    expect(isHoldfastError(late, "conflict")).toBe(true);
    expect(versionsOf(store)).toEqual([1, 3]);
  });

  it("L6 a recovery claim does not outlive the live owner's cancellation and a new lease", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const owner = ctx.ids.next();
    let h = await drain(ctx, { branch: "main", versions: await etagsOf(ctx, [1]), owner });
    h = await seal(ctx, h);
    const recovered = await recover(ctx, { format: holdfastFormat });
    expect(recovered.retired).toEqual([]); // a live owner's seal is not claimed
    await abandon(ctx, h);
    let lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    await time.advance(1_000);
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
    );
    expect(versionsOf(store)).toEqual([1, 3]);
    lease = await renewLease(ctx, lease);
    expect(lease.renewal).toBe(1);
  });

  it("L8 a finalize that fails removing leases keeps its marker; the next run completes it", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 1_000 });
    await time.advance(5_000);
    const first = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        deleteLeases: async () => {
          throw new Error("lease deletion failed");
        },
      },
    );
    expect(first.warnings.join()).toMatch(/finalize failed/);
    expect(keysUnder(store, "_holdfast/retirement/")).toHaveLength(1);
    expect(keysUnder(store, "_holdfast/leases/")).toHaveLength(1);
    const second = await recover(ctx, { format: holdfastFormat });
    expect(second.recovered.committed).toBe(1);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    expect(keysUnder(store, "_holdfast/leases/")).toEqual([]);
  });

  it("L12 after a crash between seal and census, an active lease cancels the seal and renews", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    let lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    const owner = ctx.ids.next();
    await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: await etagsOf(ctx, [1, 2]), owner }),
    );
    // crash: no census, no commit; renewals are cut off while the seal stands
    await time.advance(1_000);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("sealed");
    // The holder's renewal meets the seal and is refused (it rewrote its lease first).
    await expect(renewLease(ctx, lease)).rejects.toMatchObject({ kind: "refused", code: "SEALED" });
    const stats = await recover(ctx, { format: holdfastFormat });
    expect(versionsOf(store)).toEqual([1, 3]);
    expect(stats.finished).toEqual([{ branch: "main", version: 2 }]);
    lease = await renewLease(ctx, lease);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });
});

describe("reference scenarios", () => {
  it("L7 a tag written after a seal (then crash) keeps its version", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    await seal(
      ctx,
      await drain(ctx, {
        branch: "main",
        versions: await etagsOf(ctx, [1]),
        owner: ctx.ids.next(),
      }),
    );
    // The crashed seal refuses new publications; a released client writes the file directly.
    const refused = await createTag(
      ctx,
      {
        name: "after-seal",
        target: { branch: "main", version: 1 },
      },
      { format: holdfastFormat },
    ).catch((e) => e);
    expect(isHoldfastError(refused, "refused")).toBe(true);
    await store.put(
      "_refs/tags/after-seal.json",
      encodeJson({ schema: 1, name: "after-seal", target: { branch: "main", version: 1 } }),
    );
    await time.advance(BOUND + 2_000);
    const stats = await cleanup(ctx, { beforeVersion: 1 }, { format: holdfastFormat });
    expect(stats.retired).toEqual([]);
    expect(versionsOf(store)).toEqual([1, 2, 3]);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
    await readManifest(ctx, "main", 1);
  });

  for (const [moment, nth] of [
    ["before the seal", 1],
    ["after the censuses, before the commit", 2],
  ] as const) {
    it(`L9 no tag survives pointing at a committed-retired version (publication ${moment})`, async () => {
      const { ctx: base, store, time } = world();
      await seedDataset(base, time, { versions: 3 });
      const faulty = new FaultStore(base.store);
      const ctx = { ...base, store: faulty };
      let published: unknown;
      faulty.on(
        { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth },
        {
          type: "before",
          run: async () => {
            published = await createTag(
              base,
              {
                name: "racing",
                target: { branch: "main", version: 1 },
              },
              { format: holdfastFormat },
            ).catch((e) => e);
          },
        },
      );
      await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
      const tag = await getTag(base, "racing", { format: holdfastFormat }).catch(() => null);
      if (nth === 1) {
        // published while draining: the reference census after the seal sees it
        expect(tag?.target).toEqual({ branch: "main", version: 1 });
        expect(versionsOf(store)).toEqual([1, 3]);
      } else {
        // sealed: the publication is refused and leaves nothing behind
        expect(isHoldfastError(published, "refused")).toBe(true);
        expect(tag).toBeNull();
        expect(versionsOf(store)).toEqual([3]);
      }
      expect(keysUnder(store, "_holdfast/refs/intents/")).toEqual([]);
    });
  }

  it("L10 a recovered retirement still respects a descendant branch under a milder policy", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    await createBranch(
      ctx,
      { name: "child", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await seal(
      ctx,
      await drain(ctx, {
        branch: "main",
        versions: await etagsOf(ctx, [1]),
        owner: ctx.ids.next(),
      }),
    );
    await time.advance(BOUND + 2_000);
    const stats = await cleanup(ctx, { beforeVersion: 1 }, { format: holdfastFormat });
    expect(stats.retired).toEqual([]);
    expect(stats.recovered.retained).toBe(1);
    expect(versionsOf(store)).toEqual([1, 2]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });

  it("L11 a canonical reference written after intent and seal blocks the retirement commit", async () => {
    const { ctx: base, store, time } = world();
    await seedDataset(base, time, { versions: 3 });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const publisher = new FaultStore(base.store);
    publisher.on(
      { operation: "put", key: "_refs/tags/racing.json" },
      { type: "before", run: () => gate },
    );
    // Intent written and admission passed (open); the canonical write waits.
    const tag = createTag(
      { ...base, store: publisher },
      {
        name: "racing",
        target: { branch: "main", version: 1 },
      },
      { format: holdfastFormat },
    );
    await time.advance(0);
    let calls = 0;
    const { censusLeases } = await import("@holdfast/leases");
    const leases = censusLeases(base);
    const stats = await cleanup(
      base,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        leaseCensus: async (branch, versions, at) => {
          calls += 1;
          if (calls === 2) {
            // sealed: the canonical lands and the intent is removed before the reference census
            release();
            await tag;
            expect(keysUnder(store, "_holdfast/refs/intents/")).toEqual([]);
          }
          return leases(branch, versions, at);
        },
      },
    );
    expect((await tag).target).toEqual({ branch: "main", version: 1 });
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "tag" }),
    );
    expect(versionsOf(store)).toEqual([1, 3]);
  });

  it("a live cleaner fenced by a recovering one stops that retirement without failing", async () => {
    const { ctx, store, time, on } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const { censusLeases } = await import("@holdfast/leases");
    const leases = censusLeases(ctx);
    let calls = 0;
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
        leaseCensus: async (branch, versions, at) => {
          calls += 1;
          if (calls === 2) {
            // sealed: a released client tags v1, and another cleaner's recovery runs
            await store.put(
              "_refs/tags/old.json",
              encodeJson({ schema: 1, name: "old", target: { branch: "main", version: 1 } }),
            );
            // (a recovery that ignores the lock: concurrent cleaners stay safe)
            const other = await recover(on(store), { format: holdfastFormat, concurrent: true });
            expect(other.finished).toEqual([{ branch: "main", version: 2 }]);
          }
          return leases(branch, versions, at);
        },
      },
    );
    expect(stats.warnings.join()).toMatch(/taken over/);
    expect(versionsOf(store)).toEqual([1, 3]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });

  it("L11 a recovered seal never overrides a reference intent in flight", async () => {
    const { ctx: base, store, time } = world();
    await seedDataset(base, time, { versions: 3 });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const publisher = new FaultStore(base.store);
    publisher.on(
      { operation: "put", key: "_refs/tags/slow.json" },
      { type: "before", run: () => gate },
    );
    const tag = createTag(
      { ...base, store: publisher },
      {
        name: "slow",
        target: { branch: "main", version: 1 },
      },
      { format: holdfastFormat },
    );
    await time.advance(0);
    expect(keysUnder(store, "_holdfast/refs/intents/")).toHaveLength(1);
    // a cleaner seals 1 and 2 and crashes before its censuses
    await seal(
      base,
      await drain(base, { branch: "main", versions: await etagsOf(base, [1, 2]), owner: "01DEAD" }),
    );
    await time.advance(BOUND + 2_000);
    const stats = await recover(base, { format: holdfastFormat });
    expect(stats.finished).toEqual([{ branch: "main", version: 2 }]);
    expect(versionsOf(store)).toEqual([1, 3]);
    release();
    expect((await tag).target).toEqual({ branch: "main", version: 1 });
    await readManifest(base, "main", 1);
  });
});
