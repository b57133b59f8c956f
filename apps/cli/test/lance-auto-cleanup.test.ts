import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPylanceTables } from "@holdfast/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, checkShape, cli } from "./e2e-harness.js";

/**
 * Lance's automatic cleanup (docs/lance.md, "Lance's own cleaners"): a table whose config
 * sets `lance.auto_cleanup.*` has writers that delete old versions inside their commits and
 * ignore holdfast's leases. `lease acquire` and `doctor` must say so, naming the keys and
 * how to turn them off; a table without them gets no warning. The tables are pylance's
 * (`tooling/python/pylance_tables.py write auto-cleanup`, run with `$HOLDFAST_PYTHON`), on
 * local disk.
 */

interface Written {
  tables: Record<string, { versions: number[] }>;
  config: Record<string, Record<string, string>>;
}

const root = mkdtempSync(join(tmpdir(), "holdfast-cli-autoclean-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let written: Written;
const table = (name: string) => join(root, `${name}.lance`);

beforeAll(async () => {
  written = await runPylanceTables<Written>(["write", "auto-cleanup", root], {});
}, 300_000);

function ok(run: CliRun): Record<string, unknown> {
  if (run.code !== 0) throw new Error(`exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  const doc = run.json();
  checkShape(doc);
  return doc;
}

/** `key=value` of every `lance.auto_cleanup.*` key pylance wrote into the table's config. */
function autoCleanupSettings(name: string): string[] {
  return Object.entries(written.config[name]!)
    .filter(([key]) => key.startsWith("lance.auto_cleanup."))
    .map(([key, value]) => `${key}=${value}`);
}

/** The warning names every key set, what it costs and how to turn it off. */
function expectNamesTheSetting(text: string): void {
  const settings = autoCleanupSettings("autoclean");
  expect(settings.length).toBeGreaterThan(0);
  for (const setting of settings) expect(text).toContain(setting);
  expect(text).toContain("ignores holdfast's leases");
  expect(text).toContain("a leased version can lose its files");
  expect(text).toContain("ds.optimize.disable_auto_cleanup()");
}

describe("Lance's automatic cleanup on a pylance table (local disk)", () => {
  it("pylance wrote lance.auto_cleanup.interval into one table's config and nothing into the other's", () => {
    expect(written.config.autoclean).toMatchObject({ "lance.auto_cleanup.interval": "20" });
    expect(autoCleanupSettings("noclean")).toEqual([]);
  });

  it("lease acquire warns on stderr and in --json warnings that the lease does not protect the version, and still acquires it", {
    timeout: 120_000,
  }, async () => {
    const version = written.tables.autoclean!.versions.at(-1)!;
    const run = await cli([
      "lease",
      "acquire",
      table("autoclean"),
      String(version),
      "--ttl",
      "60s",
      "--json",
    ]);
    const doc = ok(run);
    expect(doc.lease).toMatchObject({ branch: "main", version, active: true });
    const warnings = doc.warnings as string[];
    expect(warnings).toHaveLength(1);
    expectNamesTheSetting(warnings[0]!);
    expect(run.stderr).toContain(`warning: ${warnings[0]}`);

    const human = await cli([
      "lease",
      "acquire",
      table("autoclean"),
      String(version),
      "--ttl",
      "60s",
    ]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("Acquired lease");
    expect(human.stdout).not.toContain("warning:");
    expect(human.stderr).toContain("warning: this Lance table has Lance's automatic cleanup on");
    expectNamesTheSetting(human.stderr);

    // Both leases were written: the warning does not stop the reader.
    const list = ok(await cli(["lease", "list", table("autoclean"), "--json"]));
    expect(
      (list.leases as { version: number; active: boolean }[]).filter((l) => l.active),
    ).toHaveLength(2);
  });

  it("doctor warns in its lance check, naming the setting and how to turn it off", {
    timeout: 120_000,
  }, async () => {
    const doctor = ok(await cli(["doctor", table("autoclean"), "--json"]));
    expect(doctor.verdict).toBe("degraded");
    const check = (doctor.checks as { id: string; status: string; detail: string }[]).find(
      (c) => c.id === "lance",
    );
    expect(check).toMatchObject({ status: "warn" });
    expectNamesTheSetting(check!.detail);
    const human = await cli(["doctor", table("autoclean")]);
    expect(human.code, human.stderr).toBe(0);
    expectNamesTheSetting(human.stdout);
  });

  it("a table without lance.auto_cleanup.* gets no warning from lease acquire or doctor", {
    timeout: 120_000,
  }, async () => {
    const version = written.tables.noclean!.versions.at(-1)!;
    const run = await cli([
      "lease",
      "acquire",
      table("noclean"),
      String(version),
      "--ttl",
      "60s",
      "--json",
    ]);
    expect(ok(run).warnings).toEqual([]);
    expect(run.stderr).not.toContain("warning");
    const human = await cli([
      "lease",
      "acquire",
      table("noclean"),
      String(version),
      "--ttl",
      "60s",
    ]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).not.toContain("warning");
    const doctor = ok(await cli(["doctor", table("noclean"), "--json"]));
    const check = (doctor.checks as { id: string; status: string; detail: string }[]).find(
      (c) => c.id === "lance",
    );
    expect(check).toMatchObject({ status: "info" });
    expect(check!.detail).not.toContain("lance.auto_cleanup");
  });
});
