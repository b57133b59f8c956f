import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { step } from "./sections.js";
import { fmtMinMedian, minMedian, printTable, ratio } from "./table.js";

/** The built CLI (`pnpm turbo run build`); the record measures what a user runs. */
const CLI_BIN = fileURLToPath(new URL("../../../apps/cli/dist/bin.js", import.meta.url));

function timeOnce(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    execFile(process.execPath, [...args], (error) => {
      if (error) reject(error);
      else resolve(performance.now() - started);
    });
  });
}

/**
 * Start-up of the `holdfast` CLI against an empty `node -e 0`, interleaved so load on the
 * machine hits every line alike: `--version` (answered before any command module loads)
 * and `status --help` (loads the status command only).
 */
export async function cliStart(reps: number): Promise<void> {
  if (!existsSync(CLI_BIN)) {
    process.stdout.write(`## CLI start\n  not measured: ${CLI_BIN} is not built\n\n`);
    return;
  }
  const lines = [
    { name: "node -e 0", args: ["-e", "0"] },
    { name: "holdfast --version", args: [CLI_BIN, "--version"] },
    { name: "holdfast status --help", args: [CLI_BIN, "status", "--help"] },
  ];
  step("cli start");
  const times = lines.map(() => [] as number[]);
  for (let rep = 0; rep < reps; rep += 1) {
    for (const [i, line] of lines.entries()) times[i]!.push(await timeOnce(line.args));
  }
  const base = minMedian(times[0]!).median;
  printTable({
    title: "CLI start (wall time of one process)",
    columns: ["command", "ms min/med", "median vs node -e 0"],
    rows: lines.map((line, i) => [
      line.name,
      fmtMinMedian(times[i]!),
      ratio(minMedian(times[i]!).median, base),
    ]),
    notes: [
      `${reps} runs each, interleaved; the target is holdfast --version within 2x of node -e 0.`,
    ],
  });
}
