import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLocalStore } from "@holdfast/backends-local";
import { isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext, RETIREMENT_ROOT } from "@holdfast/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CleanupStats, cleanup } from "../src/index.js";
import { KILL_SCALE_OPTIONS, KILL_SCALE_POLICY, keysOf } from "./fixtures/kill-shared.js";
import { RecordingStore } from "./helpers.js";

// A cleanup of thousands of versions SIGKILLed in the middle of its deletions (and of its
// retirement), then resumed (docs/protocol.md §6: committed records complete, pre-commit
// ones are given up after their ownership bound): the resumed run's requests are those of
// the work left, not of the whole run. It reads each manifest left at most once and none
// that was gone, deletes nothing that was gone but one record's data files whose deletion
// was in flight, and sends batch deletes at the floor of what was left.

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const childScript = join(packageDir, "test", "fixtures", "kill-child.ts");
const VERSIONS = 3_000;
const KEPT = KILL_SCALE_POLICY.retainVersions;
const RECORD = KILL_SCALE_OPTIONS.maxVersionsPerRecord;
const BATCH = 1_000; // the local store's maxBatchDelete
const base = mkdtempSync(join(tmpdir(), "holdfast-kill-scale-"));
const template = join(base, "template");
const manifestOf = new Map<number, string>();
const fileOf = new Map<number, string>();

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Also logs the key of every read (GET, HEAD). */
class ReadRecordingStore extends RecordingStore {
  readonly gets: string[] = [];

  override get(key: string, options?: Parameters<ObjectStore["get"]>[1]) {
    this.gets.push(key);
    return super.get(key, options);
  }
  override head(key: string, options?: Parameters<ObjectStore["head"]>[1]) {
    this.gets.push(key);
    return super.head(key, options);
  }

  /** Keys written under the dataset's versions and data (the cleanup only deletes there). */
  get deletes(): string[] {
    return this.writes.filter((k) => k.startsWith("_versions/") || k.startsWith("data/"));
  }

  get batches(): number {
    return this.requestCounts().deleteMany;
  }
}

/** Runs the cleanup in a child; SIGKILLs it at its first progress event `killWhen` accepts. */
function runChild(
  root: string,
  killWhen: (phase: string, done: number, total: number | undefined) => boolean,
): Promise<{ killedAt: string | undefined }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@holdfast/source", childScript, root, "-"],
      {
        cwd: packageDir,
        stdio: ["ignore", "pipe", "inherit"],
        env: { ...process.env, HOLDFAST_KILL_SCALE: "1" },
      },
    );
    let killedAt: string | undefined;
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const [, phase, done, total] = line.split(" ");
        if (killedAt !== undefined || phase === undefined) continue;
        if (killWhen(phase, Number(done), total === "-" ? undefined : Number(total))) {
          killedAt = line;
          child.kill("SIGKILL");
        }
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === null && code !== 0) reject(new Error(`kill child exited ${code}`));
      else resolve({ killedAt });
    });
  });
}

beforeAll(async () => {
  const ctx = createContext(createLocalStore({ root: template, fsync: false }));
  await initDataset(ctx);
  for (let v = 1; v <= VERSIONS; v += 1) {
    const file = await writeDataFile(ctx, new TextEncoder().encode(`${v}`));
    await commitVersion(ctx, { branch: "main", files: [file] });
    fileOf.set(v, file.key);
  }
  for (const key of await keysOf(template)) {
    const m = /^_versions\/main\/(\d{20})\.json$/.exec(key);
    if (m) manifestOf.set(Number(m[1]), key);
  }
  expect(manifestOf.size).toBe(VERSIONS);
}, 300_000);

