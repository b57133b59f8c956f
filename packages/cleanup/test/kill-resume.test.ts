import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createLocalStore } from "@holdfast/backends-local";
import {
  type DeleteManyOptions,
  type DeleteManyResult,
  type DeleteOptions,
  type GetResult,
  isHoldfastError,
  type ListOptions,
  type ListPage,
  type ObjectMeta,
  type ObjectStore,
  type PutOptions,
  type PutResult,
} from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext, RETIREMENT_ROOT } from "@holdfast/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import {
  KILL_RESUME_OPTIONS,
  KILL_RESUME_POLICY,
  KILL_RESUME_SPILL,
  keysOf,
} from "./fixtures/kill-shared.js";

// A cleanup SIGKILLed at a random point (seeded), then resumed: nothing finished before the
// kill is read or deleted again, nothing retained is lost, and the resumed runs finish the
// work (docs/protocol.md §6: committed records complete, pre-commit ones are given up
// after their ownership bound; step 5 deletes a version's data files before its manifest).

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const childScript = join(packageDir, "test", "fixtures", "kill-child.ts");
const VERSIONS = 120;
const FILES = 2;
const KEPT = KILL_RESUME_POLICY.retainVersions;
const base = mkdtempSync(join(tmpdir(), "holdfast-kill-resume-"));
const template = join(base, "template");
/** Data-file keys of each version, and each version's manifest key. */
const filesOf = new Map<number, string[]>();
const manifestOf = new Map<number, string>();
let eventsOfFullRun = 0;

afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Records the keys a store reads and deletes. */
class RecordingStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  readonly gets: string[] = [];
  readonly deletes: string[] = [];

  constructor(private readonly inner: ObjectStore) {
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }
  get(key: string, options?: { signal?: AbortSignal | undefined }): Promise<GetResult | null> {
    this.gets.push(key);
    return this.inner.get(key, options);
  }
  head(key: string, options?: { signal?: AbortSignal | undefined }): Promise<ObjectMeta | null> {
    this.gets.push(key);
    return this.inner.head(key, options);
  }
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    return this.inner.put(key, body, options);
  }
  delete(key: string, options?: DeleteOptions): Promise<void> {
    this.deletes.push(key);
    return this.inner.delete(key, options);
  }
  deleteMany(keys: readonly string[], options?: DeleteManyOptions): Promise<DeleteManyResult> {
    this.deletes.push(...keys);
    return this.inner.deleteMany(keys, options);
  }
  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.inner.list(prefix, options);
  }
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function copyOfTemplate(name: string): string {
  const root = join(base, name);
  cpSync(template, root, { recursive: true, preserveTimestamps: true });
  return root;
}

/** Runs the child; kills it with SIGKILL once it printed `killAt` progress lines (+ `delayMs`). */
function runChild(
  root: string,
  killAt: number | null,
  delayMs = 0,
  spillDir?: string,
): Promise<{ events: number; completed: boolean }> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@holdfast/source",
        childScript,
        root,
        ...(spillDir ? [spillDir] : []),
      ],
      { cwd: packageDir, stdio: ["ignore", "pipe", "inherit"] },
    );
    let events = 0;
    let completed = false;
    let buffered = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        if (line === "done") completed = true;
        else events += 1;
        if (killAt !== null && events === killAt) {
          setTimeout(() => child.kill("SIGKILL"), delayMs);
        }
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === null && code !== 0) reject(new Error(`kill child exited ${code}`));
      else resolve({ events, completed });
    });
  });
}

beforeAll(async () => {
  const store = createLocalStore({ root: template, fsync: false });
  const ctx = createContext(store);
  await initDataset(ctx);
  for (let v = 1; v <= VERSIONS; v += 1) {
    const files = [];
    for (let f = 0; f < FILES; f += 1) {
      files.push(await writeDataFile(ctx, new TextEncoder().encode(`${v}-${f}`)));
    }
    await commitVersion(ctx, { branch: "main", files });
    filesOf.set(
      v,
      files.map((f) => f.key),
    );
  }
  for (const key of await keysOf(template)) {
    const m = /^_versions\/main\/(\d{20})\.json$/.exec(key);
    if (m) manifestOf.set(Number(m[1]), key);
  }
  expect(manifestOf.size).toBe(VERSIONS);
  // One uninterrupted run on a copy: how many progress events a whole run prints.
  const full = await runChild(copyOfTemplate("full"), null);
  expect(full.completed).toBe(true);
  eventsOfFullRun = full.events;
}, 120_000);

const seeds = (process.env.HOLDFAST_KILL_SEEDS ?? "1,2,3,4,5,6").split(",").map(Number);
/** Spill folders each spill seed's killed run left (SIGKILL: 1 when it was spilling). */
const spillFoldersLeft: number[] = [];

