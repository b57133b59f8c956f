// The million-scale run (tooling/bench/README.md, "Millions of versions"): builds a local
// dataset of --versions versions x --files data files (default 1,000,000 x 1), cleans it
// to the newest --retain (default 10) in a child process with heap and RSS sampled every
// --sample-ms (default 5,000), and prints the samples, the time, the time per object
// deleted and the requests against their floor. Checks only what does not depend on the
// machine: every retired object deleted, one GET per manifest, ceil(objects/1000) batches.
//   pnpm --filter @holdfast/bench bench:million [-- --versions=100000 --files=1 --rate=3500]
// --dir=PATH builds into PATH (kept when the cleanup fails) or, when PATH holds a finished
// build of the same shape, cleans that; --build-only builds and stops (a long build can
// run ahead of the cleanup it is for). --format=lance cleans a copy of the cached
// LanceDB-written table of --versions versions instead (src/lance-section.ts: 10 rows
// overwritten per version, so a manifest, a data file and a transaction file each; built
// once into the cache when missing), through the Lance format.
import { execFileSync, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createLocalStore } from "@holdfast/backends-local";
import { versionsPrefix } from "@holdfast/dataset";
import { DEFAULT_BRANCH } from "@holdfast/protocol";
import { buildDataset } from "./datasets.js";
import { cachedLanceTable, LANCE_TABLE } from "./lance-section.js";

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
const dirArg = process.argv.find((x) => x.startsWith("--dir="))?.slice("--dir=".length);
const buildOnly = process.argv.includes("--build-only");
// --kill-at=F: SIGKILL the cleanup once a sample shows F of the delete phase done, then
// resume it in a new process and check the resumed run's requests against the work left.
const killAt = arg("kill-at", 0);
if (buildOnly && dirArg === undefined) throw new Error("--build-only needs --dir=PATH");
const lance = process.argv.includes("--format=lance");
if (lance && (killAt > 0 || dirArg !== undefined || files !== 1)) {
  throw new Error("--format=lance takes neither --kill-at, --dir nor --files");
}

const root =
  dirArg ?? (await mkdtemp(join(process.env.MILLION_DIR ?? tmpdir(), "holdfast-million-")));
