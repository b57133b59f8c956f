import { isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { readManifest } from "@holdfast/dataset";
import { acquireLease, type Lease, renewLease } from "@holdfast/leases";
import {
  canonicalKey,
  createBranch,
  createTag,
  getTag,
  holdfastFormat,
} from "@holdfast/refs-lifecycle";
import { readAdmission } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { keysUnder, seedDataset, versionsOf, world } from "./helpers.js";

// Lease and reference races of docs/guarantees.md at the interleavings themselves, where the
// scenario tests cover a neighbouring interleaving.
describe("lease and reference races at their exact interleavings (cleanup)", () => {
  it("L1 a lease admitted after cleanup planned, just before its drain, stays renewable and keeps its version", async () => {
    const { ctx: base, store, time } = world();
    await seedDataset(base, time, { versions: 3 });
    const faulty = new FaultStore(base.store);
    let lease: Lease | undefined;
    // The cleaner has taken its storage time and planned (the lease is not there yet);
    // the reader's acquisition passes its admission check just before the drain lands.
    faulty.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "create", nth: 1 },
      {
        type: "before",
        run: async () => {
          await time.advance(2_000);
          lease = await acquireLease(base, {
            format: holdfastFormat,
            branch: "main",
            version: 1,
            ttlMs: 60_000,
          });
        },
      },
    );
    const stats = await cleanup(
      { ...base, store: faulty },
      { retainVersions: 1 },
      { format: holdfastFormat },
    );
    expect(lease).toBeDefined();
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
    );
    expect(versionsOf(store)).toEqual([1, 3]);
    expect((await readAdmission(base, "main", 1)).state).toBe("open");
    // The admitted lease is renewable past its original TTL, not only until it.
    await time.advance(50_000);
    lease = await renewLease(base, lease!);
    await time.advance(50_000);
    lease = await renewLease(base, lease);
    expect(lease.renewal).toBe(2);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });

  it("L9 a tag whose canonical write stalls across the whole cleanup keeps its version", async () => {
    const { ctx: base, store, time } = world();
    await seedDataset(base, time, { versions: 3 });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const publisher = new FaultStore(base.store);
    publisher.on(
      { operation: "put", key: canonicalKey("tag", "racing") },
      { type: "before", run: () => gate },
    );
    // Admission passed (version 1 open); the canonical put is paused.
    const tag = createTag(
      { ...base, store: publisher },
      { name: "racing", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    ).catch((e: unknown) => e);
    await time.advance(0);
    expect(keysUnder(store, "_holdfast/refs/intents/")).toHaveLength(1);
    // A whole cleanup (drain, seal, censuses, commit, delete) runs while it is paused.
    const stats = await cleanup(base, { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.retired).toEqual([{ branch: "main", version: 2 }]);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "intent" }),
    );
    release();
    const published = await tag;
    expect(isHoldfastError(published)).toBe(false);
    // The durable tag points at a version that is still readable, and nothing lingers.
    expect((await getTag(base, "racing", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 1,
    });
    await readManifest(base, "main", 1);
    expect(versionsOf(store)).toEqual([1, 3]);
    expect(keysUnder(store, "_holdfast/refs/intents/")).toEqual([]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
  });

  it("L10 a failed read of a descendant branch during the census retires nothing", async () => {
    const { ctx: base, store, time } = world();
    await seedDataset(base, time, { versions: 3 });
    await createBranch(
      base,
      { name: "child", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const faulty = new FaultStore(base.store);
    // Once version 1 is sealed, every read of the child's canonical file fails: the
    // reference census after the seal cannot tell whether the child still exists.
    let sealed = false;
    const child = canonicalKey("branch", "child");
    faulty.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 1 },
      {
        type: "before",
        run: async () => {
          sealed = true;
        },
      },
    );
    faulty.on(
      { operation: "get", key: (key) => sealed && key === child, times: Number.POSITIVE_INFINITY },
      { type: "refuse" },
    );
    const outcome = await cleanup(
      { ...base, store: faulty },
      { retainVersions: 1 },
      { format: holdfastFormat },
    ).catch((e: unknown) => e);
    // The census did reach the failing read, and the run failed rather than commit.
    expect(faulty.requests().some((r) => r.operation === "get" && r.key === child)).toBe(true);
    expect(isHoldfastError(outcome, "refused")).toBe(true);
    expect(versionsOf(store)).toContain(1);
    await readManifest(base, "main", 1);
    // Nothing is left blocking later leases on the kept version.
    expect((await readAdmission(base, "main", 1)).state).toBe("open");
  });
  it("L1 a renewal in flight across a whole retirement never reports success for the deleted version", async () => {
    const { ctx: base, store, time } = world();
    await seedDataset(base, time, { versions: 3 });
    const holderStore = new FaultStore(base.store);
    const holder = { ...base, store: holderStore };
    const lease = await acquireLease(holder, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 60_000,
    });
    // The holder renews one second before its term ends; its rewrite is slow to land.
    await time.advance(59_000);
    const landed = deferred();
    const atRead = deferred();
    const readGate = deferred();
    holderStore.on(
      { operation: "put", key: lease.key, precondition: "if-match" },
      { type: "before", run: () => landed.promise },
    );
    holderStore.on(
      { operation: "list", key: /^_holdfast\/retirement\// },
      {
        type: "before",
        run: async () => {
          atRead.resolve();
          await readGate.promise;
        },
      },
    );
    const renewing = renewLease(holder, lease).catch((e: unknown) => e);
    // Meanwhile the term lapses in storage time and a cleaner retires version 1: both
    // censuses see an expired lease; the rewrite lands just before the commit and the
    // holder's admission read only after finalize removed every trace of the retirement.
    await time.advance(3_000);
    const cleaner = new FaultStore(base.store);
    cleaner.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 2 },
      {
        type: "before",
        run: async () => {
          landed.resolve();
          await atRead.promise;
        },
      },
    );
    const stats = await cleanup(
      { ...base, store: cleaner },
      { retainVersions: 1 },
      { format: holdfastFormat },
    );
    expect(stats.retired.map((r) => r.version)).toEqual([1, 2]);
    expect(versionsOf(store)).toEqual([3]);
    expect(keysUnder(store, "_holdfast/retirement/")).toEqual([]);
    readGate.resolve();
    const outcome = await renewing;
    // A renewal that returned would promise protection for a version already deleted.
    expect(isHoldfastError(outcome, "not-found")).toBe(true);
    expect(keysUnder(store, "_holdfast/leases/")).toEqual([]);
  });
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
