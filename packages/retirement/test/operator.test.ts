import { isHoldfastError } from "@holdfast/conditional-store";
import { describe, expect, it } from "vitest";
import {
  abandonRetirement,
  acquireCleanupLock,
  CLEANUP_LOCK_KEY,
  commit,
  DEFAULT_OWNERSHIP_BOUND_MS,
  drain,
  HeldRecord,
  isCleanupLockLost,
  isFenced,
  readAdmission,
  readCleanupLock,
  recoverRetirements,
  releaseCleanupLock,
  renewCleanupLock,
  seal,
  stampCleanupLock,
  startHeartbeat,
} from "../src/index.js";
import { memoryContext, noLeases, noRefs } from "./helpers.js";

const versions = [
  { version: 1, manifestEtag: "e1" },
  { version: 2, manifestEtag: "e2" },
];

describe("stuck states end sooner (docs/operations.md)", () => {
  it("a crashed owner's drain blocks acquisitions for about a minute by default, then reads open", async () => {
    const { ctx, time } = memoryContext();
    await drain(ctx, { branch: "main", versions, owner: "crashed" });
    expect(DEFAULT_OWNERSHIP_BOUND_MS).toBeLessThanOrEqual(60_000);
    await time.advance(30_000);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("draining");
    await time.advance(32_000); // 62 s after the last write: bound + one precision interval passed
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
  });

  it("a live owner's heartbeat keeps its drain owned past the bound; a fenced owner cannot renew or seal", async () => {
    const { ctx, time } = memoryContext();
    const held = new HeldRecord(ctx, await drain(ctx, { branch: "main", versions, owner: "live" }));
    for (let i = 0; i < 6; i += 1) {
      await time.advance(20_000);
      await held.renew();
    }
    // 120 s after the drain, but 0 s after the last renewal: still owned
    expect((await readAdmission(ctx, "main", 1)).state).toBe("draining");
    const report = await recoverRetirements(ctx, {
      leaseCensus: noLeases,
      referenceCensus: noRefs,
    });
    expect(report.live.map((h) => h.key)).toEqual([held.handle.key]);
    // the owner stops renewing: recovery fences and removes it after the bound
    await time.advance(62_000);
    const later = await recoverRetirements(ctx, { leaseCensus: noLeases, referenceCensus: noRefs });
    expect(later.cancelled).toEqual([held.handle.key]);
    expect(isFenced(await held.renew().catch((e: unknown) => e))).toBe(true);
    expect(isFenced(await held.update((h) => seal(ctx, h)).catch((e: unknown) => e))).toBe(true);
  });

  it("a heartbeat beats on its sleep until stopped", async () => {
    let beats = 0;
    let pauses = 0;
    const sleep = async (_ms: number, signal?: AbortSignal) => {
      pauses += 1;
      if (pauses > 3) await new Promise((_, reject) => signal?.addEventListener("abort", reject));
    };
    const heartbeat = startHeartbeat({ everyMs: 20_000, sleep, beat: async () => void beats++ });
    await new Promise((r) => setTimeout(r, 10));
    await heartbeat.stop();
    expect(beats).toBe(3);
  });

  it("recover --abandon ends a live owner's pre-commit record now; the owner is fenced", async () => {
    const { ctx } = memoryContext();
    const h = await drain(ctx, { branch: "main", versions, owner: "live" });
    const done = await abandonRetirement(ctx, h.record.opId);
    expect(done).toMatchObject({ key: h.key, previousState: "draining", versions: [1, 2] });
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
    expect(isFenced(await seal(ctx, h).catch((e: unknown) => e))).toBe(true);
  });

  it("recover --abandon refuses a committed record: committed runs to completion", async () => {
    const { ctx } = memoryContext();
    const h = await commit(
      ctx,
      await seal(ctx, await drain(ctx, { branch: "main", versions, owner: "o" })),
    );
    const error = await abandonRetirement(ctx, h.key).catch((e: unknown) => e);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error).toMatchObject({ code: "RETIREMENT_COMMITTED", key: h.key });
    expect((await readAdmission(ctx, "main", 1)).state).toBe("committed");
    const missing = await abandonRetirement(ctx, "01NOSUCHOP").catch((e: unknown) => e);
    expect(isHoldfastError(missing, "not-found")).toBe(true);
  });
});

