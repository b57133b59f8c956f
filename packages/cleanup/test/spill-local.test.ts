import { cpSync, readdirSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { listAll } from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { censusLeases } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CleanupOptions, type CleanupStats, cleanup } from "../src/index.js";
import { RecordingStore } from "./helpers.js";

// docs/protocol.md §6.2: where the manifests read before the first drain wait
// (in memory, in the run's spill folder, or some of each) changes nothing the run decides
// or sends. The same dataset on a real local store, cleaned three ways, retains, deletes
// and requests the same; the in-memory run makes no spill folder.

const VERSIONS = 70;
const RETAIN = 5;
const base = await mkdtemp(join(tmpdir(), "holdfast-spill-local-"));
const template = join(base, "template");
afterAll(() => rm(base, { recursive: true, force: true }));

beforeAll(async () => {
  const ctx = createContext(createLocalStore({ root: template, fsync: false }));
  await initDataset(ctx);
  // Every version names two files of its own and the first version's first file (reused:
  // it stays while a retained version names it).
  let shared: { key: string; size: number } | undefined;
  for (let v = 1; v <= VERSIONS; v += 1) {
    const files = [
      await writeDataFile(ctx, new TextEncoder().encode(`${v}-a`)),
      await writeDataFile(ctx, new TextEncoder().encode(`${v}-bb`)),
    ];
    shared ??= files[0];
    await commitVersion(ctx, { branch: "main", files: v > 1 ? [...files, shared!] : files });
  }
}, 120_000);

async function keysOf(root: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const meta of listAll(createLocalStore({ root, fsync: false }), prefix)) {
    keys.push(meta.key);
  }
  return keys.sort();
}

interface Outcome {
  stats: CleanupStats;
  deleted: string[];
  left: string[];
  /** Spill folders seen under spillDir at any progress event, and the most files in them. */
  folders: Set<string>;
  mostFiles: number;
  /** The most sealed records seen waiting in the spill folder at once. */
  mostRecords: number;
  /** Writes of retirement records (drain, seal, renewals, commit, deletion mark...). */
  recordWrites: number;
}

async function clean(name: string, options: CleanupOptions): Promise<Outcome> {
  const root = join(base, name);
  cpSync(template, root, { recursive: true, preserveTimestamps: true });
  const spillDir = join(base, `${name}-spill`);
  await mkdir(spillDir);
  const store = new RecordingStore(createLocalStore({ root, fsync: false }));
  const folders = new Set<string>();
  let mostFiles = 0;
  let mostRecords = 0;
  const stats = await cleanup(
    createContext(store),
    { retainVersions: RETAIN, minVersionAgeMs: 0 },
    {
      ...options,
      spillDir,
      maxVersionsPerRecord: 25,
      onProgress: () => {
        for (const run of readdirSync(spillDir)) {
          folders.add(run);
          const files = readdirSync(join(spillDir, run));
          mostFiles = Math.max(mostFiles, files.length);
          mostRecords = Math.max(
            mostRecords,
            files.filter((f) => f.endsWith(".record.json")).length,
          );
        }
      },
    },
  );
  // Every exit removes the run's folder.
  expect(await readdir(spillDir)).toEqual([]);
  const deleted = store.writes.filter((k) => k.startsWith("data/") || k.startsWith("_versions/"));
  const left = [
    ...(await keysOf(root, "data/")),
    ...(await keysOf(root, "_versions/")),
    ...(await keysOf(root, "_holdfast/retirement/")),
  ];
  const recordWrites = store.writes.filter((k) => k.startsWith("_holdfast/retirement/")).length;
  return { stats, deleted: deleted.sort(), left, folders, mostFiles, mostRecords, recordWrites };
}

