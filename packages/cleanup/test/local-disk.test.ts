import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore, LOCAL_INTERNAL_PREFIX } from "@holdfast/backends-local";
import { listAll } from "@holdfast/conditional-store";
import { commitVersion, createContext, initDataset, writeDataFile } from "@holdfast/dataset";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

describe("cleanup on the local filesystem backend", () => {
  it("deletes data files and manifests as create-only batches: no key lock file per deleted key (docs/protocol.md §1)", async () => {
    const root = await mkdtemp(join(tmpdir(), "holdfast-cleanup-local-"));
    roots.push(root);
    const store = createLocalStore({ root, fsync: false });
    const ctx = createContext(store);
    await initDataset(ctx);
    for (let v = 1; v <= 40; v += 1) {
      const files = [
        await writeDataFile(ctx, new TextEncoder().encode(`a${v}`)),
        await writeDataFile(ctx, new TextEncoder().encode(`b${v}`)),
      ];
      await commitVersion(ctx, { branch: "main", files });
    }
    const locks = join(root, LOCAL_INTERNAL_PREFIX, "locks");
    const lockFiles = () => (existsSync(locks) ? readdirSync(locks).length : 0);
    const before = lockFiles();
    const stats = await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 });
    expect(stats.objectsDeleted).toMatchObject({ manifests: 39, dataFiles: 78 });
    const left: string[] = [];
    for await (const meta of listAll(store, "data/")) left.push(meta.key);
    expect(left).toHaveLength(2);
    // 117 deleted keys would spread over ~95 of the 256 lock stripes; only the keys the run
    // compare-and-swaps (cleanup lock, retirement record, head hint) may add lock files.
    expect(lockFiles() - before).toBeLessThanOrEqual(4);
  });
});
