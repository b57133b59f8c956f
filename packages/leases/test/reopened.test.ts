import { isHoldfastError, seededIds } from "@holdfast/conditional-store";
import { recordingSleep } from "@holdfast/conditional-store/testing";
import { holdfastLayout, readManifest } from "@holdfast/dataset";
import { acquireLease, listLeases, renewLease } from "@holdfast/leases";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { cancelReplaced, commit, drain, readAdmission, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { commitVersions, world } from "./helpers.js";

// docs/protocol.md §5.4, *A stalled acquire*: an acquire admitted only
// because a committed (or cancelled) record shows its version cancelled rewrites its lease
// before returning it (1 PUT), so its Last-Modified follows that cancellation; nowhere else.

type World = ReturnType<typeof world>;

function cleanerOf(w: World): ProtocolContext {
  return createContext(w.memory, {
    clock: w.storeTime,
    sleep: w.storeTime.sleep,
    ids: seededIds(77),
  });
}

/** A committed record of versions 1 and 2 (no lease seen by its censuses). */
async function committedRecord(w: World) {
  const cleaner = cleanerOf(w);
  const versions = [];
  for (const version of [1, 2]) {
    versions.push({ version, manifestEtag: (await readManifest(cleaner, "main", version)).etag });
  }
  const drained = await drain(cleaner, { branch: "main", versions, owner: cleaner.ids.next() });
  return { cleaner, committed: await commit(cleaner, await seal(cleaner, drained)) };
}

const LEASES = "_holdfast/leases/main/";

async function leaseKeys(w: World): Promise<string[]> {
  const keys = [];
  for await (const l of listLeases(w.reader, { branch: "main" })) keys.push(l.key);
  return keys;
}

describe("an acquire admitted by a post-commit cancellation rewrites its lease", () => {
  it("L1 cancelReplaced in a committed record: +1 PUT, renewal 1, the stored lease is the rewrite", async () => {
    const w = world();
    await commitVersions(w, 3);
    const { cleaner, committed } = await committedRecord(w);
    await w.storeTime.advance(1_500);
    await cancelReplaced(cleaner, committed.key, new Map([[2, "another-etag"]]));
    expect(await readAdmission(cleaner, "main", 2)).toMatchObject({
      state: "open",
      reopened: true,
    });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 3,
      ttlMs: 30_000,
    }); // marker HEAD
    w.fault.resetCounts();
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    });
    expect(w.fault.requestCounts()).toMatchObject({ put: 2, list: 1, get: 1, head: 1, delete: 0 });
    expect(lease.renewal).toBe(1);
    expect((await w.memory.head(lease.key))!.etag).toBe(lease.etag);
    // Its renewals write twice while the record still names the version cancelled.
    await expect(renewLease(w.reader, lease)).resolves.toMatchObject({ renewal: 3 });
  });

  it("L1 a record cancelled after its commit (its last version replaced) reopens too", async () => {
    const w = world();
    await commitVersions(w, 2);
    const { cleaner, committed } = await committedRecord(w);
    const after = await cancelReplaced(
      cleaner,
      committed.key,
      new Map([
        [1, "x"],
        [2, "y"],
      ]),
    );
    expect(after?.record.state).toBe("cancelled");
    w.fault.resetCounts();
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    expect(w.fault.requestCounts().put).toBe(2);
    expect(lease.renewal).toBe(1);
  });

  it("L1 a version cancelled before any commit (draining or sealed record) costs no rewrite", async () => {
    const w = world();
    await commitVersions(w, 3);
    const cleaner = cleanerOf(w);
    const versions = [];
    for (const version of [1, 2]) {
      versions.push({ version, manifestEtag: (await readManifest(cleaner, "main", version)).etag });
    }
    const drained = await drain(cleaner, { branch: "main", versions, owner: cleaner.ids.next() });
    await seal(cleaner, drained, { cancel: new Map([[1, "lease"]]) });
    expect(await readAdmission(cleaner, "main", 1)).toEqual({ state: "open" });
    await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 3,
      ttlMs: 30_000,
    }); // marker HEAD
    w.fault.resetCounts();
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    expect(w.fault.requestCounts()).toMatchObject({ put: 1, list: 1, get: 1, head: 1 });
    expect(lease.renewal).toBe(0);
  });

  it("L1 a lease deleted before its rewrite (a finalizer's view predating the cancellation) fails the acquire: not-found LEASE_LOST", async () => {
    const w = world();
    await commitVersions(w, 2);
    const { cleaner, committed } = await committedRecord(w);
    await cancelReplaced(cleaner, committed.key, new Map([[2, "another-etag"]]));
    let rewritten = "";
    w.fault.on(
      {
        operation: "put",
        precondition: "if-match",
        key: (k) => {
          if (!k.startsWith(LEASES)) return false;
          rewritten = k;
          return true;
        },
      },
      { type: "before", run: (inner) => inner.delete(rewritten) },
    );
    const outcome = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    }).catch((e: unknown) => e);
    expect(isHoldfastError(outcome, "not-found")).toBe(true);
    expect(outcome).toMatchObject({
      code: "LEASE_LOST",
      operation: "acquireLease",
      key: rewritten,
    });
    expect(await leaseKeys(w)).toEqual([]);
  });

  it("C5 the rewrite's lost answer is settled by re-issue and read-back: the acquire succeeds", async () => {
    const w = world();
    await commitVersions(w, 2);
    const { cleaner, committed } = await committedRecord(w);
    await cancelReplaced(cleaner, committed.key, new Map([[2, "another-etag"]]));
    w.fault.on(
      { operation: "put", precondition: "if-match", key: (k) => k.startsWith(LEASES) },
      { type: "apply-then-lose" },
    );
    const reader = { ...w.reader, sleep: recordingSleep() };
    const lease = await acquireLease(reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    });
    expect(lease.renewal).toBe(1);
    expect((await w.memory.head(lease.key))!.etag).toBe(lease.etag);
    await expect(renewLease(w.reader, lease)).resolves.toMatchObject({ renewal: 3 });
  });

  it("C5 a rewrite whose outcome stays unknown fails the acquire as unresolved and removes the lease", async () => {
    const w = world();
    await commitVersions(w, 2);
    const { cleaner, committed } = await committedRecord(w);
    await cancelReplaced(cleaner, committed.key, new Map([[2, "another-etag"]]));
    w.fault.on(
      {
        operation: "put",
        precondition: "if-match",
        key: (k) => k.startsWith(LEASES),
        times: Number.POSITIVE_INFINITY,
      },
      { type: "lose-before-apply" },
    );
    const reader = { ...w.reader, sleep: recordingSleep() };
    const outcome = await acquireLease(reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    }).catch((e: unknown) => e);
    expect(isHoldfastError(outcome, "unresolved")).toBe(true);
    expect(await leaseKeys(w)).toEqual([]);
  });
});

