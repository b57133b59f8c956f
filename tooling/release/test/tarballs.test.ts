// Packs every public package as `pnpm publish` would, lints each tarball, installs them
// all into consumer projects in a temp directory outside the workspace and uses them from
// ESM, CommonJS, TypeScript (node16, bundler, nodenext CommonJS) and a copied backend
// template that runs the contract suite, on Node 22 and Node 26 (CONSUMER_NODE_LINES).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONSUMER_NODE_LINES,
  installConsumerRoot,
  type NodeLine,
  nodeBinDir,
  type RunResult,
  run,
  writeConsumerProjects,
} from "../src/consumer.js";
import { lintTarball, packAll, type Tarball } from "../src/tarballs.js";
import { publicPackages } from "../src/workspace.js";

const work = mkdtempSync(join(tmpdir(), "holdfast-release-"));
const consumer = join(work, "consumer");
let tarballs: Tarball[] = [];
let install: RunResult;
const timings: Record<string, number> = {};
const nodeBins = {} as Record<NodeLine, string>;

function timed<T>(label: string, step: () => T): T {
  const started = performance.now();
  try {
    return step();
  } finally {
    timings[label] = Math.round(performance.now() - started);
  }
}

beforeAll(() => {
  for (const line of CONSUMER_NODE_LINES) {
    nodeBins[line] = timed(`install Node ${line}`, () => nodeBinDir(line));
  }
  tarballs = timed("pack", () => packAll(join(work, "tarballs")));
  install = timed("npm install", () => installConsumerRoot(consumer, tarballs));
  writeConsumerProjects(consumer);
});

afterAll(() => {
  console.log(`release check timings (ms): ${JSON.stringify(timings)}`);
  rmSync(work, { recursive: true, force: true });
});

describe("packed tarballs", () => {
  it("packs every public package", () => {
    expect(tarballs.map((t) => t.pkg.name)).toEqual(publicPackages().map((p) => p.name));
  });

  it("each tarball passes publint (strict) and are-the-types-wrong", async () => {
    const findings: Record<string, string[]> = {};
    for (const tarball of tarballs) {
      const found = await lintTarball(tarball.file);
      if (found.length > 0) findings[tarball.pkg.name] = found;
    }
    expect(findings).toEqual({});
  });
});

describe("consumer projects outside the workspace", () => {
  it("npm installs every tarball (internal ranges resolve to the tarballs)", () => {
    expect(install.stderr.match(/npm error.*/g) ?? []).toEqual([]);
    expect(install.status).toBe(0);
  });

  it.each(["ts-node16", "ts-bundler", "ts-nodenext-cjs"])(
    "TypeScript %s: tsc --noEmit type-checks code using every entry point",
    (project) => {
      const result = run(
        join(consumer, "node_modules/.bin/tsc"),
        ["-p", "."],
        join(consumer, project),
      );
      expect(result.stdout + result.stderr).toBe("");
      expect(result.status).toBe(0);
    },
  );
});

describe.each(CONSUMER_NODE_LINES)("the installed packages on Node %s", (line) => {
  const runOn = (command: string, args: string[], cwd: string) =>
    run(command, args, cwd, nodeBins[line]);

  it("runs the pinned Node of that line", () => {
    const result = runOn("node", ["--version"], consumer);
    expect(result.stdout.trim()).toMatch(new RegExp(`^v${line}\\.`));
  });

  it("ESM: imports every package and runs a dataset with a lease, a tag and cleanup on a temp dir", () => {
    const result = runOn("node", ["smoke.mjs"], join(consumer, "esm"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}");
    expect(report.ok).toBe(true);
    expect(report.node).toMatch(new RegExp(`^v${line}\\.`));
    expect(report.backends).toEqual(["s3", "azure", "gcs"]);
  });

  it("CommonJS: require() loads every package and runs the resolver and the local store", () => {
    const result = runOn("node", ["smoke.cjs"], join(consumer, "cjs"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout.trim().split("\n").at(-1) ?? "{}");
    expect(report.ok).toBe(true);
    expect(report.node).toMatch(new RegExp(`^v${line}\\.`));
    for (const count of Object.values(report.loaded as Record<string, number>)) {
      expect(count).toBeGreaterThan(0);
    }
  });

  it("the holdfast CLI runs from the installed bin: --version, and init + versions on a temp dir", () => {
    const version = runOn(join(consumer, "node_modules/.bin/holdfast"), ["--version"], consumer);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const dataset = join(work, `cli-${line}`);
    const init = runOn(join(consumer, "node_modules/.bin/holdfast"), ["init", dataset], consumer);
    expect(init.stderr).toBe("");
    expect(init.status).toBe(0);
    const versions = runOn(
      join(consumer, "node_modules/.bin/holdfast"),
      ["versions", dataset, "--json"],
      consumer,
    );
    expect(versions.status).toBe(0);
    expect(JSON.parse(versions.stdout).ok).toBe(true);
  });

  it("a copy of examples/backend-template passes the contract suite against the installed packages", () => {
    const result = runOn(
      join(consumer, "node_modules/.bin/vitest"),
      ["run", "--reporter=dot"],
      join(consumer, "backend-template"),
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: strips colour codes
    const plain = result.stdout.replace(/\u001b\[[0-9;]*m/g, "");
    expect(plain).toMatch(/Tests\s+\d+ passed/);
    expect(result.status).toBe(0);
  });
});
