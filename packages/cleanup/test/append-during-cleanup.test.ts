import { isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import {
  COMMIT_INTENT_PREFIX,
  COMMIT_RETIREMENT_IN_PROGRESS,
  type CommitResult,
  commitVersion,
  RetirementInProgressError,
  readManifest,
  writeDataFile,
} from "@holdfast/dataset";
import { type ProtocolContext, RETIREMENT_ROOT } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { append, missingFiles } from "./append-support.js";
import { DAY, keysUnder, MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

const policy = { retainVersions: 1 };

/** Runs `during` before the cleaner's `nth` request matching `match`; returns its outcome and the stats. */
async function cleanupWith(
  ctx: ProtocolContext,
  store: ObjectStore,
  match: Parameters<FaultStore["on"]>[0],
  during: () => Promise<unknown>,
) {
  const cleaner = new FaultStore(store);
  let outcome: unknown = "not run";
  cleaner.on(match, {
    type: "before",
    run: async () => {
      outcome = await during().catch((e: unknown) => e);
    },
  });
  const stats = await cleanup({ ...ctx, store: cleaner }, policy, {
    format: holdfastFormat,
  });
  return { outcome, stats, requests: cleaner.requests().length };
}

describe("appends without sources while a cleanup deletes (docs/protocol.md §2.5, rule H)", () => {
  it("invariant 7: an append committed inside the delete phase (a committed record present, data files not yet deleted) lands with every file it names", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const { outcome, stats } = await cleanupWith(
      ctx,
      store,
      { operation: "deleteMany", nth: 1 },
      async () => {
        // Inside the delete phase: the record is committed and still there.
        expect(keysUnder(store, RETIREMENT_ROOT)).toHaveLength(1);
        return append(ctx);
      },
    );
    expect(outcome).toMatchObject({ version: 6 });
    expect(stats.retired).toHaveLength(4);
    expect(versionsOf(store)).toEqual([5, 6]);
    expect(await missingFiles(ctx, store, 6)).toEqual([]);
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toEqual([]);
  });

  it("invariant 7: an append of files older than a day, committed between the data-file and the manifest deletions, lands intact", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    await time.advance(DAY);
    const { outcome } = await cleanupWith(ctx, store, { operation: "deleteMany", nth: 2 }, () =>
      append(ctx),
    );
    expect(outcome).toMatchObject({ version: 6 });
    expect(await missingFiles(ctx, store, 6)).toEqual([]);
  });

  it("invariant 7: an append placed before every single request of a cleanup run always lands, and its files survive the run", async () => {
    // How many requests one run makes on this history (the append itself is not counted).
    const probe = world();
    await seedDataset(probe.ctx, probe.time, { versions: 5 });
    const { requests } = await cleanupWith(
      probe.ctx,
      probe.store,
      { operation: "get", key: "-never-" },
      async () => undefined,
    );
    expect(requests).toBeGreaterThan(30);
    const refused: number[] = [];
    for (let nth = 1; nth <= requests; nth += 1) {
      const { ctx, store, time } = world(nth);
      await seedDataset(ctx, time, { versions: 5 });
      const { outcome } = await cleanupWith(ctx, store, { nth }, () => append(ctx));
      if (isHoldfastError(outcome)) {
        refused.push(nth);
        continue;
      }
      const { version } = outcome as CommitResult;
      expect(await missingFiles(ctx, store, version), `append before request ${nth}`).toEqual([]);
    }
    expect(refused).toEqual([]);
  });

  it("invariant 7: a restore of a version being retired (no sources) inside the delete phase is refused, naming that version and the record, and never lands", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const { manifest } = await readManifest(ctx, "main", 2);
    const { outcome } = await cleanupWith(ctx, store, { operation: "deleteMany", nth: 1 }, () =>
      commitVersion(ctx, { branch: "main", files: manifest.files.map((f) => ({ ...f })) }),
    );
    // Had it landed, it would name files the run deleted (invariant 7):
    if (!isHoldfastError(outcome)) expect(await missingFiles(ctx, store, 6)).toEqual([]);
    expect(outcome).toBeInstanceOf(RetirementInProgressError);
    const error = outcome as RetirementInProgressError;
    expect(error.code).toBe(COMMIT_RETIREMENT_IN_PROGRESS);
    expect(error.record).toMatch(/^_holdfast\/retirement\/main\//);
    expect(error.source).toEqual({ branch: "main", version: 2 });
    expect(versionsOf(store)).toEqual([5]);
  });

  it("invariant 7: a fork built on a version being retired (parent named, no sources) is refused naming that version, never lands naming deleted files", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    const { manifest } = await readManifest(ctx, "main", 3);
    const { outcome } = await cleanupWith(ctx, store, { operation: "deleteMany", nth: 1 }, () =>
      commitVersion(ctx, {
        branch: "fork",
        parent: { branch: "main", version: 3 },
        files: manifest.files.map((f) => ({ ...f })),
      }),
    );
    if (!isHoldfastError(outcome)) {
      const { manifest: forked } = await readManifest(ctx, "fork", 1);
      const gone = [];
      for (const f of forked.files) if (!(await store.head(f.key))) gone.push(f.key);
      expect(gone, "the fork landed naming deleted files (invariant 7)").toEqual([]);
    }
    expect(outcome).toMatchObject({
      code: COMMIT_RETIREMENT_IN_PROGRESS,
      source: { branch: "main", version: 3 },
    });
    expect(versionsOf(store, "fork")).toEqual([]);
  });

  it("an append whose head is a restore that re-added a retired version's files before the retirement commit still lands intact (the cleaner read the restore's intent)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5 });
    // The restore of version 2 writes its intent before the retirement commit, so the
    // cleaner's last look keeps version 2's files; its manifest lands inside the delete phase.
    const { manifest } = await readManifest(ctx, "main", 2);
    const writer = new FaultStore(store);
    let atManifest!: () => void;
    const ready = new Promise<void>((r) => {
      atManifest = r;
    });
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    writer.on(
      { operation: "put", key: /^_versions\/main\//, nth: 1 },
      {
        type: "before",
        run: async () => {
          atManifest();
          await gate;
        },
      },
    );
    let restore: Promise<CommitResult> | undefined;
    const cleaner = new FaultStore(store);
    cleaner.on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 2 },
      {
        type: "before",
        run: async () => {
          restore = commitVersion(
            { ...ctx, store: writer },
            { branch: "main", files: manifest.files, sources: [{ branch: "main", version: 2 }] },
          );
          await ready;
        },
      },
    );
    let appended: unknown;
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          release();
          await restore;
          appended = await append(ctx).catch((e: unknown) => e);
        },
      },
    );
    await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    expect((await restore!).version).toBe(6);
    expect(appended).toMatchObject({ version: 7 });
    expect(await missingFiles(ctx, store, 6)).toEqual([]);
    expect(await missingFiles(ctx, store, 7)).toEqual([]);
  });

  it("invariant 7: a writeDataFile handle committed a second time is reused, not fresh: inside the delete phase of a cleanup retiring the version that first named it, the commit is refused and never lands naming a deleted file", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    const shared = await writeDataFile(ctx, new TextEncoder().encode("shared rows"));
    await commitVersion(ctx, { branch: "main", files: [shared] });
    await commitVersion(ctx, {
      branch: "main",
      files: [await writeDataFile(ctx, new Uint8Array(3))],
    });
    // Version 3 is past the minimum version age; the handle is still inside the fresh window.
    await time.advance(6 * MINUTE);
    const { outcome, stats } = await cleanupWith(
      ctx,
      store,
      { operation: "deleteMany", nth: 1 },
      () =>
        commitVersion(ctx, {
          branch: "dev",
          parent: { branch: "main", version: 3 },
          files: [shared],
        }),
    );
    expect(stats.retired).toContainEqual({ branch: "main", version: 3 });
    if (!isHoldfastError(outcome)) {
      expect(
        await store.head(shared.key),
        "dev@1 names a deleted file (invariant 7)",
      ).not.toBeNull();
    }
    expect(outcome).toMatchObject({
      code: COMMIT_RETIREMENT_IN_PROGRESS,
      source: { branch: "main", version: 3 },
    });
    expect(versionsOf(store, "dev")).toEqual([]);
  });
});
