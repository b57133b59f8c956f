import { seededIds } from "@holdfast/conditional-store";
import { holdfastLayout, readManifest } from "@holdfast/dataset";
import {
  acquireLease,
  censusLeases,
  deleteLeasesOf,
  keepLease,
  listLeases,
  renewLease,
} from "@holdfast/leases";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import {
  cancelReplaced,
  cancelVersions,
  commit,
  drain,
  finalize,
  readRecord,
  seal,
} from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { commitVersions, world } from "./helpers.js";

/** A cleaner host sharing the store (its own ids; its clock is never consulted for leases). */
function cleanerOf(w: ReturnType<typeof world>): ProtocolContext {
  return createContext(w.memory, {
    clock: w.storeTime,
    sleep: w.storeTime.sleep,
    ids: seededIds(77),
  });
}

async function drainVersions(
  cleaner: ProtocolContext,
  versions: number[],
  ownershipBoundMs?: number,
) {
  const candidates = [];
  for (const version of versions) {
    const { etag } = await readManifest(cleaner, "main", version);
    candidates.push({ version, manifestEtag: etag });
  }
  return drain(cleaner, {
    branch: "main",
    versions: candidates,
    owner: cleaner.ids.next(),
    ...(ownershipBoundMs === undefined ? {} : { ownershipBoundMs }),
  });
}

