import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import {
  CountingStore,
  encodeJson,
  MemoryStore,
  type ObjectStore,
  type RequestCounts,
  seededIds,
} from "@holdfast/conditional-store";
import { createContext, dataKey, type Manifest, manifestKey } from "@holdfast/dataset";
import { acquireLease, renewLease } from "@holdfast/leases";
import { baselineCleanup } from "./baseline.js";

const VERSIONS = Number(process.env.BENCH_VERSIONS ?? 1000);
const FILES_PER_VERSION = Number(process.env.BENCH_FILES ?? 10);
const LEASED = [
  Math.floor(VERSIONS / 10),
  Math.floor(VERSIONS / 2),
  Math.floor((VERSIONS * 9) / 10),
];
const RETAIN = 1;

/**
 * Writes the benchmark dataset straight to the store (manifests as `commitVersion` would
 * write them, without its per-commit listing): VERSIONS versions of FILES_PER_VERSION
 * data files each on `main`.
 */
async function buildDataset(store: ObjectStore, seed: number): Promise<void> {
  const ids = seededIds(seed);
  await store.put(
    "_holdfast/dataset.json",
    encodeJson({
      schema: 1,
      format: "holdfast",
      datasetId: ids.next(),
      writerId: ids.next(),
      defaultBranch: "main",
    }),
  );
  const pending: Promise<unknown>[] = [];
  for (let version = 1; version <= VERSIONS; version += 1) {
    const files = [];
    for (let f = 0; f < FILES_PER_VERSION; f += 1) {
      const key = dataKey(ids.next());
      files.push({ key, size: 64 });
      pending.push(store.put(key, new Uint8Array(64)));
    }
    const manifest: Manifest = {
      schema: 1,
      branch: "main",
      version,
      parent: version === 1 ? null : { branch: "main", version: version - 1 },
      files,
      txnId: ids.next(),
    };
    pending.push(store.put(manifestKey("main", version), encodeJson(manifest)));
    if (pending.length >= 256) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
}

interface Run {
  counts: RequestCounts;
  total: number;
  ms: number;
  deleted: number;
}

async function runHoldfast(
  store: ObjectStore,
): Promise<Run & { leaseAcquire: number; leaseRenew: number }> {
  const ctx = createContext(store);
  const counting = new CountingStore(store);
  const leaseCtx = createContext(counting);
  const leases = [];
  let leaseAcquire = 0;
  for (const version of LEASED) {
    counting.resetCounts();
    leases.push(await acquireLease(leaseCtx, { branch: "main", version, ttlMs: 10 * 60_000 }));
    leaseAcquire = Math.max(leaseAcquire, counting.totalRequests());
  }
  counting.resetCounts();
  await renewLease(leaseCtx, leases[0]!);
  const leaseRenew = counting.totalRequests();
  const started = performance.now();
  // The dataset was just written and no writer is in flight: no minimum version age needed.
  const stats = await cleanup(ctx, { retainVersions: RETAIN, minVersionAgeMs: 0 });
  const ms = performance.now() - started;
  const { total, ...counts } = stats.requests;
  return { counts, total, ms, deleted: stats.objectsDeleted.total, leaseAcquire, leaseRenew };
}

async function runBaseline(store: ObjectStore): Promise<Run> {
  const counting = new CountingStore(store);
  const started = performance.now();
  const deleted = await baselineCleanup(counting, RETAIN);
  const ms = performance.now() - started;
  return { counts: counting.requestCounts(), total: counting.totalRequests(), ms, deleted };
}

function table(rows: [string, string, string][]): string {
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  "),
    )
    .join("\n");
}

async function main(): Promise<void> {
  console.log(
    `holdfast cleanup benchmark: ${VERSIONS} versions x ${FILES_PER_VERSION} data files, ${LEASED.length} active leases (versions ${LEASED.join(", ")}), retainVersions ${RETAIN}\n`,
  );

  // --- request counts (memory store: requests are what matters, not speed) ---
  const memHoldfast = new MemoryStore();
  const memBaseline = new MemoryStore();
  await buildDataset(memHoldfast, 1);
  await buildDataset(memBaseline, 1);
  const h = await runHoldfast(memHoldfast);
  const b = await runBaseline(memBaseline);
  const types = Object.keys(h.counts) as (keyof RequestCounts)[];
  console.log("Requests by type (memory store)");
  console.log(
    table([
      ["type", "holdfast", "baseline"],
      ...types.map((t): [string, string, string] => [t, String(h.counts[t]), String(b.counts[t])]),
      ["total", String(h.total), String(b.total)],
      ["objects deleted", String(h.deleted), String(b.deleted)],
    ]),
  );
  console.log(`ratio holdfast/baseline: ${(h.total / b.total).toFixed(3)}x (target <= 1.25x)`);
  console.log(`lease acquire: ${h.leaseAcquire} requests at most (target <= 3)`);
  console.log(`lease renew: ${h.leaseRenew} requests (target <= 2)\n`);

  // --- wall time on the local backend ---
  const dirs = [
    await mkdtemp(join(tmpdir(), "holdfast-bench-h-")),
    await mkdtemp(join(tmpdir(), "holdfast-bench-b-")),
  ];
  try {
    const localHoldfast = createLocalStore({ root: dirs[0]!, fsync: false });
    const localBaseline = createLocalStore({ root: dirs[1]!, fsync: false });
    await buildDataset(localHoldfast, 2);
    await buildDataset(localBaseline, 2);
    const lh = await runHoldfast(localHoldfast);
    const lb = await runBaseline(localBaseline);
    console.log("Wall time (local backend, fsync off)");
    console.log(
      table([
        ["", "holdfast", "baseline"],
        ["requests", String(lh.total), String(lb.total)],
        ["objects deleted", String(lh.deleted), String(lb.deleted)],
        ["wall time ms", lh.ms.toFixed(0), lb.ms.toFixed(0)],
      ]),
    );
    console.log(`time ratio holdfast/baseline: ${(lh.ms / lb.ms).toFixed(2)}x (printed only)`);
  } finally {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  }
}

await main();
