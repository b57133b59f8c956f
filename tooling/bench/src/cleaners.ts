import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { listAll } from "@holdfast/conditional-store";
import { startFaultProxy } from "@holdfast/fault-proxy";
import { classifyVersionsKey, LANCE_VERSIONS_PREFIX } from "@holdfast/format-lance";
import type { CleanerResult, CleanerTarget } from "./cleaner-child.js";
import {
  buildLanceTable,
  cachedLanceTable,
  copyLanceTable,
  LANCE_TABLE,
  rgwEnv,
} from "./lance-section.js";
import { S3_PRICES } from "./prices.js";
import { cpuSnapshot, foreignCores } from "./quiet.js";
import { step } from "./sections.js";
import { fmtMinMedian, minMedian, printTable } from "./table.js";
import { removeAll } from "./targets.js";

/**
 * Cleaners side by side (tooling/bench/README.md): holdfast (package API: openLanceFormat +
 * cleanup, retainVersions 1), pylance 14's `cleanup_old_versions` (the anchor; retain 1) and
 * LanceDB JS `optimize({ cleanupOlderThan: now })`, each in its own process, on copies of one
 * LanceDB-written table per size. A block is one (target, size): `runs` runs of every
 * cleaner, the order rotating between runs. The 1-minute load average is printed with each
 * block; a block during which it was above `maxLoad` is refused and run again (up to
 * `retries` times). Every cleaner must delete the same objects in every run, else the block
 * fails.
 */
export type CleanerName = "holdfast" | "pylance" | "lancedb";
export const CLEANERS: readonly CleanerName[] = ["holdfast", "pylance", "lancedb"];

export interface CleanerPoint {
  readonly target: "local" | "rgw";
  readonly versions: number;
}

export interface CleanersOptions {
  readonly runs: number;
  /** Refuse a block when the 1-minute load average is above this before it starts. @default Infinity */
  readonly maxLoad: number;
  /**
   * Refuse a block when other work kept more than this many cores busy on average while it
   * ran (`quiet.ts`; where /proc is missing, the load's peak is held to `maxLoad` instead).
   * @default Infinity
   */
  readonly maxForeignCores?: number | undefined;
  /** Reruns of a refused block before it is given up. */
  readonly retries: number;
  /** Seconds to wait before rerunning a refused block. */
  readonly retryWaitS: number;
  /** Local only: each child first cleans a second copy, untimed (warm code). */
  readonly warm?: boolean | undefined;
}

interface Run extends CleanerResult {
  readonly deleted: number;
  /** On RGW: HTTP requests through the counting proxy, by S3 price class. */
  readonly http: HttpCounts | null;
  readonly versionsLeft: number;
}

type HttpCounts = Record<"put" | "list" | "deleteMany" | "get" | "head" | "delete", number>;

const BENCH_ROOT = fileURLToPath(new URL("..", import.meta.url));
const REPO_ROOT = join(BENCH_ROOT, "..", "..");

function python(): string {
  const py = process.env.HOLDFAST_PYTHON ?? join(REPO_ROOT, ".venv", "bin", "python");
  if (!existsSync(py)) {
    throw new Error(`${py} is missing: create it with bash tooling/scripts/python-env.sh`);
  }
  return py;
}

function runChild(who: CleanerName, target: CleanerTarget): Promise<CleanerResult> {
  const [command, args] =
    who === "pylance"
      ? [python(), [join(BENCH_ROOT, "src", "pylance-cleaner.py"), JSON.stringify(target)]]
      : [
          process.execPath,
          [
            "--import",
            "tsx",
            "--conditions=@holdfast/source",
            join(BENCH_ROOT, "src", "cleaner-child.ts"),
            who,
            JSON.stringify(target),
          ],
        ];
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args as string[],
      { cwd: BENCH_ROOT, maxBuffer: 16 * 1024 * 1024, timeout: 3_600_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${who} cleaner failed: ${error.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as CleanerResult);
      },
    );
  });
}

function countFiles(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) n += countFiles(join(dir, entry.name));
    else n += 1;
  }
  return n;
}

/** Lance's objects of a local table (holdfast's own `_holdfast/` not counted), and its manifests. */
function localCounts(table: string): { objects: number; manifests: number } {
  const own = join(table, "_holdfast");
  const versions = join(table, LANCE_VERSIONS_PREFIX);
  return {
    objects: countFiles(table) - (existsSync(own) ? countFiles(own) : 0),
    manifests: readdirSync(versions).filter((n) => classifyVersionsKey(n).kind === "manifest")
      .length,
  };
}

/** S3 price class of one HTTP request (the proxy's record). */
function priceClass(method: string, path: string): keyof HttpCounts {
  const query = path.includes("?") ? path.slice(path.indexOf("?") + 1) : "";
  if (method === "POST" && /(^|&)delete(=|&|$)/.test(query)) return "deleteMany";
  if (method === "GET" && /(^|&)(list-type|prefix|delimiter)=/.test(query)) return "list";
  if (method === "GET") return "get";
  if (method === "HEAD") return "head";
  if (method === "DELETE") return "delete";
  return "put"; // PUT, POST (multipart, copy): the PUT class
}

