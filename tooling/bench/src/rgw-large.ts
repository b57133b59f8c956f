// A large cleanup on RGW (tooling/bench/README.md, "A large run on RGW"): builds a holdfast
// dataset of --versions versions x 1 data file under a fresh prefix of the test bucket,
// cleans it to the newest 10 through the S3 backend in this process (`--expose-gc`), with the
// live heap after a full GC and the RSS sampled every 5 s, then prints the time, the requests
// against their floor (one GET per manifest, ceil(objects/1000) batch deletes per kind) and
// removes the prefix. Checks what does not depend on the machine: every retired object
// deleted, requests at the floor.
//   node --expose-gc --import tsx --conditions=@holdfast/source src/rgw-large.ts --versions=100000
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { openS3Store } from "@holdfast/backends-s3";
import { type CleanupProgress, cleanup } from "@holdfast/cleanup";
import { CountingStore, listAll } from "@holdfast/conditional-store";
import { versionsPrefix } from "@holdfast/dataset";
import { createContext, DEFAULT_BRANCH } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { buildDataset } from "./datasets.js";
import { rgwEnv } from "./lance-section.js";

const arg = (name: string, fallback: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const versions = arg("versions", 100_000);
const retain = 10;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const env = rgwEnv();
if (!env.endpoint) throw new Error("no RGW: start it with bash tooling/services/rgw-start.sh");
const out = (line: string) => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const MiB = 1024 * 1024;
const prefix = `rgw-large-${versions}-${Date.now()}`;
const store = await openS3Store({
  bucket: env.bucket,
  prefix,
  region: env.region,
  endpoint: env.endpoint,
  forcePathStyle: true,
  credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
});
out(
  `# large cleanup on RGW: ${versions} versions x 1 file, retain ${retain}, s3://${env.bucket}/${prefix}`,
);
try {
  const built = performance.now();
  const step = Math.max(1, Math.floor(versions / 10));
  await buildDataset(store, {
    versions,
    filesPerVersion: 1,
    seed: 1,
    concurrency: 64,
    onVersion: (v) => {
      if (v % step === 0) {
        out(
          `  built ${v} / ${versions} in ${((performance.now() - built) / 1000).toFixed(0)} s, load ${load()}`,
        );
      }
    },
  });
  out(
    `built in ${((performance.now() - built) / 1000).toFixed(1)} s; load before the cleanup ${load()}`,
  );
  const counting = new CountingStore(store);
  let last: CleanupProgress = { phase: "recover", done: 0 };
  let heapMax = 0;
  let rssMax = 0;
  const started = performance.now();
  const sample = () => {
    gc();
    const { heapUsed, rss } = process.memoryUsage();
    heapMax = Math.max(heapMax, heapUsed);
    rssMax = Math.max(rssMax, rss);
    const progress = `${last.done}${last.total === undefined ? "" : ` / ${last.total}`}`;
    out(
      `${((performance.now() - started) / 1000).toFixed(1).padStart(6)}  ${last.phase.padEnd(9)}  ${progress.padEnd(19)}  ${(heapUsed / MiB).toFixed(1).padStart(8)}  ${(rss / MiB).toFixed(0).padStart(7)}`,
    );
  };
  out("  t s  phase      done / total         heap MiB  RSS MiB");
  const timer = setInterval(sample, 5_000);
  const cpu = process.cpuUsage();
  const stats = await cleanup(
    createContext(counting),
    { retainVersions: retain, minVersionAgeMs: 0 },
    { format: holdfastFormat, onProgress: (p) => (last = p) },
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  clearInterval(timer);
  sample();
  const retired = versions - retain;
  const { manifests, dataFiles } = stats.objectsDeleted;
  out(
    `cleanup: ${(ms / 1000).toFixed(1)} s, ${manifests + dataFiles} objects deleted (${manifests} manifests, ${dataFiles} data files), ${((ms * 1000) / (manifests + dataFiles)).toFixed(1)} us per object`,
  );
  out(
    `heap after GC: max ${(heapMax / MiB).toFixed(1)} MiB; RSS max ${(rssMax / MiB).toFixed(0)} MiB`,
  );
  out(`CPU: ${((used.user + used.system) / 1000).toFixed(0)} ms; load after ${load()}`);
  out(`requests: ${JSON.stringify(stats.requests)}`);
  let left = 0;
  for await (const _ of listAll(store, versionsPrefix(DEFAULT_BRANCH))) left += 1;
  // The floor: one GET per manifest (plus the run's own few: each record re-read at its
  // deletion, the hint) and ceil(retired / 1000) batch deletes per kind (plus at most one
  // partial batch per record and kind), as million.ts checks it.
  const records = Math.ceil(retired / 10_000);
  const batchFloor = 2 * Math.ceil(retired / 1000);
  const ok =
    manifests === retired &&
    dataFiles === retired &&
    left === retain &&
    stats.requests.get <= versions + records + 10 &&
    stats.requests.deleteMany <= batchFloor + 2 * records + 2;
  out(
    `floor: GET ${versions} (one per manifest), batch deletes ${batchFloor}; manifests left ${left}: ${ok ? "ok: requests at the floor" : "FAILED"}`,
  );
  if (!ok) process.exitCode = 1;
} finally {
  const removing = performance.now();
  let batch: string[] = [];
  for await (const meta of listAll(store, "")) {
    batch.push(meta.key);
    if (batch.length === 1000) {
      await store.deleteMany(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.deleteMany(batch);
  out(`prefix removed in ${((performance.now() - removing) / 1000).toFixed(1)} s`);
}
