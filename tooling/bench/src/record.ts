// The performance record (tooling/bench/README.md): one table per measurement, every
// backend side by side in the same run. `--quick` is the CI size (under a minute).
import { type CleanerPoint, cleanersSideBySide } from "./cleaners.js";
import { cliStart } from "./cli-start.js";
import { type LanceTarget, lanceVsLance } from "./lance-section.js";
import { commitCost, protectedVsUnprotected, scaling, singleOperations } from "./sections.js";
import { availableTargets } from "./targets.js";

const quick = process.argv.includes("--quick");
const runsArg = process.argv.find((a) => a.startsWith("--runs="));
const runs = runsArg ? Number(runsArg.slice("--runs=".length)) : quick ? 1 : 3;
const numberArg = (name: string, fallback: number) => {
  const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
  return arg ? Number(arg.slice(name.length + 3)) : fallback;
};
const config: {
  cleanupVersions: number;
  scalePoints: number[];
  branchLengths: number[];
  commits: number;
  reps: number;
  lance: { target: LanceTarget; versions: number }[];
  cleaners: CleanerPoint[];
} = quick
  ? {
      cleanupVersions: 100,
      scalePoints: [200, 1_000],
      branchLengths: [10, 500],
      commits: 3,
      reps: 3,
      lance: [
        { target: "local", versions: 200 },
        { target: "rgw", versions: 30 },
      ],
      cleaners: [
        { target: "local", versions: 200 },
        { target: "rgw", versions: 30 },
      ],
    }
  : {
      cleanupVersions: 1_000,
      scalePoints: [1_000, 10_000, 100_000],
      branchLengths: [10, 10_000],
      commits: 20,
      reps: 10,
      lance: [
        { target: "local", versions: 1_000 },
        { target: "local", versions: 10_000 },
        { target: "rgw", versions: 1_000 },
      ],
      // RGW 10,000 is opt-in (--cleaners=rgw:10000): LanceDB builds one table per cleaner
      // and run there, ~12 minutes each.
      cleaners: [
        { target: "local", versions: 200 },
        { target: "local", versions: 1_000 },
        { target: "local", versions: 10_000 },
        { target: "rgw", versions: 200 },
        { target: "rgw", versions: 1_000 },
      ],
    };

// --scale=1000,10000 overrides the scaling points (e.g. to repeat only the large ones).
const scaleArg = process.argv.find((a) => a.startsWith("--scale="));
if (scaleArg) config.scalePoints = scaleArg.slice("--scale=".length).split(",").map(Number);
// --lance=local:1000,rgw:1000 overrides the Lance comparison's tables.
const lanceArg = process.argv.find((a) => a.startsWith("--lance="));
if (lanceArg) {
  config.lance = lanceArg
    .slice("--lance=".length)
    .split(",")
    .map((point) => {
      const [target, versions] = point.split(":");
      if (target !== "local" && target !== "rgw") throw new Error(`--lance: ${point}`);
      return { target, versions: Number(versions) };
    });
}
// --cleaners=local:200,rgw:1000 overrides the cleaners' blocks.
const cleanersArg = process.argv.find((a) => a.startsWith("--cleaners="));
if (cleanersArg) {
  config.cleaners = cleanersArg
    .slice("--cleaners=".length)
    .split(",")
    .map((point) => {
      const [target, versions] = point.split(":");
      if (target !== "local" && target !== "rgw") throw new Error(`--cleaners: ${point}`);
      return { target, versions: Number(versions) };
    });
}
// --only=scaling,commits runs a subset of the sections (cleaners, lance, cleanup, scaling,
// commits, ops, cli); `lance` (holdfast and LanceDB in this process) runs only when named.
const onlyArg = process.argv.find((a) => a.startsWith("--only="));
const only = new Set(onlyArg ? onlyArg.slice("--only=".length).split(",") : []);
const wanted = (section: string) => (only.size === 0 ? section !== "lance" : only.has(section));

const started = Date.now();
const { targets, missing } = await availableTargets();
process.stdout.write(
  `# holdfast performance record (${quick ? "quick" : "full"}, ${runs} run(s)), ${new Date().toISOString()}\n` +
    `backends: ${targets.map((t) => t.name).join(", ")}${missing.length > 0 ? `; not measured: ${missing.join(", ")}` : ""}\n\n`,
);
if (wanted("cleaners")) {
  const hasRgw = targets.some((t) => t.name === "rgw");
  const { refused } = await cleanersSideBySide(
    config.cleaners.filter((p) => p.target === "local" || hasRgw),
    {
      // Full record: at least 5 runs; a block refused when the 1-minute load is above 1 before it
      runs: runsArg ? runs : quick ? 1 : 5,
      maxLoad: numberArg("max-load", quick ? Number.POSITIVE_INFINITY : 1),
      // ... and while it ran, other processes used at most a quarter of a core (quiet.ts).
      maxForeignCores: numberArg("max-foreign", quick ? Number.POSITIVE_INFINITY : 0.25),
      retries: numberArg("retries", 3),
      retryWaitS: numberArg("retry-wait", 60),
      warm: process.argv.includes("--warm"),
    },
  );
  // A refused block is no record: the run says so in its exit code, after every table.
  if (refused > 0) process.exitCode = 2;
}
if (wanted("lance")) {
  const hasRgw = targets.some((t) => t.name === "rgw");
  await lanceVsLance(
    config.lance.filter((p) => p.target === "local" || hasRgw),
    runs,
  );
}
if (wanted("cleanup")) await protectedVsUnprotected(targets, config.cleanupVersions, runs);
if (wanted("scaling")) await scaling(config.scalePoints, runs);
if (wanted("commits")) {
  await commitCost(
    targets.filter((t) => t.name !== "azurite" && t.name !== "gcs"),
    config.branchLengths,
    config.commits,
  );
}
if (wanted("ops")) await singleOperations(targets, config.reps);
if (wanted("cli")) await cliStart(config.reps);
process.stdout.write(`record took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
