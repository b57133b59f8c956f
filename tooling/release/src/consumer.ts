// Consumer projects outside the workspace: one npm install of the packed tarballs into a
// temp directory, then sibling projects that use them the ways users do (ESM, CommonJS
// require, TypeScript node16 / bundler / nodenext-CommonJS type checks, a copied backend
// template running the contract suite with vitest), each on every Node line `engines` names
// that the checks install (CONSUMER_NODE_LINES).
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tarball } from "./tarballs.js";
import { WORKSPACE_ROOT } from "./workspace.js";

const FIXTURES = join(WORKSPACE_ROOT, "tooling/release/fixtures/consumer");

/** Versions the consumer installs next to the tarballs (the ones the workspace uses). */
export const CONSUMER_TOOLS = { typescript: "5.9.3", "@types/node": "22.20.7", vitest: "4.1.12" };

/**
 * The Node lines the consumer projects run on: the oldest `engines` names and the active LTS
 * (pinned in tooling/scripts/node-install.sh, installed from the npm registry on first use).
 */
export const CONSUMER_NODE_LINES = ["22", "26"] as const;
export type NodeLine = (typeof CONSUMER_NODE_LINES)[number];

/** The folder holding the pinned Node of `line` (installed into .tooling/ on first use). */
export function nodeBinDir(line: NodeLine): string {
  return execFileSync("bash", [join(WORKSPACE_ROOT, "tooling/scripts/node-install.sh"), line], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
}

/** Output of one command run in a consumer project. */
export interface RunResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs a command, never throwing: the caller asserts on status and output. With `nodeBin`
 * (a folder from nodeBinDir), `node` is that Node and it comes first on PATH, so `#!/usr/bin/env
 * node` scripts (the holdfast bin, vitest) run on it too.
 */
export function run(command: string, args: string[], cwd: string, nodeBin?: string): RunResult {
  const path = nodeBin ? `${nodeBin}:${process.env.PATH ?? ""}` : process.env.PATH;
  const node = nodeBin ? join(nodeBin, "node") : undefined;
  try {
    const stdout = execFileSync(command === "node" && node ? node : command, args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        PATH: path,
        ...(node ? { NODE: node, npm_node_execpath: node } : {}),
        NODE_OPTIONS: "",
        NO_COLOR: "1",
        npm_config_update_notifier: "false",
      },
    });
    return { status: 0, stdout, stderr: "" };
  } catch (error) {
    const e = error as { status?: number; stdout?: string; stderr?: string };
    return { status: e.status ?? 1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/**
 * Writes the consumer root (dependencies on every tarball, with `overrides` so internal
 * ranges resolve to the tarballs and never to the registry) and runs `npm install`.
 */
export function installConsumerRoot(root: string, tarballs: Tarball[]): RunResult {
  const tarballOf = Object.fromEntries(tarballs.map((t) => [t.pkg.name, `file:${t.file}`]));
  const manifest = {
    name: "holdfast-consumer",
    private: true,
    dependencies: tarballOf,
    devDependencies: CONSUMER_TOOLS,
    overrides: tarballOf,
  };
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  return run(
    "npm",
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=warn"],
    root,
  );
}

/** Creates the sibling consumer projects under `root` (they resolve root/node_modules). */
export function writeConsumerProjects(root: string): void {
  project(root, "esm", { type: "module" });
  cpSync(join(FIXTURES, "esm/smoke.mjs"), join(root, "esm/smoke.mjs"));
  project(root, "cjs", { type: "commonjs" });
  cpSync(join(FIXTURES, "cjs/smoke.cjs"), join(root, "cjs/smoke.cjs"));
  const ts = {
    strict: true,
    noEmit: true,
    skipLibCheck: false,
    types: ["node"],
    target: "ES2023",
    lib: ["ES2024", "DOM"],
  };
  typescriptProject(root, "ts-node16", "module", {
    ...ts,
    module: "node16",
    moduleResolution: "node16",
  });
  // node16 checks every declaration file (ours and our dependencies'); the other two
  // modes differ only in how entry points resolve, so they skip that slow part.
  typescriptProject(root, "ts-bundler", "module", {
    ...ts,
    skipLibCheck: true,
    module: "preserve",
    moduleResolution: "bundler",
  });
  typescriptProject(root, "ts-nodenext-cjs", "commonjs", {
    ...ts,
    skipLibCheck: true,
    module: "nodenext",
    moduleResolution: "nodenext",
  });
  project(root, "backend-template", { type: "module" });
  for (const part of ["src", "test", "vitest.config.ts", "tsconfig.json"]) {
    cpSync(
      join(WORKSPACE_ROOT, "examples/backend-template", part),
      join(root, "backend-template", part),
      {
        recursive: true,
      },
    );
  }
}

function project(root: string, name: string, fields: Record<string, unknown>): void {
  mkdirSync(join(root, name), { recursive: true });
  const manifest = { name: `consumer-${name}`, private: true, ...fields };
  writeFileSync(join(root, name, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

function typescriptProject(
  root: string,
  name: string,
  type: "module" | "commonjs",
  compilerOptions: Record<string, unknown>,
): void {
  project(root, name, { type });
  cpSync(join(FIXTURES, "ts/index.ts"), join(root, name, "index.ts"));
  const tsconfig = { compilerOptions, files: ["index.ts"] };
  writeFileSync(join(root, name, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
}