describe("one cleanup at a time: the cleanup lock", () => {
  it("a second taker gets CLEANUP_RUNNING naming the owner and since when", async () => {
    const { ctx } = memoryContext();
    const since = new Date(Date.UTC(2026, 5, 1, 12));
    const lock = await acquireCleanupLock(ctx, { owner: "01FIRST", storageNow: since });
    const error = await acquireCleanupLock(ctx, { owner: "01SECOND" }).catch((e: unknown) => e);
    expect(isHoldfastError(error, "conflict")).toBe(true);
    expect(error).toMatchObject({ code: "CLEANUP_RUNNING", key: CLEANUP_LOCK_KEY });
    expect((error as Error).message).toContain(
      "another cleanup is running (owner 01FIRST, since 2026-06-01T12:00:00.000Z)",
    );
    await releaseCleanupLock(ctx, lock);
    expect(await readCleanupLock(ctx)).toBeNull();
    await acquireCleanupLock(ctx, { owner: "01SECOND" });
  });

  it("a lock renewed within its bound holds; one whose owner stopped renewing is taken over, and the old owner learns it", async () => {
    const { ctx, time } = memoryContext();
    let lock = await acquireCleanupLock(ctx, { owner: "01FIRST" });
    await time.advance(50_000);
    lock = await renewCleanupLock(ctx, lock);
    await time.advance(50_000);
    const refused = await acquireCleanupLock(ctx, { owner: "01SECOND" }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "CLEANUP_RUNNING" });
    await time.advance(12_000); // 62 s since the last renewal
    const taken = await acquireCleanupLock(ctx, { owner: "01SECOND" });
    expect(taken.body.owner).toBe("01SECOND");
    expect(isCleanupLockLost(await renewCleanupLock(ctx, lock).catch((e: unknown) => e))).toBe(
      true,
    );
    await releaseCleanupLock(ctx, lock); // not ours any more: left alone
    expect((await readCleanupLock(ctx))?.owner).toBe("01SECOND");
  });

  it("the holder's own lock write is its storage time: stamped once, kept as since across renewals, nothing once taken over", async () => {
    const { ctx, time } = memoryContext();
    const written = time.now();
    const lock = await acquireCleanupLock(ctx, { owner: "01FIRST" });
    await time.advance(5_000);
    const stamped = await stampCleanupLock(ctx, lock);
    // The store's stamp of the lock write, not the reading time 5 s later.
    expect(stamped?.storageNow.getTime()).toBe(written);
    expect(stamped?.lock.body.since).toBe(new Date(written).toISOString());
    await time.advance(20_000);
    const renewed = await renewCleanupLock(ctx, stamped!.lock);
    expect((await readCleanupLock(ctx))?.since).toBe(new Date(written).toISOString());
    await time.advance(70_000); // stale: taken over
    await acquireCleanupLock(ctx, { owner: "01SECOND" });
    expect(await stampCleanupLock(ctx, renewed)).toBeUndefined();
  });

  it("with wait, the second taker polls until the first releases", async () => {
    const { ctx } = memoryContext();
    const first = await acquireCleanupLock(ctx, { owner: "01FIRST" });
    let polls = 0;
    const waiting = acquireCleanupLock(
      { ...ctx, sleep: async () => void (++polls === 2 && (await releaseCleanupLock(ctx, first))) },
      { owner: "01SECOND", wait: new AbortController().signal },
    );
    expect((await waiting).body.owner).toBe("01SECOND");
    expect(polls).toBe(2);
  });
});
