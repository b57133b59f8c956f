import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CleanupProgressEventShape, JsonShapes } from "@holdfast/api-shapes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatDuration } from "../src/progress.js";
import { run } from "./run.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "holdfast-cli-progress-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A local dataset of `versions` commits of two fresh files each. */
async function dataset(versions: number): Promise<string> {
  const ds = join(dir, "ds");
  expect((await run(["init", ds])).code).toBe(0);
  for (let i = 0; i < versions; i += 1) {
    await writeFile(join(dir, "a.txt"), `a${i}`);
    await writeFile(join(dir, "b.txt"), `b${i}`);
    expect((await run(["commit", ds, "a.txt", "b.txt"], { cwd: dir })).code).toBe(0);
  }
  return ds;
}

describe("cleanup --json progress events (apps/cli/README.md)", () => {
  it("one JSON object per stderr line; the delete phase has its total from its first event; its last done is the manifests and data files deleted", async () => {
    const ds = await dataset(6);
    const r = await run(["cleanup", ds, "--retain", "1", "--min-age", "0", "--json"]);
    expect(r.code).toBe(0);
    const stats = JsonShapes.cleanup.parse(r.json()).stats as {
      objectsDeleted: { manifests: number; dataFiles: number; total: number };
    };
    const events = r.stderr
      .trim()
      .split("\n")
      .map((line) => CleanupProgressEventShape.parse(JSON.parse(line)));
    expect(new Set(events.map((e) => e.phase))).toEqual(
      new Set(["recover", "plan", "retire", "delete", "orphans"]),
    );
    const deletes = events.filter((e) => e.phase === "delete");
    const deleted = stats.objectsDeleted.manifests + stats.objectsDeleted.dataFiles;
    expect(deleted).toBe(5 + 10);
    // 5 retired manifests and the 10 data files they name, known before the first delete
    expect(deletes[0]).toMatchObject({ done: 0, total: 15, left: 15, etaMs: null });
    expect(deletes.at(-1)).toMatchObject({ done: deleted, total: deleted, left: 0, etaMs: 0 });
    const last = events.at(-1)!;
    expect(last).toMatchObject({ event: "progress", command: "cleanup", phase: "orphans" });
    expect(deleted + last.done).toBe(stats.objectsDeleted.total);
  });

  it("a non-terminal stderr gets nothing without --json or --progress", async () => {
    const ds = await dataset(3);
    const quiet = await run(["cleanup", ds, "--retain", "1", "--min-age", "0"]);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe("");
    expect(quiet.stdout).toMatch(/Retired 2 version/);
  });

  it("durations read as s, m s, h m", () => {
    expect(formatDuration(1)).toBe("1s");
    expect(formatDuration(125_000)).toBe("2m 05s");
    expect(formatDuration(3 * 3600_000 + 7 * 60_000)).toBe("3h 07m");
  });
});
