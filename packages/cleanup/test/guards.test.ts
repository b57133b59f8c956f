import { decodeJson, encodeJson, seededIds } from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { commitVersion, manifestKey, readManifest, writeDataFile } from "@holdfast/dataset";
import { headHintKey } from "@holdfast/dataset/internal";
import { acquireLease, renewLease } from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup, DEFAULT_MIN_VERSION_AGE_MS } from "../src/index.js";
import { MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

// Two guards that could once be deleted with the suite green, each pinned here.
describe("retirement guards that only one interleaving needs", () => {
  it("census 2: a lease census 1 saw as expired, renewed before the seal, keeps its version", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    // The reader's host clock runs 20 s behind: by its own timer the lease is still live
    // when, in storage time, it has already expired.
    const readerTime = new FakeTime(time.now() - 20_000);
    const reader: ProtocolContext = {
      store,
      clock: readerTime,
      ids: seededIds(77),
      sleep: recordingSleep(),
    };
    let lease = await acquireLease(reader, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 15_000,
    });
    await time.advance(18_000);
    await readerTime.advance(10_000);
    // Census 1 (after the drain) sees the lease expired; the renewal lands before the seal.
    const cleaner = new FaultStore(store);
    cleaner.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 1 },
      {
        type: "before",
        run: async () => {
          lease = await renewLease(reader, lease);
        },
      },
    );
    const stats = await cleanup(
      { ...ctx, store: cleaner },
      { retainVersions: 1 },
      {
        format: holdfastFormat,
      },
    );
    expect(lease.renewal).toBe(1);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
    );
    expect(versionsOf(store)).toEqual([1, 3]);
  });

  it("ETag identity: a manifest re-created at a retired version's key after the drain is kept with its files", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const key = manifestKey("main", 1);
    const { manifest } = await readManifest(ctx, "main", 1);
    let fresh: { key: string; size: number } | undefined;
    const cleaner = new FaultStore(store);
    // Between the drain and the commit, version 1 is replaced by another manifest (a late
    // re-issue or a new incarnation): not the manifest the record drained.
    cleaner.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 2 },
      {
        type: "before",
        run: async () => {
          fresh = await writeDataFile(ctx, new Uint8Array([9]));
          await store.delete(key);
          await store.put(
            key,
            encodeJson({ ...manifest, files: [{ key: fresh.key, size: fresh.size }] }),
          );
        },
      },
    );
    const stats = await cleanup(
      { ...ctx, store: cleaner },
      { retainVersions: 1 },
      {
        format: holdfastFormat,
      },
    );
    expect(stats.warnings.join("\n")).toMatch(
      /main@1: manifest replaced since it was drained; cancelled in _holdfast\/retirement\//,
    );
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "changed" }),
    );
    expect(await store.head(key)).not.toBeNull();
    expect(await store.head(fresh!.key)).not.toBeNull();
  });

  it("retired floor: a commit after a cleanup that retired versions above a lagging head hint never reuses a retired number", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    // Versions 4..10 land while every head-hint write is lost: the hint stays at 3.
    const lossy = new FaultStore(store).on(
      { operation: "put", key: headHintKey("main"), times: 1_000 },
      { type: "lose-before-apply" },
    );
    for (let i = 0; i < 7; i += 1) {
      await commitVersion({ ...ctx, store: lossy }, { branch: "main", files: [] });
    }
    expect(
      (decodeJson((await store.get(headHintKey("main")))!.body) as { version: number }).version,
    ).toBe(3);
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(versionsOf(store)).toEqual([10]);
    // Cleanup raised the floor before deleting 1..9 (docs/protocol.md §2), so the next
    // commit does not put 4 above the stale hint: 4 was retired, and 10 is the latest.
    const next = await commitVersion(ctx, { branch: "main", files: [] });
    expect(next.version).toBe(11);
    expect(versionsOf(store)).toEqual([10, 11]);
  });
});
