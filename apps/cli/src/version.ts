import { readFileSync } from "node:fs";

/**
 * The CLI's version, read from its package.json (same path from src/ and dist/). Kept in a
 * module with no other imports: `holdfast --version` loads nothing else.
 */
export const CLI_VERSION: string = (() => {
  try {
    const raw = readFileSync(new URL("../package.json", import.meta.url), "utf8");
    return (JSON.parse(raw) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
})();

/** `holdfast --version` / `holdfast -V` alone: answered before any command module loads. */
export function isVersionRequest(argv: readonly string[]): boolean {
  return argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V");
}
