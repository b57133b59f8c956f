import { decodeJson, encodeJson, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import {
  commitVersion,
  latestVersion,
  manifestKey,
  raiseRetiredFloor,
  readManifest,
} from "@holdfast/dataset";
import { headHintKey } from "@holdfast/dataset/internal";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

// Head hints (docs/protocol.md §2): a commit puts the version after the branch's hint
// without listing the branch, so its cost does not depend on the branch's length, and a
// stale, missing, malformed or too-high hint never makes a commit wrong: it only costs
// a listing. The retired floor (raised by cleanup before it deletes) is what makes the
// number after the hint provably fresh.

function memoryContext(
  seed = 1,
  store = new MemoryStore(),
): ProtocolContext & { store: MemoryStore } {
  return { ...createContext(store, { ids: seededIds(seed), sleep: recordingSleep() }), store };
}

/** Manifests 1..n on `branch` written straight to the store (as an older client, without a hint). */
async function seedVersions(store: MemoryStore, branch: string, versions: Iterable<number>) {
  let txn = 0;
  for (const version of versions) {
    txn += 1;
    const txnId = `01ARZ3NDEKTSV4RRFF${String(txn).padStart(8, "0")}`;
    await store.put(
      manifestKey(branch, version),
      encodeJson({ schema: 1, branch, version, parent: null, files: [], txnId }),
    );
  }
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function hintVersion(ctx: ProtocolContext, branch: string): Promise<number | null> {
  const got = await ctx.store.get(headHintKey(branch));
  return got ? (decodeJson(got.body) as { version: number }).version : null;
}

async function hintFloor(ctx: ProtocolContext, branch: string): Promise<number | undefined> {
  const got = await ctx.store.get(headHintKey(branch));
  return got ? (decodeJson(got.body) as { retiredFloor?: number }).retiredFloor : undefined;
}

/** What cleanup does before deleting manifests up to `maxRetired` (format.retireVersionNumbers). */
async function retire(ctx: ProtocolContext, branch: string, versions: number[]) {
  await raiseRetiredFloor(ctx, branch, Math.max(...versions));
  for (const v of versions) await ctx.store.delete(manifestKey(branch, v));
}

/** Requests of one commit, by operation. */
async function commitCost(ctx: ProtocolContext, branch: string) {
  const counting = new FaultStore(ctx.store);
  const result = await commitVersion({ ...ctx, store: counting }, { branch, files: [] });
  return { version: result.version, counts: counting.requestCounts(), log: counting.requests() };
}

describe("head hints", () => {
  it("a commit costs the same at version 11 and at version 10,001", async () => {
    const short = memoryContext(1);
    for (let i = 0; i < 10; i += 1) await commitVersion(short, { branch: "main", files: [] });
    const long = memoryContext(2);
    await seedVersions(long.store, "main", range(1, 9_999));
    // The first commit of a pre-hint branch searches from version 1 and writes the hint.
    expect((await commitVersion(long, { branch: "main", files: [] })).version).toBe(10_000);
    expect(await hintVersion(long, "main")).toBe(10_000);

    const a = await commitCost(short, "main");
    const b = await commitCost(long, "main");
    expect([a.version, b.version]).toEqual([11, 10_001]);
    // GET hint, PUT the next manifest, PUT the hint (if-match): no listing at all.
    expect(a.counts).toEqual(b.counts);
    expect(b.log.map((r) => `${r.operation} ${r.key}`)).toEqual([
      `get ${headHintKey("main")}`,
      `put ${manifestKey("main", 10_001)}`,
      `put ${headHintKey("main")}`,
    ]);

    // Over many commits the requests stay the same on both.
    const totals = async (ctx: ProtocolContext) => {
      const counting = new FaultStore(ctx.store);
      for (let i = 0; i < 64; i += 1)
        await commitVersion({ ...ctx, store: counting }, { branch: "main", files: [] });
      return counting.requestCounts();
    };
    const ta = await totals(short);
    const tb = await totals(long);
    expect(ta).toEqual(tb);
    expect([ta.get, ta.put, ta.list]).toEqual([64, 128, 0]);
    expect(await latestVersion(long, "main")).toBe(10_001 + 64);
  });

  it("a hint far behind (versions committed by a client that keeps none) is a starting point only", async () => {
    const ctx = memoryContext(3, new MemoryStore({ pageSize: 100 }));
    await seedVersions(ctx.store, "main", range(1, 5));
    await commitVersion(ctx, { branch: "main", files: [] }); // writes the hint at 6
    await seedVersions(ctx.store, "main", range(7, 20_000));
    const cost = await commitCost(ctx, "main");
    expect(cost.version).toBe(20_001);
    // Gallop and bisect from the hint: logarithmic in the lag, not a listing of it.
    expect(cost.counts.list).toBeLessThan(40);
    expect(await hintVersion(ctx, "main")).toBe(20_001);
  });

  it("versions retired between a stale hint and the latest never get reused", async () => {
    const ctx = memoryContext(4);
    await seedVersions(ctx.store, "main", range(1, 3));
    await commitVersion(ctx, { branch: "main", files: [] }); // hint at 4, floor 2
    expect(await hintFloor(ctx, "main")).toBe(2);
    await seedVersions(ctx.store, "main", range(5, 30)); // a writer whose hint writes failed
    // Cleanup retires 4..29 and keeps the latest (30): the hint's own version is gone too.
    await retire(ctx, "main", range(4, 29));
    expect([await hintVersion(ctx, "main"), await hintFloor(ctx, "main")]).toEqual([30, 29]);
    const result = await commitVersion(ctx, { branch: "main", files: [] });
    expect(result.version).toBe(31);
    expect((await readManifest(ctx, "main", 31)).manifest.parent).toEqual({
      branch: "main",
      version: 30,
    });
    expect(await ctx.store.head(manifestKey("main", 5))).toBeNull();
  });

  it("a cleanup that retires the version after a lagging hint while a commit is in flight never hides the commit", async () => {
    const ctx = memoryContext(10);
    for (let i = 0; i < 3; i += 1) await commitVersion(ctx, { branch: "main", files: [] });
    await seedVersions(ctx.store, "main", range(4, 12)); // the hint lags at 3
    // The committer read the hint (3) and is about to put 4. Just before its put lands, a
    // cleanup raises the floor and retires 4..11 (keeping 12).
    const fault = new FaultStore(ctx.store).on(
      { operation: "put", key: manifestKey("main", 4), times: 1 },
      { type: "before", run: () => retire(ctx, "main", range(4, 11)) },
    );
    const result = await commitVersion({ ...ctx, store: fault }, { branch: "main", files: [] });
    // Version 4 landed below 12: a retired number nobody will build on. The commit saw the
    // raised floor, listed, and went again above the latest.
    expect(result.version).toBe(13);
    expect(await latestVersion(ctx, "main")).toBe(13);
    expect((await readManifest(ctx, "main", 13)).manifest.parent).toEqual({
      branch: "main",
      version: 12,
    });
    const stray = await readManifest(ctx, "main", 4);
    expect(stray.manifest.txnId).toBe(result.txnId);
    expect(await hintVersion(ctx, "main")).toBe(13);
  });

  it("a commit above a hint whose write was lost lists once and heals the hint", async () => {
    const ctx = memoryContext(11);
    for (let i = 0; i < 5; i += 1) await commitVersion(ctx, { branch: "main", files: [] });
    await seedVersions(ctx.store, "main", [6]); // landed, its hint write lost
    const cost = await commitCost(ctx, "main");
    expect(cost.version).toBe(7);
    expect(cost.log.map((r) => `${r.operation} ${r.key}`)).toEqual([
      `get ${headHintKey("main")}`,
      `put ${manifestKey("main", 6)}`,
      // The conflict is read back before it is believed (another txnId: not ours).
      `get ${manifestKey("main", 6)}`,
      "list _versions/main/",
      `put ${manifestKey("main", 7)}`,
      `put ${headHintKey("main")}`,
    ]);
    expect(await hintVersion(ctx, "main")).toBe(7);
  });

  it("a hint above every version (branch deleted and re-created) falls back to the full search", async () => {
    const ctx = memoryContext(5);
    for (let i = 0; i < 40; i += 1) await commitVersion(ctx, { branch: "dev", files: [] });
    expect(await hintVersion(ctx, "dev")).toBe(40);
    // A branch deletion removes the hint first, then the manifests: the re-created branch
    // lists and starts over.
    await ctx.store.delete(headHintKey("dev"));
    for (const v of range(1, 40)) await ctx.store.delete(manifestKey("dev", v));
    expect(await latestVersion(ctx, "dev")).toBeNull();
    const first = await commitVersion(ctx, { branch: "dev", files: [] });
    expect(first.version).toBe(1);
    expect((await readManifest(ctx, "dev", 1)).manifest.parent).toBeNull();
    // The hint now names the new incarnation's version.
    expect(await hintVersion(ctx, "dev")).toBe(1);
    expect((await commitVersion(ctx, { branch: "dev", files: [] })).version).toBe(2);

    // A hint of an older writer (no floor) above every version: an older client re-created
    // the branch and cleanup retired its first versions. The next version is above them.
    for (const v of [1, 2]) await ctx.store.delete(manifestKey("dev", v));
    await ctx.store.put(
      headHintKey("dev"),
      encodeJson({ schema: 1, branch: "dev", version: 33, txnId: "01ARZ3NDEKTSV4RRFFQ69G5FAV" }),
    );
    await seedVersions(ctx.store, "dev", [7, 9]);
    expect((await commitVersion(ctx, { branch: "dev", files: [] })).version).toBe(10);
    expect(await ctx.store.head(manifestKey("dev", 1))).toBeNull();
    // The rewritten hint went back to the new incarnation, with a floor below its latest.
    expect([await hintVersion(ctx, "dev"), await hintFloor(ctx, "dev")]).toEqual([10, 8]);
  });

  it("a malformed or foreign hint is ignored and replaced", async () => {
    for (const body of ["{not json", JSON.stringify({ schema: 1, branch: "other", version: 9 })]) {
      const ctx = memoryContext(6);
      await seedVersions(ctx.store, "main", range(1, 3));
      await ctx.store.put(headHintKey("main"), new TextEncoder().encode(body));
      expect(await latestVersion(ctx, "main")).toBe(3);
      expect((await commitVersion(ctx, { branch: "main", files: [] })).version).toBe(4);
      expect(await hintVersion(ctx, "main")).toBe(4);
    }
  });

  it("a lost hint write never fails or delays the commit that landed", async () => {
    const sleep = recordingSleep();
    const ctx = { ...memoryContext(7), sleep };
    const fault = new FaultStore(ctx.store).on(
      { operation: "put", key: headHintKey("main"), times: 2 },
      { type: "lose-before-apply" },
    );
    const fctx = { ...ctx, store: fault };
    expect((await commitVersion(fctx, { branch: "main", files: [] })).version).toBe(1);
    expect(await ctx.store.get(headHintKey("main"))).toBeNull();
    // One attempt only: no re-issue pauses for an advisory object.
    expect(sleep.pauses).toEqual([]);
    expect((await commitVersion(fctx, { branch: "main", files: [] })).version).toBe(2);
    expect((await commitVersion(fctx, { branch: "main", files: [] })).version).toBe(3);
    expect(await hintVersion(ctx, "main")).toBe(3);
  });

  it("racing committers never move the hint backwards", async () => {
    const ctx = memoryContext(8);
    await seedVersions(ctx.store, "main", range(1, 100));
    await commitVersion(ctx, { branch: "main", files: [] }); // hint at 101
    await seedVersions(ctx.store, "main", range(102, 140));
    // Writer A commits 141 with the hint it read (101); before A rewrites the hint, B
    // commits 142 and moves the hint there. A's if-match on the ETag it read conflicts and
    // is dropped, so the hint stays at 142 instead of going back to 141.
    const b = memoryContext(9, ctx.store);
    const fault = new FaultStore(ctx.store).on(
      { operation: "put", key: headHintKey("main") },
      {
        type: "before",
        run: async () => {
          expect((await commitVersion(b, { branch: "main", files: [] })).version).toBe(142);
        },
      },
    );
    const a = await commitVersion({ ...ctx, store: fault }, { branch: "main", files: [] });
    expect(a.version).toBe(141);
    expect(await hintVersion(ctx, "main")).toBe(142);
    expect(await latestVersion(ctx, "main")).toBe(142);
  });
});
