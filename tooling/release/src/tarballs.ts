// Packs every public package the way `pnpm publish` does (prepack builds, publishConfig
// applied, workspace ranges replaced, .pnpmfile.cjs strips dev-only fields) and lints
// each tarball with publint and are-the-types-wrong.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkPackage, createPackageFromTarballData } from "@arethetypeswrong/core";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { type PublicPackage, publicPackages, WORKSPACE_ROOT } from "./workspace.js";

/** A packed public package. */
export interface Tarball {
  pkg: PublicPackage;
  /** Absolute path of the .tgz. */
  file: string;
}

/** `pnpm pack` of every public package into `dest` (prepack builds each one). */
export function packAll(dest: string, packages = publicPackages()): Tarball[] {
  return packages.map((pkg) => {
    execFileSync("pnpm", ["pack", "--pack-destination", dest], {
      cwd: join(WORKSPACE_ROOT, pkg.dir),
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" },
    });
    const file = join(
      dest,
      `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.manifest.version}.tgz`,
    );
    if (!existsSync(file)) throw new Error(`${pkg.name}: pnpm pack did not write ${file}`);
    return { pkg, file };
  });
}

/**
 * Problems are-the-types-wrong reports that do not apply: holdfast is ESM-only on Node
 * 22.12+, where `require()` loads ESM (checked for real by the CommonJS consumer), and
 * node10 resolution (no `exports` support) is older than any supported toolchain.
 */
function attwApplies(problem: { kind: string; resolutionKind?: string }): boolean {
  if (problem.resolutionKind === "node10") return false;
  return problem.kind !== "CJSResolvesToESM";
}

/** publint (strict: warnings count) and are-the-types-wrong findings for one tarball. */
export async function lintTarball(file: string): Promise<string[]> {
  const bytes = readFileSync(file);
  const findings: string[] = [];
  const tarball = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const { messages, pkg } = await publint({ pack: { tarball }, level: "suggestion", strict: true });
  for (const message of messages) {
    findings.push(`publint ${message.type}: ${formatMessage(message, pkg) ?? message.code}`);
  }
  const result = await checkPackage(createPackageFromTarballData(new Uint8Array(bytes)));
  if (result.types === false) findings.push("attw: the package ships no types");
  else {
    for (const problem of result.problems.filter(attwApplies)) {
      findings.push(`attw ${problem.kind}: ${JSON.stringify(problem)}`);
    }
  }
  return findings;
}
