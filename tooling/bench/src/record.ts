// The performance record (tooling/bench/README.md): one table per measurement, every
// backend side by side in the same run. `--quick` is the CI size (under a minute).
import { cliStart } from "./cli-start.js";
import { type LanceTarget, lanceVsLance } from "./lance-section.js";
import { commitCost, protectedVsUnprotected, scaling, singleOperations } from "./sections.js";
import { availableTargets } from "./targets.js";

const quick = process.argv.includes("--quick");
const runsArg = process.argv.find((a) => a.startsWith("--runs="));
const runs = runsArg ? Number(runsArg.slice("--runs=".length)) : quick ? 1 : 3;
const config: {
  cleanupVersions: number;
  scalePoints: number[];
  branchLengths: number[];
  commits: number;
  reps: number;
  lance: { target: LanceTarget; versions: number }[];
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
// --only=scaling,commits runs a subset of the sections (lance, cleanup, scaling, commits, ops, cli).
const onlyArg = process.argv.find((a) => a.startsWith("--only="));
const only = new Set(onlyArg ? onlyArg.slice("--only=".length).split(",") : []);
const wanted = (section: string) => only.size === 0 || only.has(section);

const started = Date.now();
const { targets, missing } = await availableTargets();
process.stdout.write(
  `# holdfast performance record (${quick ? "quick" : "full"}, ${runs} run(s)), ${new Date().toISOString()}\n` +
    `backends: ${targets.map((t) => t.name).join(", ")}${missing.length > 0 ? `; not measured: ${missing.join(", ")}` : ""}\n\n`,
);
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