describe("the manifest spill on a real local store", () => {
  it("in memory, spilled, or spilled past a threshold: the same plan, the same objects deleted, the same requests", async () => {
    const inMemory = await clean("memory", { format: holdfastFormat });
    const spilled = await clean("spilled", { format: holdfastFormat, spillAboveVersions: 0 });
    // 65 retired in records of 25, 25 and 15: the first in memory, the other two spilled.
    const mixed = await clean("mixed", { format: holdfastFormat, spillAboveVersions: 30 });

    expect(inMemory.folders.size).toBe(0); // below the default threshold: no disk
    expect(spilled.folders.size).toBe(1);
    // 3 records' manifests, and the sealed records waiting for the commits (2 of 3 seen).
    expect(spilled.mostFiles - spilled.mostRecords).toBe(3);
    expect(spilled.mostRecords).toBeGreaterThanOrEqual(2);
    expect(mixed.folders.size).toBe(1);
    expect(mixed.mostFiles - mixed.mostRecords).toBe(2);
    expect(inMemory.mostRecords).toBe(0);

    const retired = VERSIONS - RETAIN;
    expect(inMemory.stats.objectsDeleted).toMatchObject({
      manifests: retired,
      dataFiles: 2 * retired - 1, // the shared file is named by the retained versions
    });
    expect(inMemory.stats.retiredRanges).toEqual([{ branch: "main", from: 1, to: retired }]);
    for (const other of [spilled, mixed]) {
      expect(other.deleted).toEqual(inMemory.deleted);
      expect(other.left).toEqual(inMemory.left);
      expect(other.stats.objectsDeleted).toEqual(inMemory.stats.objectsDeleted);
      expect(other.stats.bytesDeleted).toBe(inMemory.stats.bytesDeleted);
      expect(other.stats.retiredRanges).toEqual(inMemory.stats.retiredRanges);
      expect(other.stats.retained).toEqual(inMemory.stats.retained);
      expect(other.stats.requests).toEqual(inMemory.stats.requests);
    }
    // The shared file stays with the retained versions; every retired version's own files went.
    expect(inMemory.left.filter((k) => k.startsWith("data/"))).toHaveLength(2 * RETAIN + 1);
    // One GET per manifest, as without the spill.
    expect(spilled.stats.requests.get).toBe(inMemory.stats.requests.get);
  }, 120_000);
});

// docs/protocol.md §6.2: a sealed record past `spillAboveVersions` waits for the commits in
// the spill folder, and the heartbeat renews it there (read, rewritten if-match, written
// back): a renewal that did not keep the copy current would fail the next move's if-match,
// and the run would keep every version of the record instead of retiring it.
describe("sealed records waiting in the spill folder", () => {
  it("are renewed there while they wait, then commit and retire as in memory", async () => {
    const inMemory = await clean("sealed-memory", { format: holdfastFormat });
    // Every census waits 300 ms, so the sealed records wait through several heartbeats
    // (every 100 ms: a third of the 300 ms ownership bound).
    const slowCensus = (root: string) => {
      const census = censusLeases(createContext(createLocalStore({ root, fsync: false })));
      return async (branch: string, versions: number[], at: Date) => {
        await new Promise((r) => setTimeout(r, 300));
        return census(branch, versions, at);
      };
    };
    const waited = await clean("sealed-spilled", {
      format: holdfastFormat,
      spillAboveVersions: 0,
      ownershipBoundMs: 300,
      leaseCensus: slowCensus(join(base, "sealed-spilled")),
    });
    expect(waited.mostRecords).toBeGreaterThanOrEqual(2);
    expect(waited.stats.warnings).toEqual([]);
    expect(waited.deleted).toEqual(inMemory.deleted);
    expect(waited.left).toEqual(inMemory.left);
    expect(waited.stats.retiredRanges).toEqual(inMemory.stats.retiredRanges);
    expect(waited.stats.retained).toEqual(inMemory.stats.retained);
    // Renewals happened while they waited: more record writes than the run without waits.
    expect(waited.recordWrites).toBeGreaterThan(inMemory.recordWrites + 3);
  }, 120_000);
});
