import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store, type S3StoreOptions } from "@holdfast/backends-s3";
import { cleanup } from "@holdfast/cleanup";
import { CountingStore, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/dataset";
import { startFaultProxy } from "@holdfast/fault-proxy";
import { censusLanceReferences, openLanceFormat } from "@holdfast/format-lance";
import * as lancedb from "@lancedb/lancedb";

/**
 * holdfast cleanup against Lance's own cleanup on the same LanceDB-written table, side by
 * side in one run (docs/lance.md, "Benchmark"). The table is built once by LanceDB
 * (LANCE_BENCH_VERSIONS versions, each an overwrite of LANCE_BENCH_ROWS rows, so every old
 * version has files of its own and there is nothing to compact) and copied, so both
 * cleaners start from identical bytes. Both keep only the latest version.
 *
 * Targets (LANCE_BENCH_TARGET): `local` (default: a directory; holdfast through the local
 * backend, Lance through LanceDB) or `rgw` (the test Ceph RGW; both through a counting
 * HTTP proxy, so Lance's requests are counted too).
 */
const VERSIONS = Number(process.env.LANCE_BENCH_VERSIONS ?? 1000);
const ROWS = Number(process.env.LANCE_BENCH_ROWS ?? 10);
const TARGET = process.env.LANCE_BENCH_TARGET ?? "local";
const TABLE = "events";

interface Run {
  readonly label: string;
  readonly ms: number;
  readonly before: number;
  readonly after: number;
  readonly requests: number | null;
  readonly versionsAfter: number[];
}

/** Writes the table with LanceDB at `uri`: VERSIONS versions, each an overwrite. */
async function buildTable(uri: string, storageOptions: Record<string, string> = {}): Promise<void> {
  const db = await lancedb.connect(uri, { storageOptions });
  const rows = (v: number) =>
    Array.from({ length: ROWS }, (_, i) => ({ id: v * ROWS + i, v: `version-${v}-row-${i}` }));
  const table = await db.createTable(TABLE, rows(1));
  for (let v = 2; v <= VERSIONS; v += 1) await table.add(rows(v), { mode: "overwrite" });
  table.close();
}

/** holdfast: detect the format, clean with retainVersions 1 (no minimum age: no writer runs). */
async function holdfastCleanup(store: ObjectStore): Promise<{ ms: number; requests: number }> {
  const counting = new CountingStore(store);
  const started = performance.now();
  const ctx = createContext(counting);
  const format = await openLanceFormat(ctx);
  await cleanup(
    ctx,
    { retainVersions: 1, minVersionAgeMs: 0 },
    { format, referenceCensus: censusLanceReferences(ctx) },
  );
  return { ms: performance.now() - started, requests: counting.totalRequests() };
}

/** Lance: open the table and run LanceDB's cleanup of every version older than now. */
async function lanceCleanup(uri: string, storageOptions: Record<string, string>): Promise<number> {
  const started = performance.now();
  const db = await lancedb.connect(uri, { storageOptions });
  const table = await db.openTable(TABLE);
  await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: false });
  table.close();
  return performance.now() - started;
}

async function lanceVersions(
  uri: string,
  storageOptions: Record<string, string>,
): Promise<number[]> {
  const db = await lancedb.connect(uri, { storageOptions });
  const table = await db.openTable(TABLE);
  const versions = (await table.listVersions()).map((v) => v.version);
  table.close();
  return versions;
}

function countFiles(dir: string): number {
  let n = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) n += countFiles(join(dir, entry.name));
    else n += 1;
  }
  return n;
}

async function countObjects(store: ObjectStore): Promise<number> {
  let n = 0;
  for await (const _ of listAll(store, "")) n += 1;
  return n;
}

/** Objects under `_holdfast/` (the store probe's leftovers) among `total`. */
async function countHoldfastObjects(store: ObjectStore, total: number): Promise<number> {
  let n = 0;
  for await (const _ of listAll(store, "_holdfast/")) n += 1;
  return Math.min(n, total);
}

