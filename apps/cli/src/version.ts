import { readFileSync } from "node:fs";

/**
 * Written by the build (tooling/release/bin/stamp-version.mjs): the package.json version for
 * a release build, else the version changesets releases next as `<next>-dev+<commit>`.
 */
const STAMPED: string = "@@HOLDFAST_CLI_VERSION@@";

/**
 * The CLI's version: stamped into the built module; unbuilt sources (tests, tsx) read the
 * package.json version. Kept in a module with no other imports: `holdfast --version` loads
 * nothing else.
 */
export const CLI_VERSION: string = STAMPED.startsWith("@@")
  ? (() => {
      try {
        const raw = readFileSync(new URL("../package.json", import.meta.url), "utf8");
        return (JSON.parse(raw) as { version: string }).version;
      } catch {
        return "0.0.0";
      }
    })()
  : STAMPED;

/** `holdfast --version` / `holdfast -V` alone: answered before any command module loads. */
export function isVersionRequest(argv: readonly string[]): boolean {
  return argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V");
}