/** Storage time of the cleaner's last write to a record: the census reference. */
async function recordTime(cleaner: ProtocolContext, key: string): Promise<Date> {
  return (await cleaner.store.head(key))!.lastModified;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("leases against the retirement state machine", () => {
  it("L1 a lease raced with the drain stays renewable; the version is retained", async () => {
    const w = world();
    await commitVersions(w, 2);
    const cleaner = cleanerOf(w);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    const drained = await drainVersions(cleaner, [1, 2]);
    // New acquisitions are refused while draining…
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).rejects.toMatchObject({
      code: "RETIRING",
    });
    // …but the admitted lease renews.
    const renewed = await renewLease(w.reader, lease);
    const census = censusLeases(cleaner);
    const kept = await census("main", [1, 2], await recordTime(cleaner, drained.key));
    expect(kept).toEqual(new Map([[1, "lease"]]));
    const sealed = await seal(cleaner, drained, { cancel: kept });
    // Version 1 is cancelled in the sealed record: renewal and acquisition work again.
    await expect(renewLease(w.reader, renewed)).resolves.toMatchObject({ renewal: 2 });
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).resolves.toBeDefined();
    // Version 2 (no lease) stays sealed.
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 2, ttlMs: 30_000 }),
    ).rejects.toMatchObject({
      code: "SEALED",
    });
    expect(sealed.record.versions.find((v) => v.version === 1)?.cancelled).toBe(true);
  });

  it("a renewal is refused once the version is sealed, and the keeper fences at once", async () => {
    const w = world();
    await commitVersions(w, 2);
    const cleaner = cleanerOf(w);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 3_000,
    });
    const keeper = keepLease(w.reader, lease);
    const drained = await drainVersions(cleaner, [1]);
    await w.storeTime.advance(1_000);
    expect(keeper.lease.renewal).toBe(1); // renewed while draining
    // A cleaner that (wrongly, for this test) ignores the census seals anyway.
    await seal(cleaner, drained);
    await w.storeTime.advance(1_000);
    expect(keeper.signal.reason).toMatchObject({ kind: "refused", code: "SEALED" });
    await keeper.stop();
  });

  it("acquisition is refused while draining and succeeds once the drain cancels the version", async () => {
    const w = world();
    await commitVersions(w, 2);
    const cleaner = cleanerOf(w);
    const drained = await drainVersions(cleaner, [1, 2]);
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 2, ttlMs: 30_000 }),
    ).rejects.toMatchObject({
      kind: "refused",
      code: "RETIRING",
    });
    expect(await collect(listLeases(w.reader))).toEqual([]); // the refused lease was removed
    await cancelVersions(cleaner, drained, new Map([[2, "policy"]]));
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 2, ttlMs: 30_000 }),
    ).resolves.toBeDefined();
  });

  it("L5 a drain past its ownership bound no longer blocks acquisition", async () => {
    const w = world();
    await commitVersions(w, 1);
    const cleaner = cleanerOf(w);
    await drainVersions(cleaner, [1], 60_000);
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).rejects.toMatchObject({
      code: "RETIRING",
    });
    await w.storeTime.advance(61_000);
    await expect(
      acquireLease(w.reader, { format: holdfastLayout, branch: "main", version: 1, ttlMs: 30_000 }),
    ).resolves.toBeDefined();
  });

  it("L3 finalize removes the retired versions' leases through deleteLeasesOf, and keeps others", async () => {
    const w = world();
    await commitVersions(w, 3);
    const cleaner = cleanerOf(w);
    // A lease on version 1 that expires before the cleanup, one on version 3 that stays.
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 1_000,
    });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 3,
      ttlMs: 600_000,
    });
    await w.storeTime.advance(5_000);
    const drained = await drainVersions(cleaner, [1, 2]);
    const census = censusLeases(cleaner);
    expect(await census("main", [1, 2], await recordTime(cleaner, drained.key))).toEqual(new Map());
    const sealed = await seal(cleaner, drained);
    expect(await census("main", [1, 2], await recordTime(cleaner, sealed.key))).toEqual(new Map());
    const committed = await commit(cleaner, sealed);
    for (const version of [1, 2])
      await w.memory.delete(`_versions/main/${String(version).padStart(20, "0")}.json`);
    await finalize(cleaner, committed, {
      deleteLeases: (branch, versions, o) => deleteLeasesOf(cleaner, branch, versions, o),
      leasesWrittenBefore: await recordTime(cleaner, committed.key),
      presentManifests: (branch, versions) =>
        holdfastLayout.presentManifests(cleaner, branch, versions),
    });
    expect((await collect(listLeases(w.reader))).map((l) => l.version)).toEqual([3]);
    expect(w.memory.keys().filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([]);
  });

  // docs/protocol.md §5.4: a finalizer deletes only leases written a
  // whole precision interval before its view of the record, so a stale handle (read before
  // another cleaner's `cancelReplaced`) never deletes a lease admitted after the cancellation.
  it("L1 a lease acquired after a cancelReplaced survives a stale finalizer and keeps its version through the next retirement", async () => {
    const w = world();
    await commitVersions(w, 3);
    const a = cleanerOf(w);
    const b = createContext(w.memory, {
      clock: w.storeTime,
      sleep: w.storeTime.sleep,
      ids: seededIds(78),
    });
    // An old lease on version 1 that expired before the retirement: finalize removes it.
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 1_000,
    });
    await w.storeTime.advance(5_000);
    const committed = await commit(a, await seal(a, await drainVersions(a, [1, 2])));
    // Finalizer A's view: the committed record as read now (both versions retired).
    const stale = (await readRecord(a, committed.key))!;
    await w.storeTime.advance(2_000);
    // Version 1's files are gone; version 2's manifest key now holds another object.
    const manifest = (v: number) => `_versions/main/${String(v).padStart(20, "0")}.json`;
    await w.memory.delete(manifest(1));
    const replacement = (await w.memory.get(manifest(3)))!.body;
    await w.memory.delete(manifest(2));
    const { etag: newEtag } = await w.memory.put(manifest(2), replacement, {
      precondition: { ifNoneMatch: "*" },
    });
    // Cleaner B's last look cancels version 2 in the committed record: acquirable at once.
    const after = await cancelReplaced(b, committed.key, new Map([[2, newEtag]]));
    expect(after!.record.versions.map((v) => v.cancelled)).toEqual([false, true]);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 600_000,
    });
    // A finalizes with its stale handle: the replaced manifest counts as absent, by design.
    await finalize(a, stale, {
      deleteLeases: (branch, versions, o) => deleteLeasesOf(a, branch, versions, o),
      presentManifests: async (branch, versions) => {
        const present = new Set<number>();
        for (const v of versions) {
          const head = await a.store.head(manifest(v));
          const recorded = stale.record.versions.find((r) => r.version === v)!.manifestEtag;
          if (head?.etag === recorded) present.add(v);
        }
        expect(branch).toBe("main");
        return present;
      },
    });
    // The expired lease of version 1 went; the lease admitted after the cancellation stays.
    expect((await collect(listLeases(w.reader))).map((l) => l.key)).toEqual([lease.key]);
    expect(w.memory.keys().filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([]);
    // A following retirement of version 2 sees the lease in its census: the version is kept.
    const next = await drain(b, {
      branch: "main",
      versions: [{ version: 2, manifestEtag: newEtag }],
      owner: b.ids.next(),
    });
    expect(await censusLeases(b)("main", [2], await recordTime(b, next.key))).toEqual(
      new Map([[2, "lease"]]),
    );
    await expect(renewLease(w.reader, lease)).resolves.toBeDefined();
  });

  it("finalize keeps a lease written in the same precision interval as its view of the record, and deletes one a whole interval before", async () => {
    const w = world();
    await commitVersions(w, 2);
    const a = cleanerOf(w);
    const before = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 100,
    });
    await w.storeTime.advance(1_000);
    const committed = await commit(a, await seal(a, await drainVersions(a, [1])));
    const view = (await readRecord(a, committed.key))!;
    // Same whole second as the record's Last-Modified: it may have been written after it.
    await w.storeTime.advance(10);
    await w.memory.put(
      before.key.replace(/[^/]+$/, "01ARZ3NDEKTSV4RRFFQ69G5FAV.json"),
      new TextEncoder().encode("{}"),
      { precondition: { ifNoneMatch: "*" } },
    );
    await w.memory.delete(`_versions/main/${"1".padStart(20, "0")}.json`);
    const deleted: string[] = [];
    await finalize(a, view, {
      deleteLeases: async (branch, versions, o) => {
        deleted.push(o.writtenBefore.toISOString());
        return deleteLeasesOf(a, branch, versions, o);
      },
      presentManifests: (branch, versions) => holdfastLayout.presentManifests(a, branch, versions),
    });
    expect(deleted).toEqual([view.lastModified!.toISOString()]);
    const left = (await collect(listLeases(w.reader))).map((l) => l.key);
    expect(left).toEqual([before.key.replace(/[^/]+$/, "01ARZ3NDEKTSV4RRFFQ69G5FAV.json")]);
  });
});
