// A/B of the S3 backend's reads on RGW (tooling/bench/README.md, "S3 reads, A/B"): CPU and
// wall time of 1,000 `store.get` calls on 443-byte objects, concurrency 8, in fresh child
// processes (the same `node --import tsx` for both sides): `before` is the backends-s3 source
// of a git ref (default `main`, extracted to a temporary folder), `after` is this work tree's.
// Each child times a cold round (its first 1,000 gets) and a warm one (the next 1,000).
// Rounds alternate the order of the sides; the 1-minute load is printed beside every run.
// A comparison, not a record.
//   node --import tsx --conditions=@holdfast/source src/s3-reads-ab.ts --rounds=3 --before=main
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { arg, out, rgwFromEnv, type StoreModule, storeOptions } from "./s3-ab.js";

const GETS = 1_000;
const CONCURRENCY = 8;
const OBJECT_BYTES = 443;

const env = rgwFromEnv();

const keyOf = (i: number) => `_versions/${String(i).padStart(20, "0")}.manifest`;

if (process.argv[2] === "child") {
  // child <module url> <prefix>: two rounds of GETS gets, one JSON line.
  const [, , , moduleUrl, prefix] = process.argv;
  const { createS3Store } = (await import(moduleUrl!)) as StoreModule;
  const store = createS3Store(storeOptions(env, prefix!));
  const round = async () => {
    const cpu = process.cpuUsage();
    const wall = performance.now();
    let next = 0;
    let bytes = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < GETS) {
          const got = await store.get(keyOf(next++));
          if (got === null || got.size !== OBJECT_BYTES) throw new Error("missing object");
          bytes += got.size;
        }
      }),
    );
    const used = process.cpuUsage(cpu);
    if (bytes !== GETS * OBJECT_BYTES) throw new Error(`read ${bytes} bytes`);
    return {
      wallMs: performance.now() - wall,
      cpuMs: (used.user + used.system) / 1000,
      userMs: used.user / 1000,
    };
  };
  const cold = await round();
  const warm = await round();
  out(JSON.stringify({ cold, warm }));
  process.exit(0);
}

const rounds = Number(arg("rounds", "3"));
const beforeRef = arg("before", "main");
const here = fileURLToPath(new URL(".", import.meta.url));
const repo = execFileSync("git", ["rev-parse", "--show-toplevel"], { cwd: here }).toString().trim();
const s3Package = join(repo, "packages/backends-s3");

// The before side: the package's source at the ref, resolving its dependencies from this
// tree's package folder (the same SDK version on both sides).
const beforeDir = mkdtempSync(join(tmpdir(), "holdfast-s3-before-"));
const archive = execFileSync("git", ["archive", beforeRef, "packages/backends-s3/src"], {
  cwd: repo,
  maxBuffer: 64 * 1024 * 1024,
});
execFileSync("tar", ["-x", "-C", beforeDir, "--strip-components=2"], { input: archive });
symlinkSync(join(s3Package, "node_modules"), join(beforeDir, "node_modules"));
const commit = (ref: string) =>
  execFileSync("git", ["rev-parse", "--short", ref], { cwd: repo }).toString().trim();
const sides = {
  before: pathToFileURL(join(beforeDir, "src/index.ts")).href,
  after: pathToFileURL(join(s3Package, "src/index.ts")).href,
};

const { createS3Store } = (await import(sides.after)) as StoreModule;
const prefix = `s3-reads-ab-${Date.now()}`;
const store = createS3Store(storeOptions(env, prefix));
const body = new Uint8Array(OBJECT_BYTES).map((_, i) => (i * 31) % 251);
out(
  `# S3 reads A/B on RGW: ${GETS} gets of ${OBJECT_BYTES}-byte objects, concurrency ${CONCURRENCY}, ` +
    `${rounds} rounds; before = ${beforeRef} (${commit(beforeRef)}), after = work tree (HEAD ${commit("HEAD")}); ` +
    `${cpus().length} cores`,
);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const uptime = () => execFileSync("uptime").toString().trim();
out(`uptime: ${uptime()}`);
try {
  let written = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (written < GETS) await store.put(keyOf(written++), body);
    }),
  );
  out(
    "round | side   | load (1 5 15 min) | cold CPU ms | cold user ms | cold wall ms | warm CPU ms | warm user ms | warm wall ms",
  );
  const results: Record<"before" | "after", { cold: number[]; warm: number[] }> = {
    before: { cold: [], warm: [] },
    after: { cold: [], warm: [] },
  };
  for (let r = 1; r <= rounds; r++) {
    const order = r % 2 === 1 ? (["before", "after"] as const) : (["after", "before"] as const);
    for (const side of order) {
      const loadBefore = load();
      const child = spawnSync(
        process.execPath,
        [
          "--import",
          "tsx",
          "--conditions=@holdfast/source",
          fileURLToPath(import.meta.url),
          "child",
          sides[side],
          prefix,
        ],
        { cwd: here, encoding: "utf8" },
      );
      if (child.status !== 0) throw new Error(`${side} child failed:\n${child.stderr}`);
      const line = child.stdout.trim().split("\n").at(-1)!;
      const { cold, warm } = JSON.parse(line) as Record<
        "cold" | "warm",
        { wallMs: number; cpuMs: number; userMs: number }
      >;
      results[side].cold.push(cold.cpuMs);
      results[side].warm.push(warm.cpuMs);
      const f = (n: number) => n.toFixed(0).padStart(5);
      out(
        `${String(r).padStart(5)} | ${side.padEnd(6)} | ${loadBefore.padEnd(17)} | ${f(cold.cpuMs)}       | ${f(cold.userMs)}        | ${f(cold.wallMs)}        | ${f(warm.cpuMs)}       | ${f(warm.userMs)}        | ${f(warm.wallMs)}`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const phase of ["cold", "warm"] as const) {
    const b = median(results.before[phase]);
    const a = median(results.after[phase]);
    out(
      `median ${phase} CPU: before ${b.toFixed(0)} ms, after ${a.toFixed(0)} ms (${(b / a).toFixed(1)}x less)`,
    );
  }
  out(`uptime: ${uptime()}`);
} finally {
  for (;;) {
    const keys = (await store.list("")).objects.map((o) => o.key);
    if (keys.length === 0) break;
    await store.deleteMany(keys);
  }
  rmSync(beforeDir, { recursive: true, force: true });
}
