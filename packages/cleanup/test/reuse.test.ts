import { isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import {
  COMMIT_INTENT_BOUND_MS,
  COMMIT_INTENT_PREFIX,
  COMMIT_RETIREMENT_IN_PROGRESS,
  type CommitResult,
  commitVersion,
  readManifest,
} from "@holdfast/dataset";
import { commitIntentKey } from "@holdfast/dataset/internal";
import { acquireLease, releaseLease } from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup, planCleanup } from "../src/index.js";
import { keysUnder, seedDataset, versionsOf, world } from "./helpers.js";

/** Every data file the manifest of `version` names, and whether each still exists. */
async function missingFiles(ctx: ProtocolContext, store: ObjectStore, version: number) {
  const { manifest } = await readManifest(ctx, "main", version);
  const missing: string[] = [];
  for (const f of manifest.files) if (!(await store.head(f.key))) missing.push(f.key);
  return missing;
}

/** A restore: read an old version's manifest, commit its files again as the newest version. */
async function restore(ctx: ProtocolContext, from: number, withSources = true) {
  const { manifest } = await readManifest(ctx, "main", from);
  return commitVersion(ctx, {
    branch: "main",
    files: manifest.files,
    ...(withSources ? { sources: [{ branch: "main", version: from }] } : {}),
  });
}

const policy = { retainVersions: 1 };