function dollars(counts: HttpCounts): number {
  let d = 0;
  for (const [type, n] of Object.entries(counts) as [keyof HttpCounts, number][]) {
    d += (n * S3_PRICES.perThousand[type]) / 1000;
  }
  return d;
}

async function localRun(versions: number, who: CleanerName, warm: boolean): Promise<Run> {
  const copy = await copyLanceTable(versions, who);
  const warmCopy = warm ? await copyLanceTable(versions, `${who}-warm`) : undefined;
  try {
    const before = localCounts(copy.table);
    const result = await runChild(who, {
      kind: "local",
      root: copy.root,
      table: LANCE_TABLE,
      warmRoot: warmCopy?.root,
    });
    const after = localCounts(copy.table);
    return {
      ...result,
      deleted: before.objects - after.objects,
      http: null,
      versionsLeft: after.manifests,
    };
  } finally {
    copy.dispose();
    warmCopy?.dispose();
  }
}

/**
 * On RGW LanceDB builds a table per cleaner and run: a copy would be stamped after the
 * manifests it copies, and Lance keeps files newer than the manifests that name them.
 */
async function rgwRun(versions: number, who: CleanerName): Promise<Run> {
  const env = rgwEnv();
  const prefix = `cleaners-bench-${who}-${Date.now()}`;
  const base = { ...env, kind: "s3" as const, prefix, table: LANCE_TABLE };
  await buildLanceTable(`s3://${env.bucket}/${prefix}`, versions, {
    aws_endpoint: env.endpoint,
    aws_access_key_id: env.accessKeyId,
    aws_secret_access_key: env.secretAccessKey,
    aws_region: env.region,
    allow_http: "true",
    aws_virtual_hosted_style_request: "false",
  });
  const proxy = await startFaultProxy({ target: env.endpoint });
  const { openS3Store } = await import("@holdfast/backends-s3");
  const store = await openS3Store({
    bucket: env.bucket,
    prefix: `${prefix}/${LANCE_TABLE}.lance`,
    region: env.region,
    endpoint: env.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
  });
  const counts = async () => {
    let objects = 0;
    let manifests = 0;
    for await (const meta of listAll(store, "")) {
      if (meta.key.startsWith("_holdfast/")) continue;
      objects += 1;
      if (
        classifyVersionsKey(meta.key).kind === "manifest" &&
        meta.key.startsWith(LANCE_VERSIONS_PREFIX)
      ) {
        manifests += 1;
      }
    }
    return { objects, manifests };
  };
  try {
    const before = await counts();
    const seen = proxy.requests.length;
    const result = await runChild(who, { ...base, endpoint: proxy.url });
    const http: HttpCounts = { put: 0, list: 0, deleteMany: 0, get: 0, head: 0, delete: 0 };
    for (const r of proxy.requests.slice(seen)) http[priceClass(r.method, r.path)] += 1;
    const after = await counts();
    return {
      ...result,
      requests: Object.values(http).reduce((a, b) => a + b, 0),
      deleted: before.objects - after.objects,
      http,
      versionsLeft: after.manifests,
    };
  } finally {
    await proxy.close();
    await removeAll(store);
  }
}

/** One block: every cleaner `runs` times, order rotating; throws when the deletions differ. */
async function block(
  point: CleanerPoint,
  runs: number,
  warm: boolean,
): Promise<Record<CleanerName, Run[]>> {
  const results: Record<CleanerName, Run[]> = { holdfast: [], pylance: [], lancedb: [] };
  for (let run = 0; run < runs; run += 1) {
    const order = CLEANERS.map((_, i) => CLEANERS[(i + run) % CLEANERS.length]!);
    for (const who of order) {
      step(`cleaners ${point.target} ${point.versions} versions run ${run + 1}/${runs}: ${who}`);
      results[who].push(
        point.target === "local"
          ? await localRun(point.versions, who, warm)
          : await rgwRun(point.versions, who),
      );
    }
  }
  const deleted = new Set(CLEANERS.flatMap((who) => results[who].map((r) => r.deleted)));
  const left = new Set(CLEANERS.flatMap((who) => results[who].map((r) => r.versionsLeft)));
  if (deleted.size !== 1 || left.size !== 1 || !left.has(1)) {
    const per = CLEANERS.map(
      (who) =>
        `${who}: deleted ${results[who].map((r) => r.deleted).join("/")}, manifests left ${results[who].map((r) => r.versionsLeft).join("/")}`,
    );
    throw new Error(
      `cleaners ${point.target} ${point.versions}: the cleaners did not delete the same objects (${per.join("; ")})`,
    );
  }
  return results;
}

function load1(): number {
  return loadavg()[0]!;
}

