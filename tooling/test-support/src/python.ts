import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The pylance fixture script: writes, verifies and cleans Lance tables as applications do. */
export const PYLANCE_TABLES = fileURLToPath(
  new URL("../../python/pylance_tables.py", import.meta.url),
);

/**
 * The interpreter of the repository's Python environment (pylance, lancedb). Missing is a
 * failure, never a skip: `npm test` sets it; by hand, `bash tooling/scripts/python-env.sh`
 * then `export HOLDFAST_PYTHON=$PWD/.venv/bin/python`.
 */
export function holdfastPython(): string {
  const python = process.env.HOLDFAST_PYTHON;
  if (!python) {
    throw new Error(
      "HOLDFAST_PYTHON is not set: these tests need pylance. Run `npm test`, or `bash tooling/scripts/python-env.sh` and export HOLDFAST_PYTHON=$PWD/.venv/bin/python",
    );
  }
  if (!existsSync(python)) throw new Error(`HOLDFAST_PYTHON=${python} does not exist`);
  return python;
}

/**
 * Runs the pylance fixture script (`PYLANCE_TABLES`) with `args` and the object-store
 * `storageOptions` pylance takes, and parses the one JSON document it prints; its stderr is
 * attached to a failure.
 */
export function runPylanceTables<T>(
  args: readonly string[],
  storageOptions: Record<string, string>,
): Promise<T> {
  const python = holdfastPython();
  return new Promise((resolve, reject) => {
    execFile(
      python,
      [PYLANCE_TABLES, ...args, "--storage-options", JSON.stringify(storageOptions)],
      { maxBuffer: 64 * 1024 * 1024, timeout: 300_000, env: { ...process.env, RUST_LOG: "error" } },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(`pylance_tables.py ${args.join(" ")} failed: ${error.message}\n${stderr}`),
          );
          return;
        }
        try {
          resolve(JSON.parse(stdout) as T);
        } catch (cause) {
          reject(new Error(`pylance_tables.py printed no JSON: ${stdout}\n${stderr}`, { cause }));
        }
      },
    );
  });
}
