// The million-scale run (tooling/bench/README.md, "Millions of versions"): builds a local
// dataset of --versions versions x --files data files (default 1,000,000 x 1), cleans it
// to the newest --retain (default 10) in a child process with heap and RSS sampled every
// --sample-ms (default 5,000), and prints the samples, the time, the time per object
// deleted and the requests against their floor. Checks only what does not depend on the
// machine: every retired object deleted, one GET per manifest, ceil(objects/1000) batches.
//   pnpm --filter @holdfast/bench bench:million [-- --versions=100000 --files=1 --rate=3500]
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createLocalStore } from "@holdfast/backends-local";
import { buildDataset } from "./datasets.js";

const arg = (name: string, fallback: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.slice(name.length + 3)) : fallback;
};
const versions = arg("versions", 1_000_000);
const files = arg("files", 1);
const retain = arg("retain", 10);
const sampleMs = arg("sample-ms", 5_000);
const rate = arg("rate", 0);
const BATCH = 1_000; // the local store's maxBatchDelete

const root = await mkdtemp(join(process.env.MILLION_DIR ?? tmpdir(), "holdfast-million-"));
const out = (line: string) => process.stdout.write(`${line}\n`);
try {
  out(
    `# million-scale cleanup: ${versions} versions x ${files} file(s), retain ${retain}, local disk ${root}`,
  );
  const built = performance.now();
  await buildDataset(createLocalStore({ root, fsync: false }), {
    versions,
    filesPerVersion: files,
    seed: 1,
  });
  out(`built in ${((performance.now() - built) / 1000).toFixed(1)} s (fsync off while building)`);
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "--conditions=@holdfast/source",
      fileURLToPath(new URL("./million-child.ts", import.meta.url)),
      root,
      String(retain),
      String(sampleMs),
      ...(rate > 0 ? [String(rate)] : []),
    ],
    { cwd: fileURLToPath(new URL("..", import.meta.url)), stdio: ["ignore", "pipe", "inherit"] },
  );
  let buffered = "";
  let result: Record<string, unknown> | undefined;
  out("  t s  phase      done / total         heap MiB  RSS MiB");
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop()!;
    for (const line of lines) {
      const row = JSON.parse(line) as Record<string, number | string | null | boolean>;
      if (row.sample) {
        const progress = `${row.done}${row.total === null ? "" : ` / ${row.total}`}`;
        out(
          `${Number(row.s).toFixed(1).padStart(6)}  ${String(row.phase).padEnd(9)}  ${progress.padEnd(19)}  ${Number(row.heapMiB).toFixed(1).padStart(8)}  ${Number(row.rssMiB).toFixed(0).padStart(7)}`,
        );
      } else result = row;
    }
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (code !== 0 || !result) throw new Error(`cleanup child exited ${code}`);
  const deleted = result.deleted as Record<string, number>;
  const requests = result.requests as Record<string, number>;
  const retired = versions - retain;
  const objects = deleted.total!;
  const ms = result.ms as number;
  out(
    `cleanup: ${(ms / 1000).toFixed(1)} s, ${objects} objects deleted (${deleted.manifests} manifests, ${deleted.dataFiles} data files), ${((ms * 1000) / objects).toFixed(1)} us per object`,
  );
  out(
    `heap after GC: max ${(result.heapMaxMiB as number).toFixed(1)} MiB; RSS max ${(result.rssMaxMiB as number).toFixed(0)} MiB (peak ${(result.peakRssMiB as number).toFixed(0)} MiB)`,
  );
  out(`requests: ${JSON.stringify(requests)}`);
  const floorBatches =
    Math.ceil(deleted.manifests! / BATCH) + Math.ceil(deleted.dataFiles! / BATCH);
  out(
    `floor: ${retired} retired manifests -> GET ${versions} (one per manifest, retained ones included), batch deletes ${floorBatches} (ceil per kind / ${BATCH})`,
  );
  const failures: string[] = [];
  if (deleted.manifests !== retired)
    failures.push(`manifests deleted ${deleted.manifests} != ${retired}`);
  if (deleted.dataFiles !== retired * files) {
    failures.push(`data files deleted ${deleted.dataFiles} != ${retired * files}`);
  }
  // One GET per manifest, plus the run's own few (records re-read at deletion, hint).
  if (requests.get! > versions + Math.ceil(retired / 10_000) + 10) {
    failures.push(`GET ${requests.get} above one per manifest`);
  }
  // Batches per record and kind: a partial batch at most per record and kind.
  const records = Math.ceil(retired / 10_000);
  if (requests.deleteMany! > floorBatches + 2 * records + 2) {
    failures.push(`deleteMany ${requests.deleteMany} above the floor ${floorBatches}`);
  }
  out(failures.length === 0 ? "ok: requests at the floor" : `FAILED: ${failures.join("; ")}`);
  if (failures.length > 0) process.exitCode = 1;
} finally {
  await rm(root, { recursive: true, force: true });
}
