import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { runPylanceTables } from "@holdfast/test-support";
import { describe, expect, it } from "vitest";
import { cli } from "./e2e-harness.js";

// What a cleanup freed, per kind, equals what left the disk; pylance's own cleanup of a copy
// of the same table reports the same bytes (docs/operations.md, apps/cli/README.md).

/** Every file under `dir` with its size. */
function filesOf(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.set(relative(dir, path), statSync(path).size);
  }
  return out;
}

const KIND_OF: [RegExp, string][] = [
  [/^_versions\//, "manifests"],
  [/^data\//, "data"],
  [/^_deletions\//, "deletion"],
  [/^_indices\//, "index"],
  [/^_transactions\//, "transaction"],
];

describe("bytes freed on a pylance-written table", () => {
  it("holdfast cleanup reports per kind exactly the files that left the disk (dry run too); pylance's bytes_removed on a copy is within 1%", async () => {
    const root = mkdtempSync(join(tmpdir(), "holdfast-cli-bytes-"));
    try {
      await runPylanceTables(["write", "history", root], {});
      const table = join(root, "history.lance");
      const copy = join(root, "copy.lance");
      await promisify(execFile)("cp", ["-a", table, copy]);
      await sleep(1_100); // files of the last storage second count as orphans the next one
      const before = filesOf(table);
      const args = [
        "cleanup",
        table,
        "--retain",
        "1",
        "--min-age",
        "0",
        "--orphan-grace",
        "0s",
        "--no-writer-active",
        "--json",
      ];
      const plan = await cli([...args, "--dry-run"]);
      expect(plan.code, plan.stderr).toBe(0);
      const run = await cli(args);
      expect(run.code, run.stderr).toBe(0);
      type Stats = {
        bytesDeleted: number;
        deletedByKind: Record<string, { objects: number; bytes: number }>;
        objectsDeleted: { total: number };
      };
      const planned = (plan.json().stats as Stats) ?? {};
      const stats = run.json().stats as Stats;
      const after = filesOf(table);
      const gone = [...before].filter(([path]) => !after.has(path));
      const goneBytes = gone.reduce((n, [, size]) => n + size, 0);
      expect(goneBytes).toBeGreaterThan(0);
      // the total and each kind agree with the disk
      expect(stats.bytesDeleted).toBe(goneBytes);
      const expected: Record<string, { objects: number; bytes: number }> = {};
      for (const kind of ["manifests", "data", "deletion", "index", "transaction", "other"]) {
        expected[kind] = { objects: 0, bytes: 0 };
      }
      for (const [path, size] of gone) {
        const kind = KIND_OF.find(([re]) => re.test(path))?.[1] ?? "other";
        expected[kind]!.objects += 1;
        expected[kind]!.bytes += size;
      }
      expect(stats.deletedByKind).toEqual(expected);
      expect(expected.transaction!.objects).toBeGreaterThan(0); // not counted as data
      expect(stats.objectsDeleted.total).toBe(gone.length);
      // the dry run said the same before anything was deleted
      expect(planned.deletedByKind).toEqual(expected);
      expect(planned.bytesDeleted).toBe(goneBytes);
      // pylance's own cleanup of the copy
      const lance = await runPylanceTables<{ bytesRemoved: number }>(
        ["lance-cleanup", copy, "--retain", "1"],
        {},
      );
      expect(
        Math.abs(lance.bytesRemoved - goneBytes) / goneBytes,
        `pylance ${lance.bytesRemoved}, holdfast ${goneBytes}`,
      ).toBeLessThanOrEqual(0.01);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 600_000);
});
