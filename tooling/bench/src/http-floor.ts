// The CPU floor of Node's own HTTP client against the test RGW (tooling/bench/README.md,
// "Floors"): `--requests=` plain GETs (unsigned, so RGW answers each with a short 403 XML
// body) through one keep-alive `node:http` agent, `--concurrency=` at a time, in a fresh
// process per run (cold, as the cleaners' children run). No signing, no SDK, no protocol:
// whatever a Node client of S3 does per request costs at least this. Each run starts once
// the 1-minute load is below `--max-load=` (default 1), which is printed beside it; then the
// min / median of `--runs=` runs (default 5).
//
//   set -a; . /tmp/holdfast-services/rgw.env; set +a
//   pnpm --filter @holdfast/bench bench:http-floor -- --requests=259,1060 --runs=5
import { execFileSync } from "node:child_process";
import http from "node:http";
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { arg, out, rgwFromEnv } from "./s3-ab.js";
import { fmtMinMedian } from "./table.js";

interface FloorRun {
  readonly ms: number;
  readonly cpuMs: number;
  readonly statuses: Record<string, number>;
}

async function child(endpoint: string, bucket: string, requests: number, concurrency: number) {
  const url = new URL(endpoint);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses: Record<string, number> = {};
  const get = (path: string) =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(
        { host: url.hostname, port: url.port, path, agent, method: "GET" },
        (response) => {
          const code = String(response.statusCode);
          statuses[code] = (statuses[code] ?? 0) + 1;
          response.on("data", () => undefined);
          response.on("end", resolve);
          response.on("error", reject);
        },
      );
      request.on("error", reject);
      request.end();
    });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) await get(`/${bucket}/http-floor/${next++}`);
    }),
  );
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  agent.destroy();
  const run: FloorRun = { ms, cpuMs: (used.user + used.system) / 1000, statuses };
  out(JSON.stringify(run));
}

async function main() {
  const env = rgwFromEnv();
  const concurrency = Number(arg("concurrency", "16"));
  if (process.argv.includes("--child")) {
    return child(env.endpoint, env.bucket, Number(arg("requests", "259")), concurrency);
  }
  const runs = Number(arg("runs", "5"));
  const maxLoad = Number(arg("max-load", "1"));
  const self = fileURLToPath(import.meta.url);
  for (const requests of arg("requests", "259,1060").split(",").map(Number)) {
    const results: FloorRun[] = [];
    for (let i = 0; i < runs; i += 1) {
      // A run starts below a 1-minute load of 1 (the runs before it lift it): wait, up to 5 min.
      for (let waited = 0; loadavg()[0]! >= maxLoad && waited < 300; waited += 5) {
        await new Promise((resolve) => setTimeout(resolve, 5000));
      }
      const load = loadavg()[0]!;
      const line = execFileSync(
        process.execPath,
        [
          "--import",
          "tsx",
          self,
          "--child",
          `--requests=${requests}`,
          `--concurrency=${concurrency}`,
        ],
        { encoding: "utf8", env: process.env },
      );
      const run = JSON.parse(line.trim().split("\n").at(-1)!) as FloorRun;
      results.push(run);
      out(
        `  run ${i + 1}: load ${load.toFixed(2)} before, ${run.ms.toFixed(0)} ms, CPU ${run.cpuMs.toFixed(0)} ms, answers ${JSON.stringify(run.statuses)}`,
      );
    }
    out(
      `${requests} GETs, ${concurrency} at a time: wall ms min/med ${fmtMinMedian(results.map((r) => r.ms))}, CPU ms min/med ${fmtMinMedian(results.map((r) => r.cpuMs))}`,
    );
  }
}

await main();
