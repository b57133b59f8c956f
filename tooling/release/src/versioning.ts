// A recorded `changeset version` dry run in a scratch clone: the first release, then a
// patch and a minor changeset for conditional-store, reporting which packages each bumps.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publicPackages, readManifest, WORKSPACE_ROOT } from "./workspace.js";

/** One `changeset version` step: every package whose version changed, old → new. */
export interface VersionStep {
  step: string;
  bumped: Record<string, string>;
  /** Packages that got a CHANGELOG.md in this step. */
  changelogs: string[];
}

/** What the dry run found, step by step. */
export interface VersionDryRun {
  steps: VersionStep[];
  /** The first CHANGELOG.md entry written for conditional-store. */
  firstChangelog: string;
  /** Internal dependency ranges of cleanup after the patch (e.g. `workspace:^`). */
  cleanupRanges: Record<string, string>;
  /** What the CLI's build stamps as `holdfast --version` before and after the first release. */
  cliVersion: { unreleased: string; released: string; commit: string };
}

const CHANGESET_BIN = join(WORKSPACE_ROOT, "node_modules/.bin/changeset");
const STAMP_BIN = join(WORKSPACE_ROOT, "tooling/release/bin/stamp-version.mjs");

/** Clones the committed workspace (HEAD) into a temp dir and runs the three steps there. */
export function versionDryRun(): VersionDryRun {
  const scratch = mkdtempSync(join(tmpdir(), "holdfast-version-"));
  try {
    git(WORKSPACE_ROOT, "clone", "--quiet", "--no-hardlinks", WORKSPACE_ROOT, scratch);
    git(scratch, "config", "user.email", "release-check@holdfast.invalid");
    git(scratch, "config", "user.name", "release check");
    const commit = gitOut(scratch, "rev-parse", "--short=7", "HEAD");
    const unreleased = stampedVersion(join(scratch, "apps/cli"));
    const steps = [versionStep(scratch, "first release (pending changesets)")];
    const released = stampedVersion(join(scratch, "apps/cli"));
    const firstChangelog = readFileSync(
      join(scratch, "packages/conditional-store/CHANGELOG.md"),
      "utf8",
    );
    commitAll(scratch, "first release");
    addChangeset(scratch, "demo-patch", "patch", "A fix in the resolver.");
    steps.push(versionStep(scratch, "patch of @holdfast/conditional-store"));
    const cleanupRanges = internalRanges(join(scratch, "packages/cleanup"));
    commitAll(scratch, "patch release");
    addChangeset(scratch, "demo-minor", "minor", "A new resolver option.");
    steps.push(versionStep(scratch, "minor of @holdfast/conditional-store"));
    return { steps, firstChangelog, cleanupRanges, cliVersion: { unreleased, released, commit } };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function versionStep(scratch: string, step: string): VersionStep {
  const dirs = workspaceDirs(scratch);
  const before = new Map(dirs.map((dir) => [dir, readManifest(join(scratch, dir)).version]));
  const hadChangelog = new Set(
    dirs.filter((dir) => existsSync(join(scratch, dir, "CHANGELOG.md"))),
  );
  execFileSync(CHANGESET_BIN, ["version"], { cwd: scratch, stdio: "pipe" });
  const bumped: Record<string, string> = {};
  for (const dir of dirs) {
    const manifest = readManifest(join(scratch, dir));
    if (manifest.version !== before.get(dir)) {
      bumped[manifest.name] = `${before.get(dir)} -> ${manifest.version}`;
    }
  }
  const changelogs = dirs
    .filter((dir) => !hadChangelog.has(dir) && existsSync(join(scratch, dir, "CHANGELOG.md")))
    .map((dir) => readManifest(join(scratch, dir)).name);
  return { step, bumped, changelogs };
}

/** Every workspace package folder, public and private. */
function workspaceDirs(root: string): string[] {
  const publicDirs = publicPackages(root).map((p) => p.dir);
  const privateDirs = ["tooling", "examples"].flatMap((group) =>
    existsSync(join(root, group))
      ? execFileSync("ls", [join(root, group)], { encoding: "utf8" })
          .split("\n")
          .filter((name) => name !== "" && existsSync(join(root, group, name, "package.json")))
          .map((name) => `${group}/${name}`)
      : [],
  );
  return [...publicDirs, ...privateDirs];
}

function internalRanges(dir: string): Record<string, string> {
  const deps = readManifest(dir).dependencies ?? {};
  return Object.fromEntries(Object.entries(deps).filter(([name]) => name.startsWith("@holdfast/")));
}

function addChangeset(root: string, name: string, bump: "patch" | "minor", summary: string): void {
  writeFileSync(
    join(root, ".changeset", `${name}.md`),
    `---\n"@holdfast/conditional-store": ${bump}\n---\n\n${summary}\n`,
  );
}

function commitAll(root: string, message: string): void {
  git(root, "add", "-A");
  git(root, "commit", "--quiet", "-m", message);
}

/** Runs the CLI build's version stamp (bin/stamp-version.mjs) in `packageDir` on a scratch file. */
function stampedVersion(packageDir: string): string {
  const file = join(packageDir, "stamp-probe.js");
  writeFileSync(file, 'export const v = "@@HOLDFAST_CLI_VERSION@@";\n');
  try {
    execFileSync(process.execPath, [STAMP_BIN, file], { cwd: packageDir, stdio: "pipe" });
    const stamped = /"([^"]*)"/.exec(readFileSync(file, "utf8"))?.[1];
    if (stamped === undefined) throw new Error("stamp-version.mjs wrote no version");
    return stamped;
  } finally {
    rmSync(file, { force: true });
  }
}

function gitOut(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" }).trim();
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "pipe" });
}