// docs/protocol.md §2.5: a commit that returns success never names a
// file a cleanup deletes (docs/protocol.md §2.5).
describe("commits that reuse files vs a cleanup retiring their source", () => {
  it("invariant 7: a restore committed between the retirement commit and the deletions is refused, never lands naming deleted files", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const cleaner = new FaultStore(store);
    let restored: CommitResult | unknown;
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          restored = await restore(ctx, 2).catch((e: unknown) => e);
        },
      },
    );
    await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    expect(restored).toBeDefined();
    if (isHoldfastError(restored)) {
      expect(restored.kind).toBe("refused");
      expect(restored.code).toBe(COMMIT_RETIREMENT_IN_PROGRESS);
      expect(versionsOf(store)).toEqual([5]);
    } else {
      const result = restored as CommitResult;
      expect(await missingFiles(ctx, store, result.version)).toEqual([]);
    }
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toEqual([]);
  });

  it("invariant 7: a restore whose checks passed before the retirement commit lands with every file it names (the cleaner reads its intent)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    // The writer: its intent, record read and HEADs pass, then its manifest put waits.
    let atManifest!: () => void;
    const writerReady = new Promise<void>((r) => {
      atManifest = r;
    });
    let letManifestGo!: () => void;
    const manifestGate = new Promise<void>((r) => {
      letManifestGo = r;
    });
    const writerStore = new FaultStore(store);
    writerStore.on(
      { operation: "put", key: /^_versions\/main\//, nth: 1 },
      {
        type: "before",
        run: async () => {
          atManifest();
          await manifestGate;
        },
      },
    );
    let writer: Promise<CommitResult> | undefined;
    const cleaner = new FaultStore(store);
    // Before the retirement commit (third record write): start the writer, wait for its checks.
    cleaner.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 2 },
      {
        type: "before",
        run: async () => {
          writer = restore({ ...ctx, store: writerStore }, 2);
          await writerReady;
        },
      },
    );
    // Before the first deletion: let the manifest land.
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          letManifestGo();
          await writer;
        },
      },
    );
    await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    const result = await writer!;
    expect(result.version).toBe(6);
    expect(await missingFiles(ctx, store, 6)).toEqual([]);
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toEqual([]);
  });

  it("invariant 7: a restore that completes between the plan and the retirement commit is found by the re-listing of manifests", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const cleaner = new FaultStore(store);
    let restored: CommitResult | undefined;
    cleaner.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 2 },
      {
        type: "before",
        run: async () => {
          restored = await restore(ctx, 2);
        },
      },
    );
    await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    expect(restored?.version).toBe(6);
    expect(await missingFiles(ctx, store, 6)).toEqual([]);
  });

  it("invariant 7: a restore without declared sources is refused while any retirement is committed", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const cleaner = new FaultStore(store);
    let restored: unknown;
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          restored = await restore(ctx, 2, false).catch((e: unknown) => e);
        },
      },
    );
    await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    expect(isHoldfastError(restored, "refused")).toBe(true);
    expect(versionsOf(store)).toEqual([5]);
  });

  it("a lease-holding writer restores its leased version while a cleanup retires the others: the commit lands intact", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 2,
      ttlMs: 600_000,
    });
    const cleaner = new FaultStore(store);
    let restored: CommitResult | undefined;
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          restored = await restore(ctx, 2);
        },
      },
    );
    const stats = await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    await releaseLease(ctx, lease);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 2, reason: "lease" }),
    );
    expect(restored?.version).toBe(6);
    expect(await missingFiles(ctx, store, 6)).toEqual([]);
    expect(versionsOf(store)).toEqual([2, 5, 6]);
  });

  it("a writer whose manifest put stays unknown keeps its intent: cleanup keeps the files until the intent's bound, then sweeps the intent", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const { manifest } = await readManifest(ctx, "main", 1);
    const lossy = new FaultStore(store);
    lossy.on({ operation: "put", key: /^_versions\//, times: 100 }, { type: "lose-before-apply" });
    const error = await restore({ ...ctx, store: lossy }, 1).catch((e: unknown) => e);
    expect(isHoldfastError(error, "unresolved")).toBe(true);
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toHaveLength(1);
    // Version 1 is retired, but the intent names its files: they stay.
    const first = await cleanup(ctx, policy, {
      format: holdfastFormat,
    });
    expect(first.retired).toContainEqual({ branch: "main", version: 1 });
    for (const f of manifest.files) expect(await store.head(f.key)).not.toBeNull();
    // Past the bound the intent no longer counts and is removed.
    await time.advance(COMMIT_INTENT_BOUND_MS + 2_000);
    const later = await cleanup(
      ctx,
      { ...policy, orphanGraceMs: 60 * 60_000 },
      {
        format: holdfastFormat,
      },
    );
    expect(later.objectsDeleted.expiredCommitIntents).toBe(1);
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toEqual([]);
  });

  it("a dry run takes the last look too: files a live commit intent names are kept in the plan, as the run keeps them (docs/protocol.md §2.5)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const options = { format: holdfastFormat };
    const before = await planCleanup(ctx, policy, options);
    expect(before.lastLook).toEqual({ intents: 0, lateManifests: 0, filesKept: 0 });
    // A restore of version 2 in flight: its intent is written, its manifest not yet.
    const { manifest } = await readManifest(ctx, "main", 2);
    const txnId = ctx.ids.next();
    const intent = {
      schema: 1,
      txnId,
      branch: "main",
      files: manifest.files.map((f) => f.key),
      sources: [{ branch: "main", version: 2 }],
      boundMs: COMMIT_INTENT_BOUND_MS,
    };
    await store.put(commitIntentKey(txnId), new TextEncoder().encode(JSON.stringify(intent)));
    const plan = await planCleanup(ctx, policy, options);
    expect(plan.lastLook).toEqual({
      intents: 1,
      lateManifests: 0,
      filesKept: manifest.files.length,
    });
    expect(plan.objectsDeleted.dataFiles).toBe(
      before.objectsDeleted.dataFiles - manifest.files.length,
    );
    // The run deletes exactly what the plan listed, and the intent's files survive.
    const done = await cleanup(ctx, policy, options);
    expect(done.objectsDeleted.dataFiles).toBe(plan.objectsDeleted.dataFiles);
    for (const f of manifest.files) expect(await store.head(f.key)).not.toBeNull();
  });
});
