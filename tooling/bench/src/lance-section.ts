import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store } from "@holdfast/backends-s3";
import { cleanup } from "@holdfast/cleanup";
import { CountingStore, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { startFaultProxy } from "@holdfast/fault-proxy";
import { openLanceFormat } from "@holdfast/format-lance";
import { createContext } from "@holdfast/protocol";
import * as lancedb from "@lancedb/lancedb";
import { step } from "./sections.js";
import { fmtMinMedian, minMedian, printTable } from "./table.js";
import { removeAll } from "./targets.js";

/**
 * holdfast cleanup against Lance's own cleanup on the same LanceDB-written table, side by
 * side (docs/lance.md, "Benchmark"). LanceDB 0.31.0 writes `versions` versions, each an
 * overwrite of ROWS rows, so every old version has a data file and a transaction file of its
 * own and there is nothing to compact; both cleaners keep only the latest version.
 *
 * Local disk: the table is built once per shape into a cache folder (LANCE_BENCH_CACHE,
 * default `$TMPDIR/holdfast-bench-cache`; 10,000 versions take LanceDB over a minute) and
 * copied with its timestamps for each cleaner. RGW: LanceDB builds one table per cleaner
 * and run (a copy would get fresh Last-Modified stamps, which Lance's cleanup treats as too
 * recent), and both cleaners go through one counting HTTP proxy.
 */
const ROWS = 10;
const TABLE = "events";
/** The table name every bench table of LanceDB has. */
export const LANCE_TABLE = TABLE;

export type LanceTarget = "local" | "rgw";

/** One cleaner, one run. */
interface CleanerRun {
  readonly ms: number;
  /** Process CPU (user + system) during the run: Lance's native threads count too. */
  readonly cpuMs: number;
  readonly deleted: number;
  readonly requests: number | null;
  readonly versionsLeft: string;
}

type Cleaner = "holdfast" | "lance";

/** Writes the table with LanceDB at `uri`: `versions` versions, each an overwrite. */
export async function buildLanceTable(
  uri: string,
  versions: number,
  storageOptions: Record<string, string> = {},
): Promise<void> {
  const db = await lancedb.connect(uri, { storageOptions });
  const rows = (v: number) =>
    Array.from({ length: ROWS }, (_, i) => ({ id: v * ROWS + i, v: `version-${v}-row-${i}` }));
  const table = await db.createTable(TABLE, rows(1));
  for (let v = 2; v <= versions; v += 1) await table.add(rows(v), { mode: "overwrite" });
  table.close();
}

/**
 * The local source table of `versions` versions, built once into the cache and reused.
 * Built under a temporary name and renamed, so an interrupted build is never reused.
 */
export async function cachedLanceTable(
  versions: number,
): Promise<{ source: string; buildMs: number | null }> {
  const cache = process.env.LANCE_BENCH_CACHE ?? join(tmpdir(), "holdfast-bench-cache");
  const source = join(cache, `lance-${versions}v-${ROWS}r`);
  if (existsSync(source)) return { source, buildMs: null };
  mkdirSync(cache, { recursive: true });
  const building = mkdtempSync(join(cache, "building-"));
  const started = performance.now();
  await buildLanceTable(building, versions);
  const buildMs = performance.now() - started;
  renameSync(building, source);
  return { source, buildMs };
}

/** holdfast: detect the format, clean with retainVersions 1 (no minimum age: no writer runs). */
async function holdfastCleanup(store: ObjectStore): Promise<number> {
  const counting = new CountingStore(store);
  const ctx = createContext(counting);
  const format = await openLanceFormat(ctx);
  await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
  return counting.totalRequests();
}

/** Lance: open the table and run LanceDB's cleanup of every version older than now. */
async function lanceCleanup(uri: string, storageOptions: Record<string, string>): Promise<void> {
  const db = await lancedb.connect(uri, { storageOptions });
  const table = await db.openTable(TABLE);
  await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: false });
  table.close();
}

