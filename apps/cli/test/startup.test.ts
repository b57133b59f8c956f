import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMAND_MODULES, loadCommands } from "../src/commands/registry.js";
import { CLI_VERSION, main } from "../src/index.js";
import type { Registrar } from "../src/program.js";
import { BIN, cli, requireBuiltCli } from "./e2e-harness.js";

// Start-up cost: `--version` loads no command module, and a backend's SDK loads only when a URL
// names that backend. Checked on the built CLI with a module loader hook that reports every module
// URL Node loads.
const HOOKS = `export async function load(url, context, next) {
  process.stderr.write("LOADED " + url + "\\n");
  return next(url, context);
}`;
const REGISTER = `import { register } from "node:module";
register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOKS)}`)});`;

/** Runs the built CLI with the loader hook; resolves with stdout and the loaded module URLs. */
function loadedModules(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; modules: string[] }> {
  requireBuiltCli();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(REGISTER)}`, BIN, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") return reject(error);
        const modules = stderr
          .split("\n")
          .filter((line) => line.startsWith("LOADED "))
          .map((line) => line.slice("LOADED ".length));
        resolve({ code: error ? (error.code as number) : 0, stdout, modules });
      },
    );
  });
}

/** Runs the built CLI with `node --require <preload>` first; resolves with code and output. */
function cliWithPreload(
  preload: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  requireBuiltCli();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--require", preload, BIN, ...args],
      { env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== "number") return reject(error);
        resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** Every file under `dir` (recursively), relative; none when it does not exist. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

const sdk = (modules: string[], name: string) => modules.filter((url) => url.includes(name));

describe("CLI start-up", () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "holdfast-startup-"));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("--version and -V print the version the build stamped, the same answer as the full CLI", async () => {
    const chunks: string[] = [];
    const sink = { write: (s: string) => chunks.push(s) > 0 } as unknown as NodeJS.WriteStream;
    expect(await main(["--version"], { stdout: sink, stderr: sink })).toBe(0);
    expect(chunks.join("")).toBe(`${CLI_VERSION}\n`);
    // The built CLI (`-V status`: through the full CLI): the package version (a release build) or the next release changesets
    // gives it, built from a commit (tooling/release/test/versioning.test.ts pins which).
    const stamped = /^\d+\.\d+\.\d+(-dev\+[0-9a-f]{7})?\n$/;
    const answers = new Set<string>();
    for (const args of [["--version"], ["-V"], ["-V", "status"]]) {
      const run = await cli(args);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(stamped);
      answers.add(run.stdout);
    }
    expect(answers.size).toBe(1);
    // The build replaced the marker: the built CLI never falls back to reading package.json.
    const built = readFileSync(join(dirname(BIN), "version.js"), "utf8");
    expect(built).not.toContain("@@HOLDFAST_CLI_VERSION@@");
    expect(built).toContain(JSON.stringify([...answers][0]?.trim()));
  });

  it("--version loads no command module, no protocol package and no zod", async () => {
    const run = await loadedModules(["--version"]);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/);
    // The hook does see the CLI's own modules: bin.js and version.js.
    expect(run.modules.filter((url) => url.endsWith("/bin.js"))).toHaveLength(1);
    expect(run.modules.filter((url) => url.endsWith("/version.js"))).toHaveLength(1);
    expect(
      run.modules.filter((url) => /\/commands\/|@holdfast|\/packages\/|zod/.test(url)),
    ).toEqual([]);
  });

  it("a command's --help loads its own command module, not the others, not the HTTP server", async () => {
    const run = await loadedModules(["status", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("holdfast status");
    const commands = run.modules
      .filter((url) => url.includes("/commands/"))
      .map((url) => url.slice(url.lastIndexOf("/") + 1));
    // status.js and what it imports (it shares lease.js's helpers); not the others.
    expect(commands).toContain("status.js");
    for (const other of ["serve.js", "demo.js", "doctor.js", "cleanup.js", "versions.js"]) {
      expect(commands).not.toContain(other);
    }
    expect(run.modules.filter((url) => /fastify|@holdfast\/server|apps\/server/.test(url))).toEqual(
      [],
    );
    // The top-level help lists every command, so it loads every module.
    const all = await loadedModules(["--help"]);
    expect(all.code).toBe(0);
    for (const name of COMMAND_MODULES.flatMap((m) => m.names)) {
      expect(all.stdout).toMatch(new RegExp(`^  ${name}\\b`, "m"));
    }
  });

  it("the registry names exactly the top-level commands each module adds, in help order", async () => {
    const registrar = { io: {}, leaf: (command: Command) => command } as unknown as Registrar;
    const all = new Command("holdfast");
    (await loadCommands([]))(registrar, all);
    expect(all.commands.map((c) => c.name())).toEqual(COMMAND_MODULES.flatMap((m) => m.names));
    for (const module of COMMAND_MODULES) {
      for (const name of module.names) {
        const one = new Command("holdfast");
        (await loadCommands([name, "--help"]))(registrar, one);
        expect({ name, added: one.commands.map((c) => c.name()) }).toEqual({
          name,
          added: module.names,
        });
      }
    }
  });

  it("a command compiles into Node's module compile cache in the per-user cache folder", async () => {
    const url = join(work, "cc-ds");
    const cache = join(work, "xdg-cache");
    expect((await cli(["init", url], { env: { XDG_CACHE_HOME: cache } })).code).toBe(0);
    const folder = join(cache, "holdfast", "node-compile-cache");
    // One subfolder per Node version and build, holding the compiled modules of the command.
    const cached = filesUnder(folder);
    expect(cached.length).toBeGreaterThan(10);
    expect(readdirSync(folder)).toEqual([expect.stringContaining(process.version)]);
    // The next run reads it (and still works); NODE_DISABLE_COMPILE_CACHE turns it off.
    const again = await cli(["versions", url], { env: { XDG_CACHE_HOME: cache } });
    expect(again.code).toBe(0);
    const off = join(work, "xdg-off");
    const disabled = await cli(["versions", url], {
      env: { XDG_CACHE_HOME: off, NODE_DISABLE_COMPILE_CACHE: "1" },
    });
    expect(disabled.code).toBe(0);
    expect(filesUnder(off)).toEqual([]);
  });

  it("a cache folder that cannot be created, or a runtime without the compile cache, only costs time", async () => {
    const url = join(work, "cc-ds2");
    expect((await cli(["init", url])).code).toBe(0);
    // XDG_CACHE_HOME is a file: no folder can be made under it.
    const file = join(work, "not-a-folder");
    await writeFile(file, "x");
    const unwritable = await cli(["versions", url, "--json"], { env: { XDG_CACHE_HOME: file } });
    expect(unwritable.stderr).toBe("");
    expect(unwritable.code).toBe(0);
    expect(unwritable.json().ok).toBe(true);
    // A runtime whose node:module has no enableCompileCache (Node before 22.1).
    const preload = join(work, "no-compile-cache.cjs");
    await writeFile(
      preload,
      'const m = require("node:module"); delete m.enableCompileCache; m.syncBuiltinESMExports();\n',
    );
    const cache = join(work, "xdg-old-node");
    const old = await cliWithPreload(preload, ["versions", url, "--json"], {
      XDG_CACHE_HOME: cache,
    });
    expect(old.stderr).toBe("");
    expect(old.code).toBe(0);
    expect(JSON.parse(old.stdout).ok).toBe(true);
    expect(filesUnder(cache)).toEqual([]);
  });

  it("a local dataset loads neither the AWS nor the Azure SDK", async () => {
    const url = join(work, "ds");
    expect((await cli(["init", url])).code).toBe(0);
    const run = await loadedModules(["versions", url]);
    expect(run.code).toBe(0);
    // The command did run: its modules are there.
    expect(run.modules.some((u) => u.includes("/commands/versions.js"))).toBe(true);
    expect(sdk(run.modules, "@aws-sdk")).toEqual([]);
    expect(sdk(run.modules, "@azure")).toEqual([]);
  });

  it("an s3:// URL loads the AWS SDK and not the Azure one", async () => {
    // Port 9 (discard) refuses the connection: the command fails, after loading its backend.
    const run = await loadedModules(
      [
        "versions",
        "s3://startup-bucket/p",
        "--endpoint",
        "http://127.0.0.1:9",
        "--region",
        "us-east-1",
      ],
      { AWS_ACCESS_KEY_ID: "x", AWS_SECRET_ACCESS_KEY: "y", AWS_MAX_ATTEMPTS: "1" },
    );
    expect(run.code).not.toBe(0);
    expect(sdk(run.modules, "@aws-sdk").length).toBeGreaterThan(0);
    expect(sdk(run.modules, "@azure")).toEqual([]);
  });
});
