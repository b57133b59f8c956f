import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import { CountingStore, type ObjectStore, type RequestCounts } from "@holdfast/conditional-store";
import { commitVersion, readManifest, writeDataFile } from "@holdfast/dataset";
import { acquireLease, releaseLease, renewLease } from "@holdfast/leases";
import { createContext, type ProtocolContext, storageNow } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { baselineCleanup } from "./baseline.js";
import { buildDataset } from "./datasets.js";
import { S3_PRICES, s3Cost } from "./prices.js";
import { fmtMinMedian, minMedian, printTable, ratio } from "./table.js";
import type { Target } from "./targets.js";

const RETAIN = 10;

/** One cleanup measured: requests by type and wall time. */
interface CleanupRun {
  readonly counts: RequestCounts;
  readonly total: number;
  readonly ms: number;
}

const recordStarted = performance.now();

/** Where the record is, with the seconds since it started, on stderr (the tables go to stdout). */
export function step(text: string): void {
  const seconds = ((performance.now() - recordStarted) / 1000).toFixed(1);
  process.stderr.write(`[record +${seconds}s] ${text}\n`);
}

const sum = (c: RequestCounts) => Object.values(c).reduce((a, b) => a + b, 0);

/** Three leases on old versions: what a protected cleanup must keep and an unprotected one ignores. */
function leasedVersions(versions: number): number[] {
  return [Math.floor(versions / 10), Math.floor(versions / 2), Math.floor((versions * 9) / 10)];
}

async function protectedRun(store: ObjectStore, versions: number): Promise<CleanupRun> {
  const ctx = createContext(store);
  for (const version of leasedVersions(versions)) {
    await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version,
      ttlMs: 10 * 60_000,
    });
  }
  const started = performance.now();
  // Just written, no writer in flight: no minimum version age needed.
  const stats = await cleanup(
    ctx,
    { retainVersions: RETAIN, minVersionAgeMs: 0 },
    { format: holdfastFormat },
  );
  const ms = performance.now() - started;
  const { total, ...counts } = stats.requests;
  return { counts, total, ms };
}

async function unprotectedRun(store: ObjectStore): Promise<CleanupRun> {
  const counting = new CountingStore(store);
  const started = performance.now();
  await baselineCleanup(counting, RETAIN);
  const ms = performance.now() - started;
  return { counts: counting.requestCounts(), total: counting.totalRequests(), ms };
}

/**
 * Protected (holdfast: leases, references, retirement records) vs unprotected (list, read,
 * batch-delete) cleanup of the same dataset on every backend, with an S3 price estimate
 * from the RGW request counts.
 */
export async function protectedVsUnprotected(
  targets: readonly Target[],
  versions: number,
  runs: number,
): Promise<void> {
  const rows: (string | number)[][] = [];
  const priceRows: (string | number)[][] = [];
  for (const target of targets) {
    const p: CleanupRun[] = [];
    const u: CleanupRun[] = [];
    for (let run = 0; run < runs; run += 1) {
      for (const [list, measure] of [
        [p, (s: ObjectStore) => protectedRun(s, versions)],
        [u, unprotectedRun],
      ] as const) {
        step(`cleanup ${target.name} run ${run + 1}`);
        const { store, dispose } = await target.open();
        try {
          await buildDataset(store, { versions, filesPerVersion: 1, seed: run + 1 });
          list.push(await measure(store));
        } finally {
          await dispose();
        }
      }
    }
    const pReq = p[0]!.total;
    const uReq = u[0]!.total;
    const pTime = minMedian(p.map((r) => r.ms));
    const uTime = minMedian(u.map((r) => r.ms));
    rows.push([
      target.name,
      pReq,
      uReq,
      ratio(pReq, uReq),
      fmtMinMedian(p.map((r) => r.ms)),
      fmtMinMedian(u.map((r) => r.ms)),
      ratio(pTime.median, uTime.median),
    ]);
    if (target.name === "rgw") {
      for (const [name, r] of [
        ["protected", p[0]!],
        ["unprotected", u[0]!],
      ] as const) {
        const dollars = s3Cost(r.counts);
        priceRows.push([
          name,
          r.counts.get + r.counts.head,
          r.counts.put + r.counts.list + r.counts.deleteMany,
          r.counts.delete,
          `$${dollars.toFixed(6)}`,
          `$${((dollars / versions) * 1_000_000).toFixed(2)}`,
        ]);
      }
    }
  }
  printTable({
    title: `Cleanup, protected vs unprotected: ${versions} versions x 1 file, 3 leased, retain ${RETAIN}`,
    columns: [
      "backend",
      "protected req",
      "unprotected req",
      "req ratio",
      "protected ms min/med",
      "unprotected ms min/med",
      "time ratio (med)",
    ],
    rows,
    notes: [
      `${runs} run(s) each; requests are the same every run. Unprotected = list, read every manifest, batch-delete (tooling/bench/src/baseline.ts).`,
    ],
  });
  if (priceRows.length > 0) {
    printTable({
      title: "S3 price estimate per cleanup (request counts measured on RGW)",
      columns: ["cleanup", "GET+HEAD", "PUT+LIST+POST", "DELETE", "per cleanup", "per 1M versions"],
      rows: priceRows,
      notes: [S3_PRICES.name],
    });
  }
}