const retired = VERSIONS - KEPT;
describe(`a cleanup of ${VERSIONS} versions SIGKILLed midway resumes with the requests of the work left`, () => {
  it.each([
    // Half of the retired objects (manifests and data files) deleted.
    ["in its deletions", (phase: string, done: number) => phase === "delete" && done >= retired],
    // Half of the versions retired (records drained and sealed, none committed).
    [
      "in its retirement",
      (phase: string, done: number) => phase === "retire" && done >= retired / 2,
    ],
  ])(
    "killed %s",
    async (where, killWhen) => {
      const root = join(base, where.replaceAll(" ", "-"));
      cpSync(template, root, { recursive: true, preserveTimestamps: true });
      const { killedAt } = await runChild(root, killWhen);
      expect(killedAt, "the run was killed").toBeDefined();
      const atKill = await keysOf(root);
      const manifestsLeft = [...manifestOf].filter(([, k]) => atKill.has(k));
      const finished = [...manifestOf.keys()].filter((v) => !atKill.has(manifestOf.get(v)!));
      const retiredLeft = manifestsLeft.filter(([v]) => v <= retired).length;
      const filesLeft = [...fileOf].filter(([v, k]) => v <= retired && atKill.has(k)).length;
      if (where === "in its deletions") {
        // The kill fell between the first and the last deletion: work done and work left.
        expect(finished.length).toBeGreaterThan(0);
        expect(retiredLeft).toBeGreaterThan(0);
      } else expect(finished).toEqual([]);

      // Resume: the killed run's lock and records are stale after their ownership bound
      // (storage time in whole seconds; up to 20 s of attempts on a loaded machine). A record
      // sealed after the lock's last renewal goes stale later than the lock: a run that starts
      // between the two rightly leaves that record's versions to its owner (docs/protocol.md
      // §5.3), so the resume waits until both are stale: bound 800 ms + 1 s precision + 1 s of
      // truncation.
      await new Promise((r) => setTimeout(r, 3_500));
      const recording = new ReadRecordingStore(createLocalStore({ root, fsync: false }));
      const ctx = createContext(recording);
      let stats: CleanupStats | null = null;
      for (let attempt = 0; attempt < 40 && stats === null; attempt += 1) {
        await new Promise((r) => setTimeout(r, 500));
        const getsBefore = recording.gets.length;
        const deletesBefore = recording.deletes.length;
        const batchesBefore = recording.batches;
        stats = await cleanup(ctx, KILL_SCALE_POLICY, KILL_SCALE_OPTIONS).catch(
          (error: unknown) => {
            if (isHoldfastError(error, "conflict") && error.code === "CLEANUP_RUNNING") return null;
            throw error;
          },
        );
        // A refused attempt (its clock probe aside) reads no manifest and deletes nothing.
        if (stats === null) {
          expect(
            recording.deletes
              .slice(deletesBefore)
              .filter((k) => k.startsWith("_versions/") || k.startsWith("data/")),
          ).toEqual([]);
          expect(recording.batches).toBe(batchesBefore);
          expect(
            recording.gets.slice(getsBefore).filter((k) => k.startsWith("_versions/")),
          ).toEqual([]);
        }
      }
      expect(stats, "the resumed run finished").not.toBeNull();

      // One read per manifest left, none of a manifest that was gone.
      const manifestReads = recording.gets.filter((k) => k.startsWith("_versions/"));
      expect(new Set(manifestReads).size, "each manifest read once").toBe(manifestReads.length);
      for (const key of manifestReads) expect(atKill.has(key), `read ${key}`).toBe(true);
      expect(manifestReads.length).toBeLessThanOrEqual(manifestsLeft.length);
      // Nothing that was gone is deleted again, but the data files of the one record whose
      // deletion was in flight (its manifests were left, so its files are re-deleted).
      // (The resumed run's own records, probes and lock come and go: not counted here.)
      const dataset = (k: string) => k.startsWith("_versions/") || k.startsWith("data/");
      const again = recording.deletes.filter((k) => dataset(k) && !atKill.has(k));
      expect(
        again.every((k) => k.startsWith("data/")),
        `only data files again: ${again.filter((k) => !k.startsWith("data/")).slice(0, 3)}`,
      ).toBe(true);
      expect(again.length).toBeLessThanOrEqual(RECORD);
      for (const v of finished) {
        expect(recording.deletes.includes(manifestOf.get(v)!), `deleted ${v} again`).toBe(false);
      }
      // Batch deletes at the floor of the work left: per kind ⌈left / 1000⌉, plus one
      // partial batch per record and kind (records of 500 versions).
      const records = Math.ceil(retiredLeft / RECORD) + 1;
      const floor = Math.ceil(retiredLeft / BATCH) + Math.ceil((filesLeft + RECORD) / BATCH);
      expect(stats!.requests.deleteMany).toBe(recording.batches);
      expect(recording.batches).toBeLessThanOrEqual(floor + 2 * records);
      if (process.env.HOLDFAST_KILL_SCALE_REPORT === "1") {
        console.log(
          JSON.stringify({
            where,
            killedAt,
            retiredLeft,
            filesLeft,
            again: again.length,
            manifestReads: manifestReads.length,
            requests: stats!.requests,
          }),
        );
      }
      // The run's deletions: exactly what was left of the retired versions.
      expect(stats!.objectsDeleted.manifests).toBe(retiredLeft);

      // Nothing lost, everything done.
      const end = await keysOf(root);
      for (let v = 1; v <= VERSIONS; v += 1) {
        expect(end.has(manifestOf.get(v)!), `manifest ${v}`).toBe(v > retired);
        expect(end.has(fileOf.get(v)!), `data file of ${v}`).toBe(v > retired);
      }
      expect([...end].filter((k) => k.startsWith(RETIREMENT_ROOT))).toEqual([]);
    },
    300_000,
  );
});
