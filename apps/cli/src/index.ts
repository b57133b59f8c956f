import type { Command } from "commander";
import { registerCleanup } from "./commands/cleanup.js";
import { registerDataset } from "./commands/dataset.js";
import { registerDemo } from "./commands/demo.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerLease } from "./commands/lease.js";
import { registerBranch, registerTag } from "./commands/refs.js";
import { registerServe } from "./commands/serve.js";
import { registerStatus } from "./commands/status.js";
import type { CliIo } from "./output.js";
import { type Registrar, runCli } from "./program.js";
import { CLI_VERSION } from "./version.js";

export { parseVersionArg, parseVersionRef } from "./args.js";
export { formatBytes, formatDuration, parseDuration } from "./duration.js";
export { ExitCode, exitCodeFor } from "./exit-codes.js";
export { type CliIo, errorShape, shouldColor } from "./output.js";
export { ErrorShape, JsonShapes, LeaseShape } from "./shapes.js";
export { formatStorageUrl, parseStorageUrl, parseStoreOptions, type StorageUrl } from "./url.js";
export { CLI_VERSION, isVersionRequest } from "./version.js";

/** Attaches every holdfast command to the program. */
export function registerAll(r: Registrar, program: Command): void {
  registerDemo(r, program);
  registerDataset(r, program);
  registerLease(r, program);
  registerTag(r, program);
  registerBranch(r, program);
  registerCleanup(r, program);
  registerStatus(r, program);
  registerDoctor(r, program);
  registerServe(r, program);
}

/**
 * Runs `holdfast` with `argv` (arguments after the program name) and returns the exit
 * code; never exits the process, so it can run in-process under test.
 */
export function main(
  argv: readonly string[],
  io: Partial<CliIo> = {},
  interrupt?: AbortSignal,
): Promise<number> {
  const full: CliIo = {
    stdout: io.stdout ?? process.stdout,
    stderr: io.stderr ?? process.stderr,
    env: io.env ?? process.env,
    cwd: io.cwd ?? process.cwd(),
  };
  return runCli(argv, full, registerAll, {
    version: CLI_VERSION,
    ...(interrupt === undefined ? {} : { interrupt }),
  });
}
