import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { ErrorShape, JsonShapes } from "../src/shapes.js";

/** The built CLI; the e2e suites run it as a child process, exactly as a user would. */
export const BIN = fileURLToPath(new URL("../dist/bin.js", import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  json(): Record<string, unknown>;
}

/** Fails (never skips) when the CLI was not built: the e2e suite must run in CI. */
export function requireBuiltCli(): void {
  if (!existsSync(BIN)) {
    throw new Error(
      `the CLI is not built (${BIN} missing): run \`pnpm --filter @holdfast/cli... run build\` (npm test builds it)`,
    );
  }
}

/** Runs `node dist/bin.js ...args` and resolves with its exit code and output. */
export function cli(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<CliRun> {
  requireBuiltCli();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...options.env },
        timeout: options.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") return reject(error);
        const code = error ? (error.code as number) : 0;
        resolve({
          code,
          stdout,
          stderr,
          json: () => {
            let doc: Record<string, unknown>;
            try {
              doc = JSON.parse(stdout) as Record<string, unknown>;
            } catch {
              throw new Error(`stdout is not one JSON document:\n${stdout}\nstderr:\n${stderr}`);
            }
            checkShape(doc);
            return doc;
          },
        });
      },
    );
  });
}

/** A test service's settings (the shared test support: its env file, then the environment). */
export { readServiceEnv } from "@holdfast/test-support";

/** Every `--json` answer must match its documented shape (src/shapes.ts, README). */
export function checkShape(doc: Record<string, unknown>, variant?: "lease acquire --hold"): void {
  if (doc.ok === false) {
    ErrorShape.parse(doc);
    return;
  }
  const name = variant ?? (doc.command as keyof typeof JsonShapes);
  const schema = JsonShapes[name];
  if (!schema) throw new Error(`no documented JSON shape for command ${String(doc.command)}`);
  const parsed = schema.safeParse(doc);
  if (!parsed.success) {
    throw new Error(
      `--json output of ${String(doc.command)} breaks its documented shape: ${parsed.error.message}`,
    );
  }
}
