import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import {
  CountingStore,
  holdfastError,
  listAll,
  type ObjectStore,
  seededIds,
} from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanup,
  HISTORY_PREFIX,
  listRunHistory,
  planCleanup,
  recover,
  runSummary,
  writeRunSummary,
} from "../src/index.js";

// The run history (packages/cleanup/src/history.ts) on the real filesystem backend: a run
// that asks for it leaves one bounded summary, a plan none, old ones are pruned, and a
// summary that cannot be written never fails the run.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function dataset(versions: number): Promise<{ store: ObjectStore; ctx: ProtocolContext }> {
  const root = await mkdtemp(join(tmpdir(), "holdfast-history-"));
  roots.push(root);
  const store = createLocalStore({ root, fsync: false });
  const ctx = { ...createContext(store), ids: seededIds(7) };
  await initDataset(ctx);
  for (let v = 1; v <= versions; v += 1) {
    const file = await writeDataFile(ctx, new TextEncoder().encode(`file ${v} `.repeat(v)));
    await commitVersion(ctx, { branch: "main", files: [file] });
  }
  return { store, ctx };
}

async function historyKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const meta of listAll(store, HISTORY_PREFIX)) keys.push(meta.key);
  return keys;
}

const policy = { retainVersions: 2, minVersionAgeMs: 0 };

describe("run history", () => {
  it("a cleanup that asks for history leaves one summary: trigger, ranges retired, objects and bytes deleted", async () => {
    const { store, ctx } = await dataset(6);
    const stats = await cleanup(ctx, policy, {
      format: holdfastFormat,
      history: { trigger: "cli" },
    });
    expect(stats.retired).toHaveLength(4);
    const runs = await listRunHistory(store);
    expect(runs).toHaveLength(1);
    const [run] = runs;
    expect(run).toMatchObject({
      schema: 1,
      mode: "cleanup",
      trigger: "cli",
      jobId: null,
      outcome: "succeeded",
      error: null,
      retiredVersions: 4,
      retiredRanges: [{ branch: "main", from: 1, to: 4 }],
      keptVersions: 2,
      bytesDeleted: stats.bytesDeleted,
      rangesTruncated: false,
    });
    expect(run!.objectsDeleted.total).toBe(stats.objectsDeleted.total);
    expect(Date.parse(run!.recordedAt)).not.toBeNaN();
  });

  it("a plan (dry run) and a run without the option leave none", async () => {
    const { store, ctx } = await dataset(4);
    await planCleanup(ctx, policy, { format: holdfastFormat, history: { trigger: "cli" } });
    await cleanup(ctx, { ...policy, dryRun: true }, { format: holdfastFormat, history: {} });
    await cleanup(ctx, policy, { format: holdfastFormat });
    expect(await historyKeys(store)).toEqual([]);
  });

  it("a recovery leaves a summary of mode recover; the newest is listed first", async () => {
    const { store, ctx } = await dataset(4);
    await cleanup(ctx, policy, { format: holdfastFormat, history: { trigger: "schedule" } });
    await recover(ctx, { format: holdfastFormat, history: { trigger: "api", jobId: "J1" } });
    const runs = await listRunHistory(store);
    expect(runs.map((r) => [r.mode, r.trigger, r.jobId])).toEqual([
      ["recover", "api", "J1"],
      ["cleanup", "schedule", null],
    ]);
  });

  it("keeps only the newest `keep` summaries (older ones are deleted after each write)", async () => {
    const { store, ctx } = await dataset(3);
    for (let i = 0; i < 5; i += 1) {
      await recover(ctx, { format: holdfastFormat, history: { trigger: `run-${i}`, keep: 3 } });
    }
    expect(await historyKeys(store)).toHaveLength(3);
    const runs = await listRunHistory(store);
    expect(runs.map((r) => r.trigger)).toEqual(["run-4", "run-3", "run-2"]);
    expect(await listRunHistory(store, { limit: 2 })).toHaveLength(2);
  });

  it("a summary the store refuses never fails the run; the error is reported", async () => {
    const { store, ctx } = await dataset(4);
    const refusing = new (class extends CountingStore {
      override put(...args: Parameters<ObjectStore["put"]>) {
        if (args[0].startsWith(HISTORY_PREFIX)) {
          return Promise.reject(holdfastError("refused", "put", "no history here"));
        }
        return super.put(...args);
      }
    })(store);
    const errors: unknown[] = [];
    const stats = await cleanup({ ...ctx, store: refusing }, policy, {
      format: holdfastFormat,
      history: { onError: (e) => errors.push(e) },
    });
    expect(stats.retired).toHaveLength(2);
    expect(errors).toHaveLength(1);
    expect(await historyKeys(store)).toEqual([]);
  });

  it("a run refused before it began (bad history option) writes nothing at all", async () => {
    const { store, ctx } = await dataset(3);
    const before: string[] = [];
    for await (const meta of listAll(store, "")) before.push(meta.key);
    await expect(
      cleanup(ctx, policy, { format: holdfastFormat, history: { keep: 0 } }),
    ).rejects.toMatchObject({ kind: "invalid-input", code: "INVALID_OPTION" });
    await expect(
      cleanup(ctx, policy, { format: holdfastFormat, history: { trigger: "a b" } }),
    ).rejects.toMatchObject({ kind: "invalid-input", code: "INVALID_OPTION" });
    const after: string[] = [];
    for await (const meta of listAll(store, "")) after.push(meta.key);
    expect(after).toEqual(before);
  });

  it("a summary stays bounded: at most 200 ranges per kind, ten warnings", () => {
    const ranges = Array.from({ length: 500 }, (_, i) => ({
      branch: "main",
      from: i * 2 + 1,
      to: i * 2 + 1,
    }));
    const summary = runSummary(
      {
        id: "01J0000000000000000000000A",
        mode: "cleanup",
        startedAtMs: 0,
        endedAtMs: 5,
        options: {},
      },
      {
        retiredRanges: ranges,
        finishedRanges: [],
        retained: [],
        objectsDeleted: { total: 3 },
        bytesDeleted: 9,
        warnings: Array.from({ length: 30 }, (_, i) => `w${i}`),
      } as never,
    );
    expect(summary.retiredVersions).toBe(500);
    expect(summary.retiredRanges).toHaveLength(200);
    expect(summary.rangesTruncated).toBe(true);
    expect(summary.warnings).toHaveLength(10);
    expect(JSON.stringify(summary).length).toBeLessThan(16_000);
  });

  it("an id that is not a ULID is reported, not written", async () => {
    const { store, ctx } = await dataset(1);
    const errors: unknown[] = [];
    const summary = runSummary(
      { id: "../escape", mode: "cleanup", startedAtMs: 0, endedAtMs: 0, options: {} },
      undefined,
    );
    await writeRunSummary(ctx, summary, { onError: (e) => errors.push(e) });
    expect(errors).toHaveLength(1);
    expect(await historyKeys(store)).toEqual([]);
  });
});
