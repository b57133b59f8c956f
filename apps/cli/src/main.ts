import { loadCommands } from "./commands/registry.js";
import type { CliIo } from "./output.js";
import { runCli } from "./program.js";
import { CLI_VERSION } from "./version.js";

/**
 * Runs `holdfast` with `argv` (arguments after the program name) and returns the exit
 * code; never exits the process, so it can run in-process under test.
 */
export async function main(
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
  return runCli(argv, full, await loadCommands(argv), {
    version: CLI_VERSION,
    ...(interrupt === undefined ? {} : { interrupt }),
  });
}
