import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runApiReports } from "../src/api-report.js";
import { publicPackages, publishedEntries, WORKSPACE_ROOT } from "../src/workspace.js";

describe("API reports", () => {
  it("every published entry point's public surface matches its checked-in report (pnpm api:update rewrites them)", () => {
    const results = runApiReports({ update: false });
    const expected = publicPackages().flatMap((pkg) => publishedEntries(pkg));
    expect(results).toHaveLength(expected.length);
    expect(results.filter((r) => r.errors.length > 0 || r.changed)).toEqual([]);
  });

  it("a report that lacks one export fails the check", () => {
    const folder = mkdtempSync(join(tmpdir(), "holdfast-api-guard-"));
    try {
      const report = "conditional-store-testing.api.md";
      cpSync(join(WORKSPACE_ROOT, "packages/conditional-store/api", report), join(folder, report));
      const text = readFileSync(join(folder, report), "utf8");
      const edited = text.replace(
        /\n\/\/ @public[^\n]*\nexport function recordingSleep[^\n]*\n/,
        "\n",
      );
      expect(edited).not.toBe(text);
      writeFileSync(join(folder, report), edited);
      const [result] = runApiReports({
        update: false,
        only: ["@holdfast/conditional-store"],
        subpaths: ["./testing"],
        reportFolder: () => folder,
      });
      expect(result?.changed).toBe(true);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
