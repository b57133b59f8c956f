import { CountingStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import {
  COMMIT_SOURCE_MISSING,
  commitVersion,
  holdfastLayout,
  writeDataFile,
} from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import {
  type CleanupOptions,
  type CleanupPolicy,
  cleanup,
  MIN_ORPHAN_GRACE_MS,
  ORPHAN_GRACE_BELOW_FLOOR,
  planCleanup,
  recover,
} from "../src/index.js";
import { MINUTE, seedDataset, world } from "./helpers.js";

/** Runs `call` on a counting store and returns the error and the number of requests sent. */
async function refusedWithoutRequests(
  ctx: ProtocolContext,
  call: (ctx: ProtocolContext) => Promise<unknown>,
) {
  const counting = new CountingStore(ctx.store);
  const error = await call({ ...ctx, store: counting }).then(
    () => undefined,
    (e: unknown) => e,
  );
  return {
    error: error as { kind?: string; code?: string; message?: string },
    sent: counting.totalRequests(),
  };
}

// docs/protocol.md §6, Cleanup 11 sweep: the orphan grace floor.
describe("orphan grace floor", () => {
  it("a grace below the floor is refused with the reason, before any request, unless no writer is active", async () => {
    const { ctx, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    for (const orphanGraceMs of [0, 1_000, MIN_ORPHAN_GRACE_MS - 1]) {
      const { error, sent } = await refusedWithoutRequests(ctx, (c) =>
        cleanup(c, { retainVersions: 1, orphanGraceMs }, { format: holdfastFormat }),
      );
      expect(error?.kind).toBe("invalid-input");
      expect(error?.code).toBe(ORPHAN_GRACE_BELOW_FLOOR);
      expect(error?.message).toContain("commit in flight");
      expect(sent).toBe(0);
    }
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, orphanGraceMs: 0, noWriterActive: true },
      { format: holdfastFormat },
    );
    expect(stats.dryRun).toBe(false);
  });

  it("a writer committing 150 files across a cleanup at the floor grace keeps every file; one stalled past the grace is refused, never lands naming swept files", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    // Writer 1 writes 150 files, one second apart; a cleanup runs half-way through.
    const files = [];
    for (let i = 0; i < 150; i += 1) {
      files.push(await writeDataFile(ctx, new Uint8Array([i])));
      await time.advance(1_000);
      if (i === 75) {
        await cleanup(
          ctx,
          { retainVersions: 1, orphanGraceMs: MIN_ORPHAN_GRACE_MS },
          { format: holdfastFormat },
        );
      }
    }
    const landed = await commitVersion(ctx, { branch: "main", files });
    for (const f of files) expect(await store.head(f.key)).not.toBeNull();
    // Writer 2 writes its files, then stalls for two hours before committing: a cleanup
    // at the floor grace sweeps them as orphans meanwhile.
    const stalled = [];
    for (let i = 0; i < 150; i += 1) stalled.push(await writeDataFile(ctx, new Uint8Array([i])));
    await time.advance(2 * 60 * MINUTE);
    await cleanup(
      ctx,
      { retainVersions: 1, orphanGraceMs: MIN_ORPHAN_GRACE_MS },
      { format: holdfastFormat },
    );
    const error = await commitVersion(ctx, { branch: "main", files: stalled }).catch((e) => e);
    expect(error.code).toBe(COMMIT_SOURCE_MISSING);
    expect(landed.version).toBe(3);
  });
});

