// `bench:lance`: the record's Lance section alone (tooling/bench/README.md).
// LANCE_BENCH_TARGET=local|rgw (default local), LANCE_BENCH_VERSIONS (default 1000),
// LANCE_BENCH_RUNS (default 1).
import { type LanceTarget, lanceVsLance } from "./lance-section.js";

const target = (process.env.LANCE_BENCH_TARGET ?? "local") as LanceTarget;
if (target !== "local" && target !== "rgw")
  throw new Error(`LANCE_BENCH_TARGET ${target}: local or rgw`);
await lanceVsLance(
  [{ target, versions: Number(process.env.LANCE_BENCH_VERSIONS ?? 1000) }],
  Number(process.env.LANCE_BENCH_RUNS ?? 1),
);
