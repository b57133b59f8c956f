import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../src/consumer.js";
import { WORKSPACE_ROOT } from "../src/workspace.js";

const fixture = mkdtempSync(join(tmpdir(), "holdfast-unbuilt-"));
afterAll(() => rmSync(fixture, { recursive: true, force: true }));

// A package shaped like every public holdfast package, whose prepack ends with the same
// check-built step, but with no build: what a clean clone has before `turbo run build`.
writeFileSync(
  join(fixture, "package.json"),
  JSON.stringify({
    name: "@holdfast-fixture/unbuilt",
    version: "0.0.0",
    type: "module",
    exports: { ".": { types: "./dist/index.d.ts", default: "./dist/index.js" } },
    files: ["dist"],
    scripts: { prepack: `node ${join(WORKSPACE_ROOT, "tooling/release/bin/check-built.mjs")}` },
  }),
);

describe("publishing an unbuilt package", () => {
  it("pnpm publish --dry-run refuses it, naming the missing files", () => {
    const result = run("pnpm", ["publish", "--dry-run", "--no-git-checks"], fixture);
    expect(result.status).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("./dist/index.js");
  });

  it("the same dry run accepts it once built", () => {
    mkdirSync(join(fixture, "dist"));
    writeFileSync(join(fixture, "dist/index.js"), "export {};\n");
    writeFileSync(join(fixture, "dist/index.d.ts"), "export {};\n");
    const result = run("pnpm", ["publish", "--dry-run", "--no-git-checks"], fixture);
    expect(result.status).toBe(0);
  });
});
