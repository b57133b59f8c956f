import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { cleanup, collectStatus, planCleanup, recover } from "@holdfast/cleanup";
import { listAll } from "@holdfast/conditional-store";
import { createContext, NOT_A_HOLDFAST_DATASET, type ProtocolContext } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import {
  censusReferences,
  createBranch,
  createTag,
  deleteTag,
  holdfastFormat,
  recoverReferences,
} from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { readVersion, TABLE, writeHistory } from "./history.js";
import { lanceVersions, localSite } from "./sites.js";

/** Every file under `dir` with its size and mtime: what "nothing was touched" means on disk. */
function snapshot(dir: string, rel = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const path = `${rel}${entry.name}`;
    if (entry.isDirectory()) {
      for (const [k, v] of snapshot(dir, `${path}/`)) out.set(k, v);
    } else {
      const stats = statSync(join(dir, path));
      out.set(path, `${stats.size}:${stats.mtimeMs}`);
    }
  }
  return out;
}

// docs/protocol.md §1.1: an operation in holdfast's format refuses a store
// without holdfast's dataset marker before it writes anything. LanceDB writes the table;
// holdfast's library is called on it with holdfast's format (a caller that never opened it).
describe("a Lance table given to holdfast's library in holdfast's format", () => {
  it("invariant 6: cleanup, plan, recover, acquire, tag, branch and the censuses refuse (found: lance) and touch no file; LanceDB still reads every version", {
    timeout: 120_000,
  }, async () => {
    const site = localSite();
    const history = await writeHistory(site);
    const root = join(site.dir!, `${TABLE}.lance`);
    const before = snapshot(root);
    const lanceFiles = [...before.keys()].filter((k) => !k.startsWith("_holdfast/"));
    expect(lanceFiles.some((k) => k.startsWith("data/"))).toBe(true);

    // A fresh store (and context) per call: nothing is remembered between operations.
    const open = async () => createContext(await site.store(TABLE));
    const target = { branch: "main", version: 1 };
    const format = holdfastFormat;
    const operations: [string, (ctx: ProtocolContext) => Promise<unknown>][] = [
      ["cleanup", (ctx) => cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format })],
      [
        "cleanup --concurrent",
        (ctx) => cleanup(ctx, { retainVersions: 1 }, { format, concurrent: true }),
      ],
      [
        "planCleanup",
        (ctx) => planCleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format }),
      ],
      ["recover", (ctx) => recover(ctx, { format })],
      ["collectStatus", (ctx) => collectStatus(ctx, { format })],
      ["acquireLease", (ctx) => acquireLease(ctx, { ...target, ttlMs: 60_000 })],
      ["createTag", (ctx) => createTag(ctx, { name: "t", target }, { format })],
      ["createBranch", (ctx) => createBranch(ctx, { name: "b", parent: target }, { format })],
      ["deleteTag", (ctx) => deleteTag(ctx, "keep", { format })],
      ["recoverReferences", (ctx) => recoverReferences(ctx, { format })],
      ["censusReferences", (ctx) => censusReferences(ctx, { format })("main", [1, 2, 3])],
    ];
    for (const [name, operation] of operations) {
      const error = await operation(await open()).then(
        () => new Error(`${name} succeeded`),
        (e: unknown) => e,
      );
      expect({ name, error }).toMatchObject({
        name,
        error: { kind: "invalid-input", code: NOT_A_HOLDFAST_DATASET, found: "lance" },
      });
      expect((error as Error).message).toContain(
        "this looks like a Lance table (_versions/*.manifest found)",
      );
    }

    // Nothing written, nothing deleted: the same files with the same sizes and mtimes.
    expect(snapshot(root)).toEqual(before);
    const store = await site.store(TABLE);
    const holdfastObjects: string[] = [];
    for await (const meta of listAll(store, "_holdfast/")) holdfastObjects.push(meta.key);
    expect(holdfastObjects).toEqual([]);
    expect(await lanceVersions(site, TABLE)).toEqual(history.versions);
    const latest = history.versions.at(-1)!;
    expect(await readVersion(site, latest)).toEqual(history.reads.get(latest));
  });
});
