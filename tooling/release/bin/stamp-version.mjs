#!/usr/bin/env node
// Build step of @holdfast/cli: writes the CLI's version into its built version module, so
// `holdfast --version` answers without reading package.json at run time (and a bundled CLI
// carries it too). The version is the one changesets gives the package:
// - no pending changeset names it: its package.json version, exactly (a release build, after
//   `changeset version`, prints what npm has);
// - otherwise the version `changeset version` would release next, as a pre-release of it built
//   from this commit, e.g. `0.1.0-dev+4b26909`: a build from a checkout is never mistaken for
//   the release it precedes, and names the commit it came from.
// Usage (in the package folder): node stamp-version.mjs <built file with the marker>
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import getReleasePlan from "@changesets/get-release-plan";

const MARKER = '"@@HOLDFAST_CLI_VERSION@@"';
const file = process.argv[2];
if (!file) {
  console.error("usage: stamp-version.mjs <built file>");
  process.exit(2);
}
// The workspace the package is in (the folder with pnpm-workspace.yaml above the cwd).
let root = process.cwd();
while (!existsSync(join(root, "pnpm-workspace.yaml"))) {
  if (dirname(root) === root) {
    console.error("stamp-version.mjs: run it inside the workspace (no pnpm-workspace.yaml above)");
    process.exit(2);
  }
  root = dirname(root);
}
const manifest = JSON.parse(readFileSync("package.json", "utf8"));

const plan = await getReleasePlan(root);
const next = plan.releases.find((r) => r.name === manifest.name && r.type !== "none");
let version = manifest.version;
if (next) {
  let commit = "";
  try {
    commit = execFileSync("git", ["rev-parse", "--short=7", "HEAD"], {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    // Not a git checkout: the pre-release alone.
  }
  version = `${next.newVersion}-dev${commit ? `+${commit}` : ""}`;
}

const source = readFileSync(file, "utf8");
if (source.split(MARKER).length !== 2) {
  console.error(`${file}: expected the version marker ${MARKER} exactly once`);
  process.exit(1);
}
writeFileSync(file, source.replace(MARKER, JSON.stringify(version)));