async function lanceVersions(uri: string, storageOptions: Record<string, string>) {
  const db = await lancedb.connect(uri, { storageOptions });
  const table = await db.openTable(TABLE);
  const versions = (await table.listVersions()).map((v) => v.version);
  table.close();
  return versions.join(",");
}

/** Wall time and process CPU of `run`. */
async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await run();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { value, ms, cpuMs: (used.user + used.system) / 1000 };
}

function countFiles(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) n += countFiles(join(dir, entry.name));
    else n += 1;
  }
  return n;
}

/** Lance's files of a local table: holdfast's own bookkeeping under _holdfast/ is not counted. */
function lanceFiles(table: string): number {
  const own = join(table, "_holdfast");
  return countFiles(table) - (existsSync(own) ? countFiles(own) : 0);
}

/** A fresh copy (timestamps kept) of the cached table of `versions` versions, and its removal. */
export async function copyLanceTable(
  versions: number,
  who: string,
): Promise<{ root: string; table: string; dispose: () => void }> {
  const { source } = await cachedLanceTable(versions);
  const root = mkdtempSync(join(tmpdir(), `holdfast-lance-bench-${who}-`));
  const table = join(root, `${TABLE}.lance`);
  cpSync(join(source, `${TABLE}.lance`), table, { recursive: true, preserveTimestamps: true });
  settle(root);
  return {
    root,
    table,
    dispose: () => {
      rmSync(root, { recursive: true, force: true });
      settle(tmpdir());
    },
  };
}

/**
 * Writes out the file system holding `path` (`sync -f`, syncfs(2)): a copy's files are on
 * disk before a cleaner runs, as a table's are when it is cleaned long after it was written,
 * and a removed copy's freed blocks are not left for the next run's first fsync to commit.
 * Unlinking a file whose blocks are allocated costs several times more than unlinking one
 * still in dirty page cache (10,000 files one at a time: 0.7 s against about 0.12 s).
 */
function settle(path: string): void {
  execFileSync("sync", ["-f", path]);
}