/** Runs one scaling point in a fresh `node --expose-gc` process (scale-child.ts). */
function runScaleChild(
  root: string,
): Promise<{ ms: number; heapMiB: number; rssMiB: number; deleted: number }> {
  const child = fileURLToPath(new URL("./scale-child.ts", import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        "--conditions=@holdfast/source",
        child,
        root,
        String(RETAIN),
      ],
      { maxBuffer: 16 * 1024 * 1024, cwd: fileURLToPath(new URL("..", import.meta.url)) },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`scale child failed: ${stderr || error.message}`));
        const line = stdout.trim().split("\n").at(-1) ?? "";
        resolve(JSON.parse(line));
      },
    );
  });
}

/** Scaling on local disk: time per version, live heap after GC, peak RSS, each in its own process. */
export async function scaling(points: readonly number[], runs: number): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const versions of points) {
    const samples: { ms: number; heapMiB: number; rssMiB: number }[] = [];
    for (let run = 0; run < runs; run += 1) {
      step(`scaling ${versions} run ${run + 1}`);
      const root = await mkdtemp(join(tmpdir(), "holdfast-scale-"));
      try {
        await buildDataset(createLocalStore({ root, fsync: false }), {
          versions,
          filesPerVersion: 1,
          seed: run + 1,
        });
        samples.push(await runScaleChild(root));
      } finally {
        await rm(root, { recursive: true, force: true });
      }
    }
    rows.push([
      versions,
      fmtMinMedian(samples.map((s) => s.ms)),
      fmtMinMedian(
        samples.map((s) => (s.ms * 1000) / versions),
        1,
      ),
      fmtMinMedian(
        samples.map((s) => s.heapMiB),
        1,
      ),
      fmtMinMedian(
        samples.map((s) => s.rssMiB),
        0,
      ),
    ]);
  }
  const first = rows[0];
  printTable({
    title: `Scaling, local disk: N versions x 1 file cleaned to the newest ${RETAIN}`,
    columns: ["versions", "ms min/med", "us per version", "heap after GC MiB", "peak RSS MiB"],
    rows,
    notes: [
      `${runs} run(s) each, every run in a fresh node --expose-gc process; heap = largest live heap after a full GC sampled during the run (stats kept alive).`,
      first ? "Flat memory means the heap column does not grow with the versions column." : "",
    ].filter((n) => n !== ""),
  });
}