async function benchLocal(source: string): Promise<Run[]> {
  const runs: Run[] = [];
  for (const fsync of [true, false]) {
    const root = mkdtempSync(join(tmpdir(), "holdfast-lance-bench-h-"));
    const table = join(root, `${TABLE}.lance`);
    cpSync(join(source, `${TABLE}.lance`), table, { recursive: true, preserveTimestamps: true });
    const before = countFiles(table);
    const { ms, requests } = await holdfastCleanup(createLocalStore({ root: table, fsync }));
    runs.push({
      label: `holdfast (fsync ${fsync ? "on" : "off"})`,
      ms,
      before,
      // holdfast's own bookkeeping under _holdfast/ is not counted as Lance objects.
      after: countFiles(table) - countFiles(join(table, "_holdfast")),
      requests,
      versionsAfter: await lanceVersions(root, {}),
    });
    rmSync(root, { recursive: true, force: true });
  }
  const root = mkdtempSync(join(tmpdir(), "holdfast-lance-bench-l-"));
  const table = join(root, `${TABLE}.lance`);
  cpSync(join(source, `${TABLE}.lance`), table, { recursive: true, preserveTimestamps: true });
  const before = countFiles(table);
  const ms = await lanceCleanup(root, {});
  runs.push({
    label: "Lance optimize(cleanupOlderThan)",
    ms,
    before,
    after: countFiles(table),
    requests: null,
    versionsAfter: await lanceVersions(root, {}),
  });
  rmSync(root, { recursive: true, force: true });
  return runs;
}

async function benchRgw(): Promise<Run[]> {
  const env = rgwEnv();
  const proxy = await startFaultProxy({ target: env.endpoint });
  const runs: Run[] = [];
  const storageOptions = (endpoint: string) => ({
    aws_endpoint: endpoint,
    aws_access_key_id: env.accessKeyId,
    aws_secret_access_key: env.secretAccessKey,
    aws_region: env.region,
    allow_http: "true",
    aws_virtual_hosted_style_request: "false",
  });
  try {
    for (const who of ["holdfast", "lance"] as const) {
      // Built by LanceDB on RGW itself: a copy would get fresh Last-Modified stamps, and
      // Lance's cleanup only considers files older than the oldest version it keeps.
      const prefix = `lance-bench-${who}-${Date.now()}`;
      const uri = `s3://${env.bucket}/${prefix}`;
      await buildTable(uri, storageOptions(env.endpoint));
      const options: S3StoreOptions = {
        bucket: env.bucket,
        prefix: `${prefix}/${TABLE}.lance`,
        region: env.region,
        endpoint: proxy.url,
        forcePathStyle: true,
        credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
      };
      const store = await openS3Store(options);
      const before = await countObjects(store);
      const seen = proxy.requests.length;
      const ms =
        who === "holdfast"
          ? (await holdfastCleanup(store)).ms
          : await lanceCleanup(uri, storageOptions(proxy.url));
      const requests = proxy.requests.length - seen;
      let after = 0;
      for await (const meta of listAll(store, "")) {
        if (!meta.key.startsWith("_holdfast/")) after += 1;
      }
      runs.push({
        label: who === "holdfast" ? "holdfast" : "Lance optimize(cleanupOlderThan)",
        ms,
        before: before - (await countHoldfastObjects(store, before)),
        after,
        requests,
        versionsAfter: await lanceVersions(uri, storageOptions(env.endpoint)),
      });
    }
  } finally {
    await proxy.close();
  }
  return runs;
}

function rgwEnv() {
  const file = process.env.HOLDFAST_RGW_ENV_FILE ?? "/tmp/holdfast-services/rgw.env";
  const vars: Record<string, string> = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) vars[m[1]!] = m[2]!;
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

function print(runs: Run[]): void {
  const rows = [
    ["", "wall ms", "objects before", "deleted", "requests", "versions left"],
    ...runs.map((r) => [
      r.label,
      r.ms.toFixed(0),
      String(r.before),
      String(r.before - r.after),
      r.requests === null ? "n/a" : String(r.requests),
      r.versionsAfter.join(","),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows) {
    console.log(
      r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "),
    );
  }
  const lance = runs.find((r) => r.label.startsWith("Lance"))!;
  for (const r of runs.filter((x) => x !== lance)) {
    console.log(
      `time ratio ${r.label} / Lance: ${(r.ms / lance.ms).toFixed(2)}x (target <= 1.00x on local disk)`,
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `Lance cleanup benchmark (${TARGET}): LanceDB tables of ${VERSIONS} versions (each an overwrite of ${ROWS} rows); both cleaners keep the latest version only`,
  );
  if (TARGET === "rgw") {
    console.log(
      "(RGW: each table built by LanceDB on RGW; both cleaners through one counting proxy)\n",
    );
    print(await benchRgw());
    return;
  }
  const source = mkdtempSync(join(tmpdir(), "holdfast-lance-bench-src-"));
  try {
    await buildTable(source);
    console.log(`(local: one table built once, copied with its timestamps for each cleaner)\n`);
    print(await benchLocal(source));
  } finally {
    rmSync(source, { recursive: true, force: true });
  }
}

await main();