// The spill variant (docs/protocol.md §6.2): the killed run and every resumed
// one keep the manifests of all but their first record in a spill folder; a killed run's
// folder (SIGKILL leaves it) is never read by the runs after it, each of which removes its own.
describe.each([
  ["manifests in memory", false],
  ["manifests spilled past the first record", true],
])("a cleanup SIGKILLed at any point resumes without redoing finished work (%s)", (_, spill) => {
  it.each(seeds)(
    "seed %i",
    async (seed) => {
      const rng = mulberry32(seed);
      const killAt = 1 + Math.floor(rng() * eventsOfFullRun);
      const delayMs = Math.floor(rng() * 4);
      const name = `${spill ? "spill-" : ""}seed-${seed}`;
      const root = copyOfTemplate(name);
      const spillDir = spill ? join(base, `${name}-spill`) : undefined;
      if (spillDir) mkdirSync(spillDir);
      const where = `seed ${seed}${spill ? " (spill)" : ""}: killed after progress event ${killAt} of ${eventsOfFullRun} + ${delayMs} ms`;
      const killed = await runChild(root, killAt, delayMs, spillDir);
      const atKill = await keysOf(root);
      // What the killed run left in its spill folder (SIGKILL runs no cleanup).
      const leftByKill = spillDir ? readdirSync(spillDir) : [];
      if (spill) spillFoldersLeft.push(leftByKill.length);
      if (killed.completed) expect(leftByKill, where).toEqual([]);
      const finished = [...manifestOf].filter(([, key]) => !atKill.has(key)).map(([v]) => v);
      // A version is finished once its manifest is gone, and its files went before it.
      for (const v of finished) {
        expect(v, where).toBeLessThanOrEqual(VERSIONS - KEPT);
        for (const file of filesOf.get(v)!)
          expect(atKill.has(file), `${where}: ${file}`).toBe(false);
      }

      // Resume: the killed run's lock and pre-commit records are stale after their bound.
      const recording = new RecordingStore(createLocalStore({ root, fsync: false }));
      const ctx = createContext(recording);
      for (let attempt = 0; attempt < 12; attempt += 1) {
        // Storage time is judged in whole seconds: the bound plus up to two seconds.
        await new Promise((r) => setTimeout(r, 500));
        const resumed = await cleanup(ctx, KILL_RESUME_POLICY, {
          ...KILL_RESUME_OPTIONS,
          ...(spillDir ? { spillDir, ...KILL_RESUME_SPILL } : {}),
        }).catch((error: unknown) => {
          if (isHoldfastError(error, "conflict") && error.code === "CLEANUP_RUNNING") return null;
          throw error;
        });
        if (resumed === null) continue; // the killed run's lock is not stale yet
        const keys = await keysOf(root);
        const records = [...keys].filter((k) => k.startsWith(RETIREMENT_ROOT));
        const manifests = [...manifestOf.values()].filter((k) => keys.has(k));
        if (records.length === 0 && manifests.length === KEPT) break;
      }

      // Nothing finished is read or deleted again.
      const gets = new Set(recording.gets);
      const deletes = new Set(recording.deletes);
      for (const v of finished) {
        expect(gets.has(manifestOf.get(v)!), `${where}: read finished ${v}`).toBe(false);
        expect(deletes.has(manifestOf.get(v)!), `${where}: deleted finished ${v}`).toBe(false);
        for (const file of filesOf.get(v)!) {
          expect(deletes.has(file), `${where}: deleted ${file} of finished ${v}`).toBe(false);
        }
      }
      // What is deleted again at most: data files of one record whose manifests were left.
      const again = [...deletes].filter((k) => k.startsWith("data/") && !atKill.has(k));
      expect(again.length, where).toBeLessThanOrEqual(
        KILL_RESUME_OPTIONS.maxVersionsPerRecord * FILES,
      );

      // Nothing lost, everything done: the newest versions with every file, nothing else.
      const end = await keysOf(root);
      const kept = new Set<string>();
      for (let v = VERSIONS - KEPT + 1; v <= VERSIONS; v += 1) {
        expect(end.has(manifestOf.get(v)!), `${where}: manifest ${v}`).toBe(true);
        for (const file of filesOf.get(v)!) kept.add(file);
      }
      expect([...end].filter((k) => k.startsWith("data/")).sort(), where).toEqual([...kept].sort());
      expect([...end].filter((k) => k.startsWith("_versions/")).length, where).toBe(KEPT);
      expect(
        [...end].filter((k) => k.startsWith(RETIREMENT_ROOT)),
        where,
      ).toEqual([]);
      if (killed.completed) expect(finished.length, where).toBe(VERSIONS - KEPT);
      // The resumed runs removed their spill folders; only the killed run's may be left.
      if (spillDir) expect(readdirSync(spillDir), where).toEqual(leftByKill);
    },
    60_000,
  );
  if (spill) {
    it("the spill was active: some seeds were killed while their run had a spill folder", () => {
      expect(spillFoldersLeft).toHaveLength(seeds.length);
      expect(spillFoldersLeft.some((n) => n === 1)).toBe(true);
    });
  }
});