// Invariant 6: every option of every public cleanup function is checked before the first
// request, the storage-time probe included.
describe("cleanup options are validated before any request", () => {
  const policy: CleanupPolicy = { retainVersions: 1 };
  const badOptions: [string, Record<string, unknown>][] = [
    ["an invalid Date as storageNow", { storageNow: new Date(Number.NaN) }],
    ["a string as storageNow", { storageNow: "2026-01-01" }],
    ["ownershipBoundMs 0", { ownershipBoundMs: 0 }],
    ["ownershipBoundMs -1", { ownershipBoundMs: -1 }],
    ["ownershipBoundMs NaN", { ownershipBoundMs: Number.NaN }],
    ["ownershipBoundMs 1.5", { ownershipBoundMs: 1.5 }],
    ["maxVersionsPerRecord NaN", { maxVersionsPerRecord: Number.NaN }],
    ["maxVersionsPerRecord 0", { maxVersionsPerRecord: 0 }],
    ["concurrency 0", { concurrency: 0 }],
    ["concurrency Infinity", { concurrency: Number.POSITIVE_INFINITY }],
    ["a non-function onProgress", { onProgress: "yes" }],
    ["a non-function leaseCensus", { leaseCensus: {} }],
    ["a non-function deleteLeases", { deleteLeases: true }],
    ["a non-function heartbeatSleep", { heartbeatSleep: 5 }],
    ["a non-boolean concurrent", { concurrent: "yes" }],
    ["a non-boolean waitForLock", { waitForLock: 1 }],
    ["a non-signal signal", { signal: {} }],
    ["a format without methods", { format: { name: "x" } }],
    [
      "a format whose data prefix is not a string",
      { format: { ...holdfastLayout, dataPrefix: 7 } },
    ],
  ];
  // The format first, so each case meets the check it names (a missing format is FORMAT_REQUIRED, format-required.test.ts).
  const withFormat = (options: Record<string, unknown>) =>
    ({ format: holdfastFormat, ...options }) as unknown as CleanupOptions;
  for (const [what, options] of badOptions) {
    it(`refuses ${what} with invalid-input and sends nothing (cleanup, plan, recover)`, async () => {
      const { ctx, time, store } = world();
      await seedDataset(ctx, time, { versions: 3 });
      const keysBefore = store.keys();
      for (const call of [
        (c: ProtocolContext) => cleanup(c, policy, withFormat(options)),
        (c: ProtocolContext) => planCleanup(c, policy, withFormat(options)),
        (c: ProtocolContext) => recover(c, withFormat(options)),
      ]) {
        const { error, sent } = await refusedWithoutRequests(ctx, call);
        expect(error?.kind).toBe("invalid-input");
        expect(sent).toBe(0);
      }
      expect(store.keys()).toEqual(keysBefore);
    });
  }

  const badPolicies: [string, unknown][] = [
    ["a non-boolean noWriterActive", { retainVersions: 1, noWriterActive: "true" }],
    ["a non-boolean dryRun", { retainVersions: 1, dryRun: 1 }],
    [
      "a non-boolean errorIfTaggedOldVersions",
      { retainVersions: 1, errorIfTaggedOldVersions: "no" },
    ],
    ["branches that are not an array", { retainVersions: 1, branches: "main" }],
    ["olderThanMs NaN", { olderThanMs: Number.NaN }],
    ["minVersionAgeMs -1", { retainVersions: 1, minVersionAgeMs: -1 }],
  ];
  for (const [what, bad] of badPolicies) {
    it(`refuses a policy with ${what} before any request`, async () => {
      const { ctx, time } = world();
      await seedDataset(ctx, time, { versions: 2 });
      const { error, sent } = await refusedWithoutRequests(ctx, (c) =>
        cleanup(c, bad as CleanupPolicy, {
          format: holdfastFormat,
        }),
      );
      expect(error?.kind).toBe("invalid-input");
      expect(sent).toBe(0);
    });
  }

  it("an invalid storageNow never reaches the storage-time guards: a one-second-old version stays", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const f = await writeDataFile(ctx, new Uint8Array([1]));
    await commitVersion(ctx, { branch: "main", files: [f] });
    await time.advance(1_000);
    const faulty = new FaultStore(store);
    await expect(
      cleanup(
        { ...ctx, store: faulty },
        { retainVersions: 1 },
        { format: holdfastFormat, storageNow: new Date("nope") },
      ),
    ).rejects.toMatchObject({ kind: "invalid-input" });
    expect(faulty.requests()).toEqual([]);
    expect(await store.head(f.key)).not.toBeNull();
  });
});
