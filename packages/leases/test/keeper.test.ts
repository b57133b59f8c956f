import { isHoldfastError } from "@holdfast/conditional-store";
import { holdfastLayout } from "@holdfast/dataset";
import {
  acquireLease,
  encodeLeaseBody,
  keepLease,
  releaseLease,
  withLease,
} from "@holdfast/leases";
import { describe, expect, it } from "vitest";
import { commitVersions, OTHER_SECRET, putRetirement, T0, world } from "./helpers.js";

async function setup(ttlMs = 3_000) {
  const w = world();
  await commitVersions(w, 1);
  const lease = await acquireLease(w.reader, {
    format: holdfastLayout,
    branch: "main",
    version: 1,
    ttlMs,
  });
  w.fault.resetCounts();
  return { w, lease };
}

/** Records the local time at which the signal aborted. */
function abortedAt(signal: AbortSignal, clock: { now(): number }): { at: number | null } {
  const seen = { at: null as number | null };
  signal.addEventListener("abort", () => {
    seen.at = clock.now();
  });
  return seen;
}

describe("lease keeper", () => {
  it("renews on its schedule and never fences while renewals succeed", async () => {
    const { w, lease } = await setup();
    const keeper = keepLease(w.reader, lease);
    await w.storeTime.advance(30_000);
    expect(keeper.signal.aborted).toBe(false);
    expect(keeper.lease.renewal).toBe(30);
    expect(keeper.deadlineMs).toBe(T0 + 30_000 + 3_000 - 750);
    // The stored object is the latest renewal.
    expect((await w.memory.head(lease.key))?.etag).toBe(keeper.lease.etag);
    await keeper.stop();
    const sent = w.fault.requests().length;
    await w.storeTime.advance(30_000);
    expect(w.fault.requests().length).toBe(sent);
    expect(keeper.signal.aborted).toBe(false);
    await releaseLease(w.reader, keeper.lease);
    expect(await w.memory.head(lease.key)).toBeNull();
  });

  it("fences itself at the deadline while a renewal hangs", async () => {
    const { w, lease } = await setup();
    w.fault.on(
      { operation: "put", precondition: "if-match", times: Number.POSITIVE_INFINITY },
      { type: "delay", ms: 60_000 },
    );
    const keeper = keepLease(w.reader, lease);
    const seen = abortedAt(keeper.signal, w.storeTime);
    // Deadline: written at T0, ttl 3 s, margin 750 ms.
    await w.storeTime.advance(2_249);
    expect(keeper.signal.aborted).toBe(false);
    await w.storeTime.advance(1);
    expect(keeper.signal.aborted).toBe(true);
    expect(seen.at).toBe(T0 + 2_250);
    expect(keeper.signal.reason).toMatchObject({ kind: "aborted", code: "LEASE_FENCED" });
    // The fence precedes the end of protection (written at T0 + ttl) in real time.
    expect(seen.at!).toBeLessThan(lease.writtenAtLocalMs + lease.ttlMs);
    await w.storeTime.advance(60_000);
    await keeper.stop();
  });

  it("C10 a renewal whose answers are lost cannot postpone the fence with re-issues", async () => {
    const { w, lease } = await setup();
    w.fault.on(
      { operation: "put", precondition: "if-match", times: Number.POSITIVE_INFINITY },
      { type: "lose-before-apply" },
    );
    const errors: unknown[] = [];
    const keeper = keepLease(w.reader, lease, { onError: (e) => errors.push(e) });
    const seen = abortedAt(keeper.signal, w.storeTime);
    await w.storeTime.advance(10_000);
    expect(seen.at).toBe(T0 + 2_250);
    // The re-issue budget (0.2+0.4+0.8+1.6 s after the first renewal at 1 s) would have run
    // to 4 s (5 puts); the fence cut it short during the 0.8 s pause: puts at 1, 1.2, 1.6 s.
    const puts = w.fault.requests().filter((r) => r.operation === "put");
    expect(puts).toHaveLength(3);
    expect(errors.some((e) => isHoldfastError(e, "unresolved", "aborted"))).toBe(true);
    await keeper.stop();
  });

  it("keeps renewing while the version drains, and fences at once when it is sealed", async () => {
    const { w, lease } = await setup();
    const keeper = keepLease(w.reader, lease);
    await w.storeTime.advance(1_000);
    expect(keeper.lease.renewal).toBe(1);
    const key = await putRetirement(w, "draining", [1]);
    await w.storeTime.advance(3_000);
    expect(keeper.signal.aborted).toBe(false);
    expect(keeper.lease.renewal).toBe(4);
    await putRetirement(w, "sealed", [1], { key });
    const seen = abortedAt(keeper.signal, w.storeTime);
    await w.storeTime.advance(1_000);
    expect(keeper.signal.aborted).toBe(true);
    expect(seen.at).toBe(T0 + 5_000);
    expect(keeper.signal.reason).toMatchObject({ kind: "refused", code: "SEALED" });
    await keeper.stop();
  });

  it("fences at once when its lease object was deleted", async () => {
    const { w, lease } = await setup();
    const keeper = keepLease(w.reader, lease);
    await w.memory.delete(lease.key);
    await w.storeTime.advance(1_000);
    expect(keeper.signal.reason).toMatchObject({ kind: "not-found", code: "LEASE_LOST" });
    expect(await w.memory.head(lease.key)).toBeNull();
    await keeper.stop();
  });

  it("invariant 1 fences at its next renewal when someone without the secret rewrote its lease", async () => {
    const { w, lease } = await setup();
    const keeper = keepLease(w.reader, lease);
    await w.storeTime.advance(1_000); // one renewal of its own
    expect(keeper.lease.renewal).toBe(1);
    // A later renewal number and a 100 ms TTL, proved under another secret.
    const planted = encodeLeaseBody(OTHER_SECRET, { ...keeper.lease, ttlMs: 100, renewal: 9 });
    await w.memory.put(lease.key, planted);
    await w.storeTime.advance(1_000);
    expect(keeper.signal.reason).toMatchObject({ kind: "not-found", code: "LEASE_LOST" });
    expect((await w.memory.get(lease.key))?.body).toEqual(planted); // not adopted
    await keeper.stop();
  });

  it("rejects a schedule that cannot renew before its own fence", async () => {
    const { w, lease } = await setup();
    expect(() => keepLease(w.reader, lease, { renewEveryMs: 2_500 })).toThrow(
      expect.objectContaining({ kind: "invalid-input", code: "INVALID_KEEPER_TIMING" }),
    );
    expect(() => keepLease(w.reader, lease, { safetyMarginMs: 3_000 })).toThrow(
      expect.objectContaining({ kind: "invalid-input" }),
    );
    expect(w.fault.requests()).toEqual([]);
  });
});