/** Requests and time of one commit (a new data file + its manifest) at a given branch length. */
export async function commitCost(
  targets: readonly Target[],
  lengths: readonly number[],
  commits: number,
): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const target of targets) {
    for (const length of lengths) {
      step(`commit cost ${target.name} length ${length}`);
      const { store, dispose } = await target.open();
      try {
        await buildDataset(store, { versions: length, filesPerVersion: 0, seed: 7 });
        const counting = new CountingStore(store);
        const ctx = createContext(counting);
        // The first commit on a branch written without hints searches from version 1.
        await commitVersion(ctx, { branch: "main", files: [] });
        const firstRequests = counting.totalRequests();
        const times: number[] = [];
        counting.resetCounts();
        for (let i = 0; i < commits; i += 1) {
          const started = performance.now();
          await commitVersion(ctx, { branch: "main", files: [] });
          times.push(performance.now() - started);
        }
        rows.push([
          target.name,
          length,
          firstRequests,
          (counting.totalRequests() / commits).toFixed(2),
          fmtMinMedian(times, 1),
        ]);
      } finally {
        await dispose();
      }
    }
  }
  printTable({
    title: "Commit cost by branch length (manifest commit; finding the next version included)",
    columns: [
      "backend",
      "branch length",
      "first commit req (no hint)",
      "req per commit",
      "ms min/med",
    ],
    rows,
    notes: [
      `${commits} commits after the first; flat means the same requests and time at every length.`,
    ],
  });
}

/** Latency and requests of single operations. */
export async function singleOperations(targets: readonly Target[], reps: number): Promise<void> {
  const rows: (string | number)[][] = [];
  for (const target of targets) {
    step(`single operations ${target.name}`);
    const { store, dispose } = await target.open();
    try {
      const counting = new CountingStore(store);
      const ctx: ProtocolContext = createContext(counting);
      await buildDataset(store, { versions: 20, filesPerVersion: 1, seed: 3 });
      await commitVersion(ctx, { branch: "main", files: [] });
      const ops: [string, () => Promise<unknown>][] = [];
      let lease: Awaited<ReturnType<typeof acquireLease>> | undefined;
      ops.push(["writeDataFile (64 B)", () => writeDataFile(ctx, new Uint8Array(64))]);
      ops.push(["commitVersion", () => commitVersion(ctx, { branch: "main", files: [] })]);
      ops.push(["readManifest", () => readManifest(ctx, "main", 5)]);
      ops.push(["storageNow (probe)", () => storageNow(ctx)]);
      const measure = async (name: string, op: () => Promise<unknown>) => {
        const times: number[] = [];
        let requests: RequestCounts = {
          get: 0,
          head: 0,
          put: 0,
          delete: 0,
          deleteMany: 0,
          list: 0,
        };
        for (let i = 0; i < reps; i += 1) {
          counting.resetCounts();
          const started = performance.now();
          await op();
          times.push(performance.now() - started);
          requests = counting.requestCounts();
        }
        rows.push([target.name, name, sum(requests), fmtMinMedian(times, 1)]);
      };
      for (const [name, op] of ops) await measure(name, op);
      // Lease lifecycle: acquire, renew, release measured as pairs on fresh leases.
      const acquire = () =>
        acquireLease(ctx, {
          format: holdfastFormat,
          branch: "main",
          version: 12,
          ttlMs: 60_000,
        }).then((l) => {
          lease = l;
        });
      const times = { acquire: [] as number[], renew: [] as number[], release: [] as number[] };
      const reqs = { acquire: 0, renew: 0, release: 0 };
      for (let i = 0; i < reps; i += 1) {
        for (const [name, op] of [
          ["acquire", acquire],
          ["renew", () => renewLease(ctx, lease!)],
          ["release", () => releaseLease(ctx, lease!)],
        ] as const) {
          counting.resetCounts();
          const started = performance.now();
          await op();
          times[name].push(performance.now() - started);
          reqs[name] = counting.totalRequests();
        }
      }
      for (const name of ["acquire", "renew", "release"] as const) {
        rows.push([target.name, `lease ${name}`, reqs[name], fmtMinMedian(times[name], 1)]);
      }
    } finally {
      await dispose();
    }
  }
  printTable({
    title: "Single operations (no cleanup in flight)",
    columns: ["backend", "operation", "requests", "ms min/med"],
    rows,
    notes: [`${reps} repetitions each.`],
  });
}