/** The section: one table, one row per (block, cleaner); answers how many blocks were refused. */
export async function cleanersSideBySide(
  points: readonly CleanerPoint[],
  options: CleanersOptions,
): Promise<{ refused: number }> {
  let refused = 0;
  if (points.length === 0) return { refused };
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  for (const point of points) {
    let results: Record<CleanerName, Run[]> | undefined;
    for (let attempt = 0; attempt <= options.retries && !results; attempt += 1) {
      if (point.target === "local" && attempt === 0) {
        step(`cleaners: LanceDB table of ${point.versions} versions (local cache)`);
        const cached = await cachedLanceTable(point.versions);
        notes.push(
          `local ${point.versions}: table ${cached.buildMs === null ? "reused from the cache" : `built by LanceDB in ${(cached.buildMs / 1000).toFixed(1)} s`} (${cached.source})`,
        );
      }
      const loadBefore = load1();
      if (loadBefore > options.maxLoad) {
        // Busy already: refused without running (nothing measured would count).
        const line = `${point.target} ${point.versions}: 1-min load ${loadBefore.toFixed(2)} before`;
        process.stdout.write(`load: ${line}\n`);
        notes.push(`${line}: refused (above ${options.maxLoad}), not run, attempt ${attempt + 1}`);
        if (attempt < options.retries) {
          await new Promise((r) => setTimeout(r, options.retryWaitS * 1000));
        }
        continue;
      }
      let peakLoad = loadBefore;
      const sampler = setInterval(() => {
        peakLoad = Math.max(peakLoad, load1());
      }, 1000);
      const cpuBefore = cpuSnapshot();
      let got: Record<CleanerName, Run[]>;
      try {
        got = await block(point, options.runs, options.warm === true);
      } finally {
        clearInterval(sampler);
      }
      const cpuAfter = cpuSnapshot();
      const loadAfter = load1();
      peakLoad = Math.max(peakLoad, loadAfter);
      const foreign = cpuBefore && cpuAfter ? foreignCores(cpuBefore, cpuAfter) : null;
      const maxForeign = options.maxForeignCores ?? Number.POSITIVE_INFINITY;
      const line = `${point.target} ${point.versions}: 1-min load ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after, ${peakLoad.toFixed(2)} peak; other work ${foreign === null ? "unknown" : `${foreign.toFixed(2)} cores`} during the block`;
      process.stdout.write(`load: ${line}\n`);
      const busy = foreign === null ? peakLoad > options.maxLoad : foreign > maxForeign;
      if (busy) {
        notes.push(
          `${line}: refused (${foreign === null ? `load above ${options.maxLoad}` : `other work above ${maxForeign} cores`}), attempt ${attempt + 1}`,
        );
        if (attempt < options.retries) {
          await new Promise((r) => setTimeout(r, options.retryWaitS * 1000));
        }
        continue;
      }
      notes.push(line);
      results = got;
    }
    if (!results) {
      refused += 1;
      rows.push([point.target, point.versions, "(refused)", "-", "-", "-", "-", "-", "-", "-"]);
      continue;
    }
    const anchor = minMedian(results.pylance.map((r) => r.ms));
    for (const who of CLEANERS) {
      const rs = results[who];
      const ms = minMedian(rs.map((r) => r.ms));
      const http = rs[0]!.http;
      rows.push([
        point.target,
        point.versions,
        who,
        fmtMinMedian(rs.map((r) => r.ms)),
        `${(ms.median / anchor.median).toFixed(2)}x`,
        fmtMinMedian(rs.map((r) => r.cpuMs)),
        fmtMinMedian(rs.map((r) => r.peakRssMiB)),
        rs[0]!.deleted,
        rs[0]!.requests ?? "-",
        http ? `$${dollars(http).toFixed(6)}` : "-",
      ]);
      // Printed as each block ends too, so a run stopped later keeps it.
      process.stdout.write(`block: ${rows.at(-1)!.join(" | ")}\n`);
    }
  }
  printTable({
    title: "Cleaners side by side (LanceDB 0.31.0 table, keep the latest version)",
    columns: [
      "target",
      "versions",
      "cleaner",
      "wall ms min/med",
      "med vs pylance",
      "CPU ms min/med",
      "peak RSS MiB min/med",
      "deleted",
      "requests",
      "S3 price",
    ],
    rows,
    notes: [
      `${options.runs} run(s) per cleaner and block, each in its own process${options.warm ? " (local: after one untimed cleanup of another copy, --warm)" : " (cold: the first call in the process)"}, the order rotating between runs; wall and CPU (user + system, every thread) of the cleanup call (table opened inside it), peak RSS of the process. Every cleaner deleted the same objects and left one manifest.`,
      "holdfast: openLanceFormat + cleanup({ retainVersions: 1, minVersionAgeMs: 0 }), fsync on; pylance 14: cleanup_old_versions(older_than=0, retain_versions=1); LanceDB JS: optimize({ cleanupOlderThan: now }).",
      `Requests: holdfast's store operations (local); on RGW the HTTP requests of each cleaner through one counting proxy, priced at ${S3_PRICES.name}.`,
      ...notes,
    ],
  });
  return { refused };
}