describe("withLease", () => {
  it("reads the manifest under a kept lease and releases it afterwards", async () => {
    const w = world();
    await commitVersions(w, 2);
    const seen = await withLease(
      w.reader,
      { format: holdfastLayout, branch: "main", version: 2, ttlMs: 3_000 },
      async (leased) => {
        expect(await w.memory.head(leased.lease.key)).not.toBeNull();
        await w.storeTime.advance(10_000); // long read: the keeper renews meanwhile
        expect(leased.signal.aborted).toBe(false);
        expect(leased.manifest).toEqual(await holdfastLayout.readManifest(w.reader, "main", 2));
        return leased.lease.version;
      },
    );
    expect(seen).toBe(2);
    expect(w.memory.keys().filter((k) => k.startsWith("_holdfast/leases/"))).toEqual([]);
  });

  it("releases the lease when the read throws", async () => {
    const w = world();
    await commitVersions(w, 1);
    await expect(
      withLease(
        w.reader,
        { format: holdfastLayout, branch: "main", version: 1, ttlMs: 3_000 },
        async () => {
          throw new Error("reader failed");
        },
      ),
    ).rejects.toThrow("reader failed");
    expect(w.memory.keys().filter((k) => k.startsWith("_holdfast/leases/"))).toEqual([]);
  });
});