const out = (line: string) => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
/** A finished build's shape, written last, so a build killed midway is never cleaned. */
const marker = join(root, ".million-built.json");
const shape = JSON.stringify({ versions, files, seed: 1 });
let removeRoot = dirArg === undefined;
try {
  out(
    lance
      ? `# large Lance cleanup: ${versions} versions of a LanceDB-written table, retain ${retain}, local disk ${root}`
      : `# million-scale cleanup: ${versions} versions x ${files} file(s), retain ${retain}, local disk ${root}`,
  );
  const existing = lance ? shape : await readFile(marker, "utf8").catch(() => undefined);
  if (lance) {
    out(`load average before the build or copy (1/5/15 min): ${load()}`);
    const copied = performance.now();
    const { source, buildMs } = await cachedLanceTable(versions);
    if (buildMs !== null) out(`built the cached table in ${(buildMs / 1000).toFixed(1)} s`);
    execFileSync("cp", ["-a", join(source, `${LANCE_TABLE}.lance`), root]);
    execFileSync("sync", ["-f", root]); // written out, as a table cleaned long after its writes
    out(`copied ${source} in ${((performance.now() - copied) / 1000).toFixed(1)} s`);
  } else if (existing === shape) out(`built before (${marker})`);
  else {
    if (existing !== undefined) throw new Error(`${root} holds another build: ${existing}`);
    await mkdir(root, { recursive: true });
    out(`load average before the build (1/5/15 min): ${load()}`);
    const built = performance.now();
    const step = Math.max(1, Math.floor(versions / 20));
    await buildDataset(createLocalStore({ root, fsync: false }), {
      versions,
      filesPerVersion: files,
      seed: 1,
      onVersion: (v) => {
        if (v % step === 0) {
          out(
            `  built ${v} / ${versions} in ${((performance.now() - built) / 1000).toFixed(0)} s, load ${load()}`,
          );
        }
      },
    });
    await writeFile(marker, shape);
    out(`built in ${((performance.now() - built) / 1000).toFixed(1)} s (fsync off while building)`);
  }
  if (buildOnly) process.exit(0);
  const loadBefore = load();
  out(`load average before the cleanup (1/5/15 min): ${loadBefore}`);
  if (!lance) await rm(marker); // the cleanup changes the dataset: no second run of this build
  /** Runs the cleanup child; with `kill`, SIGKILLs it once a sample passes that share of the deletions. */
  const runChild = async (kill: number) => {
    const child = spawn(
      process.execPath,
      [
        "--expose-gc",
        "--import",
        "tsx",
        "--conditions=@holdfast/source",
        fileURLToPath(new URL("./million-child.ts", import.meta.url)),
        lance ? `lance:${join(root, `${LANCE_TABLE}.lance`)}` : root,
        String(retain),
        String(sampleMs),
        ...(rate > 0 ? [String(rate)] : []),
      ],
      { cwd: fileURLToPath(new URL("..", import.meta.url)), stdio: ["ignore", "pipe", "inherit"] },
    );
    let buffered = "";
    let result: Record<string, unknown> | undefined;
    let killed = false;
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
          const share = Number(row.done) / Number(row.total);
          if (kill > 0 && !killed && row.phase === "delete" && share >= kill) {
            killed = true;
            child.kill("SIGKILL");
            out(`SIGKILL at ${row.done} / ${row.total} deletions, load ${load()}`);
          }
        } else result = row;
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    if (killed) return undefined;
    if (code !== 0 || !result) throw new Error(`cleanup child exited ${code}`);
    return result;
  };
  let result = await runChild(killAt);
  let left: { manifests: number; dataFiles: number } | undefined;
  if (result === undefined) {
    const count = async (dir: string) => (await readdir(join(root, dir))).length;
    left = {
      manifests: (await count(versionsPrefix(DEFAULT_BRANCH))) - retain,
      dataFiles: (await count("data")) - retain * files,
    };
    out(
      `left by the kill: ${left.manifests} retired manifests, ${left.dataFiles} data files; resuming (waits for the lock to go stale), load ${load()}`,
    );
    result = await runChild(0);
    if (result === undefined) throw new Error("the resumed cleanup was killed");
  }
  const deleted = result.deleted as Record<string, number>;
  const requests = result.requests as Record<string, number>;
  const retired = versions - retain;
  // A Lance version's data file and transaction file are both data files to the cleanup.
  const filesPer = lance ? 2 : files;
  const objects = deleted.total!;
  const ms = result.ms as number;
  out(
    `cleanup: ${(ms / 1000).toFixed(1)} s, ${objects} objects deleted (${deleted.manifests} manifests, ${deleted.dataFiles} data files), ${((ms * 1000) / objects).toFixed(1)} us per object`,
  );
  out(
    `heap after GC: max ${(result.heapMaxMiB as number).toFixed(1)} MiB; RSS max ${(result.rssMaxMiB as number).toFixed(0)} MiB (peak ${(result.peakRssMiB as number).toFixed(0)} MiB)`,
  );
  const cpu = result.cpu as { userMs: number; systemMs: number };
  out(
    `CPU of the cleanup process: ${((cpu.userMs + cpu.systemMs) / 1000).toFixed(1)} s (user ${(cpu.userMs / 1000).toFixed(1)}, system ${(cpu.systemMs / 1000).toFixed(1)}); wall ${(ms / 1000).toFixed(1)} s`,
  );
  out(`load average (1/5/15 min): before the cleanup ${loadBefore}, after it ${load()}`);
  out(`requests: ${JSON.stringify(requests)}`);
  // Each listing reads a folder once per window of 100,000 names (docs/protocol.md §1).
  out(`folder reads by listings: ${JSON.stringify(result.folderReads)}`);
  const floorBatches =
    Math.ceil(deleted.manifests! / BATCH) + Math.ceil(deleted.dataFiles! / BATCH);
  out(
    `floor: ${retired} retired manifests -> GET ${versions} (one per manifest, retained ones included), batch deletes ${floorBatches} (ceil per kind / ${BATCH})`,
  );
  const failures: string[] = [];
  if (left === undefined) {
    if (deleted.manifests !== retired)
      failures.push(`manifests deleted ${deleted.manifests} != ${retired}`);
    if (deleted.dataFiles !== retired * filesPer) {
      failures.push(`data files deleted ${deleted.dataFiles} != ${retired * filesPer}`);
    }
  } else {
    // Killed and resumed: what is left on disk is the newest versions and their files.
    const manifestsNow = (await readdir(join(root, versionsPrefix(DEFAULT_BRANCH)))).length;
    const dataNow = (await readdir(join(root, "data"))).length;
    if (manifestsNow !== retain || dataNow !== retain * files) {
      failures.push(`left after the resume: ${manifestsNow} manifests, ${dataNow} data files`);
    }
    if (deleted.manifests !== left.manifests) {
      failures.push(
        `resumed run deleted ${deleted.manifests} manifests, ${left.manifests} were left`,
      );
    }
  }
  // One GET per manifest, plus the run's own few per record: its re-read at deletion and,
  // for Lance, the version hint each reference census and branch listing reads.
  const perRecord = lance ? 3 : 1;
  if (requests.get! > versions + perRecord * Math.ceil(retired / 10_000) + 10) {
    failures.push(`GET ${requests.get} above one per manifest`);
  }
  // Batches per record and kind: a partial batch at most per record and kind.
  const records = Math.ceil(retired / 10_000);
  if (requests.deleteMany! > floorBatches + 2 * records + 2) {
    failures.push(`deleteMany ${requests.deleteMany} above the floor ${floorBatches}`);
  }
  if (left !== undefined) {
    // The resumed run: one GET per manifest left (and the kept ones), none of what was
    // gone; batch deletes at the floor of what was left, plus a partial batch per record.
    const leftFloor = Math.ceil(left.manifests / BATCH) + Math.ceil(left.dataFiles / BATCH);
    out(
      `resumed: GET ${requests.get} for ${left.manifests + retain} manifests left, deleteMany ${requests.deleteMany} (floor of what was left ${leftFloor})`,
    );
    if (requests.get! > left.manifests + retain + Math.ceil(retired / 10_000) + 10) {
      failures.push(`resumed GET ${requests.get} above the manifests left`);
    }
    if (requests.deleteMany! > leftFloor + 2 * records + 2) {
      failures.push(`resumed deleteMany ${requests.deleteMany} above the floor of what was left`);
    }
  }
  out(failures.length === 0 ? "ok: requests at the floor" : `FAILED: ${failures.join("; ")}`);
  if (failures.length > 0) process.exitCode = 1;
  removeRoot = true;
} finally {
  if (removeRoot) await rm(root, { recursive: true, force: true });
}