async function localRun(source: string, who: Cleaner): Promise<CleanerRun> {
  const root = mkdtempSync(join(tmpdir(), `holdfast-lance-bench-${who}-`));
  try {
    const table = join(root, `${TABLE}.lance`);
    cpSync(join(source, `${TABLE}.lance`), table, { recursive: true, preserveTimestamps: true });
    settle(root);
    const before = lanceFiles(table);
    const { value, ms, cpuMs } = await timed(() =>
      who === "holdfast"
        ? holdfastCleanup(createLocalStore({ root: table }))
        : lanceCleanup(root, {}).then(() => null),
    );
    return {
      ms,
      cpuMs,
      deleted: before - lanceFiles(table),
      requests: value,
      versionsLeft: await lanceVersions(root, {}),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
    settle(tmpdir());
  }
}

async function rgwRun(versions: number, who: Cleaner): Promise<CleanerRun> {
  const env = rgwEnv();
  const options = (endpoint: string) => ({
    aws_endpoint: endpoint,
    aws_access_key_id: env.accessKeyId,
    aws_secret_access_key: env.secretAccessKey,
    aws_region: env.region,
    allow_http: "true",
    aws_virtual_hosted_style_request: "false",
  });
  const prefix = `lance-bench-${who}-${Date.now()}`;
  const uri = `s3://${env.bucket}/${prefix}`;
  await buildLanceTable(uri, versions, options(env.endpoint));
  const proxy = await startFaultProxy({ target: env.endpoint });
  try {
    const store = await openS3Store({
      bucket: env.bucket,
      prefix: `${prefix}/${TABLE}.lance`,
      region: env.region,
      endpoint: proxy.url,
      forcePathStyle: true,
      credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
    });
    const lanceObjects = async () => {
      let n = 0;
      for await (const meta of listAll(store, "")) if (!meta.key.startsWith("_holdfast/")) n += 1;
      return n;
    };
    const before = await lanceObjects();
    const seen = proxy.requests.length;
    const { ms, cpuMs } = await timed(() =>
      who === "holdfast"
        ? holdfastCleanup(store).then(() => undefined)
        : lanceCleanup(uri, options(proxy.url)),
    );
    const requests = proxy.requests.length - seen;
    const deleted = before - (await lanceObjects());
    const versionsLeft = await lanceVersions(uri, options(env.endpoint));
    await removeAll(store);
    return { ms, cpuMs, deleted, requests, versionsLeft };
  } finally {
    await proxy.close();
  }
}

/**
 * The section: per target and table size, `runs` runs of each cleaner (their order
 * alternating between runs), printed as one table with min / median times and the ratio.
 */
export async function lanceVsLance(
  points: readonly { target: LanceTarget; versions: number }[],
  runs: number,
): Promise<void> {
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  for (const { target, versions } of points) {
    let source = "";
    if (target === "local") {
      step(`lance table ${versions} versions (local cache)`);
      const cached = await cachedLanceTable(versions);
      source = cached.source;
      notes.push(
        `local ${versions}: table ${cached.buildMs === null ? "reused from the cache" : `built by LanceDB in ${(cached.buildMs / 1000).toFixed(1)} s`} (${source})`,
      );
    }
    const results: Record<Cleaner, CleanerRun[]> = { holdfast: [], lance: [] };
    for (let run = 0; run < runs; run += 1) {
      const order: Cleaner[] = run % 2 === 0 ? ["holdfast", "lance"] : ["lance", "holdfast"];
      for (const who of order) {
        step(`lance ${target} ${versions} versions run ${run + 1}: ${who}`);
        results[who].push(
          target === "local" ? await localRun(source, who) : await rgwRun(versions, who),
        );
      }
    }
    const h = results.holdfast;
    const l = results.lance;
    const hMs = minMedian(h.map((r) => r.ms));
    const lMs = minMedian(l.map((r) => r.ms));
    rows.push([
      target,
      versions,
      `${h[0]!.deleted} / ${l[0]!.deleted}`,
      `${h[0]!.requests ?? "-"} / ${l[0]!.requests ?? "n/a"}`,
      fmtMinMedian(h.map((r) => r.ms)),
      fmtMinMedian(l.map((r) => r.ms)),
      `${(hMs.min / lMs.min).toFixed(2)}x / ${(hMs.median / lMs.median).toFixed(2)}x`,
      `${fmtMinMedian(h.map((r) => r.cpuMs))} / ${fmtMinMedian(l.map((r) => r.cpuMs))}`,
      [...new Set([...h, ...l].map((r) => r.versionsLeft))].join(" | "),
    ]);
  }
  printTable({
    title: "holdfast vs Lance's own cleanup (LanceDB 0.31.0 table, keep the latest version)",
    columns: [
      "target",
      "versions",
      "deleted h / L",
      "requests h / L",
      "holdfast ms min/med",
      "Lance ms min/med",
      "ratio min / med",
      "CPU ms min/med h / L",
      "versions left",
    ],
    rows,
    notes: [
      `${runs} run(s) of each cleaner, alternating which goes first. holdfast: openLanceFormat + cleanup({ retainVersions: 1, minVersionAgeMs: 0 }), fsync on; Lance: optimize({ cleanupOlderThan: now }).`,
      "Requests: holdfast's store operations; on RGW HTTP requests through one counting proxy (Lance's too). Target: ratio <= 1.00x.",
      ...notes,
    ],
  });
}

export function rgwEnv() {
  const file = process.env.HOLDFAST_RGW_ENV_FILE ?? "/tmp/holdfast-services/rgw.env";
  const vars: Record<string, string> = {};
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (m) vars[m[1]!] = m[2]!;
    }
  }
  const read = (name: string) => process.env[name] ?? vars[name] ?? "";
  return {
    endpoint: read("HOLDFAST_S3_ENDPOINT"),
    bucket: read("HOLDFAST_S3_BUCKET"),
    region: read("HOLDFAST_S3_REGION") || "us-east-1",
    accessKeyId: read("AWS_ACCESS_KEY_ID"),
    secretAccessKey: read("AWS_SECRET_ACCESS_KEY"),
  };
}