// docs/protocol.md §5.4, *A stalled renewal*: a renewal admitted only
// because a committed (or cancelled) record shows its version cancelled writes its lease once
// more after that read (1 PUT); a renewal no record names still costs 2 requests.
describe("a renewal admitted by a post-commit cancellation writes once more", () => {
  it("L1 cancelReplaced in a committed record: 2 PUTs, renewal + 2, the stored lease is the second write", async () => {
    const w = world();
    await commitVersions(w, 3);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    });
    const { cleaner, committed } = await committedRecord(w);
    await cancelReplaced(cleaner, committed.key, new Map([[2, "another-etag"]]));
    w.fault.resetCounts();
    const renewed = await renewLease(w.reader, lease);
    expect(w.fault.requestCounts()).toMatchObject({ put: 2, list: 1, get: 1, head: 0, delete: 0 });
    expect(renewed.renewal).toBe(lease.renewal + 2);
    expect((await w.memory.head(lease.key))!.etag).toBe(renewed.etag);
    await expect(renewLease(w.reader, renewed)).resolves.toMatchObject({
      renewal: lease.renewal + 4,
    });
  });

  it("L1 a renewal no record names costs 2 requests (no second write)", async () => {
    const w = world();
    await commitVersions(w, 3);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 3,
      ttlMs: 30_000,
    });
    await committedRecord(w);
    w.fault.resetCounts();
    const renewed = await renewLease(w.reader, lease);
    expect(w.fault.requestCounts()).toMatchObject({ put: 1, list: 1, get: 0, head: 0 });
    expect(renewed.renewal).toBe(lease.renewal + 1);
  });

  it("L1 a lease deleted before the second write fails the renewal: not-found LEASE_LOST", async () => {
    const w = world();
    await commitVersions(w, 2);
    const lease = await acquireLease(w.reader, {
      format: holdfastLayout,
      branch: "main",
      version: 2,
      ttlMs: 30_000,
    });
    const { cleaner, committed } = await committedRecord(w);
    await cancelReplaced(cleaner, committed.key, new Map([[2, "another-etag"]]));
    // A finalizer deletes the lease between the renewal's admission read and its second write.
    w.fault.on(
      { operation: "get", key: (k) => k.startsWith("_holdfast/retirement/") },
      { type: "before", run: (inner) => inner.delete(lease.key) },
    );
    const outcome = await renewLease(w.reader, lease).catch((e: unknown) => e);
    expect(isHoldfastError(outcome, "not-found")).toBe(true);
    expect(outcome).toMatchObject({ code: "LEASE_LOST", operation: "renewLease", key: lease.key });
    expect(await leaseKeys(w)).toEqual([]);
  });
});
