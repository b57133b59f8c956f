// A/B of the S3 backend's listings and batch deletes on RGW (tooling/bench/README.md, "S3
// listings and batch deletes, A/B"): CPU and wall time of listing 5,000 keys in pages of
// 1,000 and deleting them in 5 batches of 1,000 (`store.list`, `store.deleteMany`, one after
// another as a cleanup sends them), in fresh child processes (the same `node --import tsx`
// for both sides): `before` is the backends-s3 source of a git ref (default `main`, extracted
// to a temporary folder), `after` is this work tree's. Each child first writes its own 5,000
// keys (untimed; puts take the SDK path on both sides, so the client is warm when timing
// starts). Rounds alternate the order of the sides; the 1-minute load is printed beside every
// run. A comparison, not a record.
//   node --import tsx --conditions=@holdfast/source src/s3-list-ab.ts --rounds=3 --before=main
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { arg, out, rgwFromEnv, type StoreModule, storeOptions } from "./s3-ab.js";

const KEYS = 5_000;
const PAGE = 1_000;
const PUT_CONCURRENCY = 32;

const env = rgwFromEnv();

const keyOf = (i: number) => `data/${String(i).padStart(8, "0")}-fragment.lance`;

interface Timing {
  wallMs: number;
  cpuMs: number;
}

async function timed(work: () => Promise<void>): Promise<Timing> {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return { wallMs: performance.now() - wall, cpuMs: (used.user + used.system) / 1000 };
}

if (process.argv[2] === "child") {
  // child <module url> <prefix>: write KEYS keys, then time listing and deleting them; one JSON line.
  const [, , , moduleUrl, prefix] = process.argv;
  const { createS3Store } = (await import(moduleUrl!)) as StoreModule;
  const store = createS3Store(storeOptions(env, prefix!));
  const body = new Uint8Array(64).fill(7);
  let written = 0;
  await Promise.all(
    Array.from({ length: PUT_CONCURRENCY }, async () => {
      while (written < KEYS) await store.put(keyOf(written++), body);
    }),
  );
  let keys: string[] = [];
  const list = await timed(async () => {
    let pageToken: string | undefined;
    do {
      const page = await store.list("", {
        pageSize: PAGE,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      for (const o of page.objects) keys.push(o.key);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
  });
  if (keys.length !== KEYS) throw new Error(`listed ${keys.length} keys`);
  let deleted = 0;
  const remove = await timed(async () => {
    for (let i = 0; i < keys.length; i += PAGE) {
      const result = await store.deleteMany(keys.slice(i, i + PAGE));
      if (result.failed.length > 0) throw new Error(`${result.failed.length} deletes failed`);
      deleted += result.deleted.length;
    }
  });
  if (deleted !== KEYS) throw new Error(`deleted ${deleted} keys`);
  keys = [];
  if ((await store.list("")).objects.length !== 0) throw new Error("keys left");
  out(JSON.stringify({ list, remove }));
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
const prefix = `s3-list-ab-${Date.now()}`;
out(
  `# S3 listings and batch deletes A/B on RGW: list ${KEYS} keys in pages of ${PAGE}, then deleteMany in batches of ${PAGE}, ` +
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
  out(
    "round | side   | load (1 5 15 min) | list CPU ms | list wall ms | delete CPU ms | delete wall ms",
  );
  const results: Record<"before" | "after", { list: number[]; remove: number[] }> = {
    before: { list: [], remove: [] },
    after: { list: [], remove: [] },
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
          `${prefix}-${r}-${side}`,
        ],
        { cwd: here, encoding: "utf8" },
      );
      if (child.status !== 0) throw new Error(`${side} child failed:\n${child.stderr}`);
      const line = child.stdout.trim().split("\n").at(-1)!;
      const { list, remove } = JSON.parse(line) as Record<"list" | "remove", Timing>;
      results[side].list.push(list.cpuMs);
      results[side].remove.push(remove.cpuMs);
      const f = (n: number) => n.toFixed(0).padStart(5);
      out(
        `${String(r).padStart(5)} | ${side.padEnd(6)} | ${loadBefore.padEnd(17)} | ${f(list.cpuMs)}       | ${f(list.wallMs)}        | ${f(remove.cpuMs)}         | ${f(remove.wallMs)}`,
      );
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const phase of ["list", "remove"] as const) {
    const b = median(results.before[phase]);
    const a = median(results.after[phase]);
    out(
      `median ${phase} CPU: before ${b.toFixed(0)} ms, after ${a.toFixed(0)} ms (${(b / a).toFixed(1)}x less)`,
    );
  }
  out(`uptime: ${uptime()}`);
} finally {
  // A child that failed may leave its keys: remove every prefix this run used.
  for (let r = 1; r <= rounds; r++) {
    for (const side of ["before", "after"] as const) {
      const store = createS3Store(storeOptions(env, `${prefix}-${r}-${side}`));
      for (;;) {
        const keys = (await store.list("")).objects.map((o) => o.key);
        if (keys.length === 0) break;
        await store.deleteMany(keys);
      }
    }
  }
  rmSync(beforeDir, { recursive: true, force: true });
}
