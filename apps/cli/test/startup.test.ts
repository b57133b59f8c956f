import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

const sdk = (modules: string[], name: string) => modules.filter((url) => url.includes(name));

describe("CLI start-up", () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "holdfast-startup-"));
  });
  afterAll(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it("--version and -V print the package version, the same answer as the full CLI", async () => {
    const chunks: string[] = [];
    const sink = { write: (s: string) => chunks.push(s) > 0 } as unknown as NodeJS.WriteStream;
    expect(await main(["--version"], { stdout: sink, stderr: sink })).toBe(0);
    expect(chunks.join("")).toBe(`${CLI_VERSION}\n`);
    for (const flag of ["--version", "-V"]) {
      const run = await cli([flag]);
      expect(run.code).toBe(0);
      expect(run.stdout).toBe(`${CLI_VERSION}\n`);
    }
  });

  it("--version loads no command module, no protocol package and no zod", async () => {
    const run = await loadedModules(["--version"]);
    expect(run.stdout).toBe(`${CLI_VERSION}\n`);
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
