import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { azuriteLanceOptions, rgwLanceOptions, runPylanceTables } from "@holdfast/test-support";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { checkShape, cli, readServiceEnv } from "./e2e-harness.js";

/**
 * `holdfast cleanup` on tables pylance 14 wrote (docs/lance.md, "Interop tests"): the CLI
 * detects the Lance format, retires what the policy allows, and pylance then reads every
 * kept version in full with the checksum it had and no longer lists the removed ones.
 * The tables come from `tooling/python/pylance_tables.py`, run with `$HOLDFAST_PYTHON`.
 */

interface Written {
  tables: Record<
    string,
    {
      versions: number[];
      tags: Record<string, { branch: string | null; version: number }>;
      branches: Record<
        string,
        { parentBranch: string | null; parentVersion: number; versions: number[] }
      >;
    }
  >;
}
interface Verified {
  main: Record<string, { rows: number; checksum: string }>;
  branches: Record<string, Record<string, { rows: number; checksum: string }>>;
  tracked: { keys: string[]; elsewhere: number };
}

/** The pylance fixture script, run by the shared test support. */
function pylance<T>(args: string[], storageOptions: Record<string, string>): Promise<T> {
  return runPylanceTables<T>(args, storageOptions);
}

interface Target {
  root: string;
  storageOptions: Record<string, string>;
  url: (table: string) => string;
  flags: string[];
  env: Record<string, string>;
  /** Local directory of the root, when on disk (its files are then listed after cleanup). */
  dir?: string;
}

function local(): Target {
  const dir = mkdtempSync(join(tmpdir(), "holdfast-cli-pylance-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return {
    root: dir,
    dir,
    storageOptions: {},
    url: (t) => `${dir}/${t}.lance`,
    flags: [],
    env: {},
  };
}

function rgw(): Target {
  const env = readServiceEnv("rgw");
  const root = `s3://${env.HOLDFAST_S3_BUCKET}/cli-pylance-${ulid().toLowerCase()}`;
  return {
    root,
    storageOptions: rgwLanceOptions(),
    url: (t) => `${root}/${t}.lance`,
    flags: [
      "--endpoint",
      env.HOLDFAST_S3_ENDPOINT!,
      "--region",
      env.HOLDFAST_S3_REGION!,
      "--path-style",
    ],
    env: {
      AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY!,
    },
  };
}

function azurite(): Target {
  const env = readServiceEnv("azurite");
  const connectionString = env.AZURE_STORAGE_CONNECTION_STRING!;
  const root = `az://${env.HOLDFAST_AZURE_CONTAINER ?? "holdfast-test"}/cli-pylance-${ulid().toLowerCase()}`;
  return {
    root,
    storageOptions: azuriteLanceOptions(),
    url: (t) => `${root}/${t}.lance`,
    flags: [],
    env: { AZURE_STORAGE_CONNECTION_STRING: connectionString },
  };
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (at: string) => {
    for (const name of readdirSync(at)) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

const CASES = [
  { scenario: "history", table: "history" },
  { scenario: "stable-row-ids", table: "rowids" },
  { scenario: "blobs", table: "blobs" },
  { scenario: "branches", table: "branches" },
  { scenario: "v1-naming", table: "v1names" },
  { scenario: "fragment-reuse", table: "reuse" },
  { scenario: "shallow-clone", table: "clone" },
] as const;

function describeCli(name: string, target: () => Target, cases: readonly (typeof CASES)[number][]) {
  describe(`holdfast cleanup on pylance 14 tables (${name})`, () => {
    it.each(cases)(
      "$scenario: retires old versions; pylance reads every kept one as before",
      {
        timeout: 300_000,
      },
      async ({ scenario, table }) => {
        const t = target();
        const written = await pylance<Written>(["write", scenario, t.root], t.storageOptions);
        const before = await pylance<Verified>(["verify", t.url(table)], t.storageOptions);
        await sleep(1_100); // orphans of the last storage second are swept next second
        const run = await cli(
          [
            "cleanup",
            t.url(table),
            "--retain",
            "2",
            "--min-age",
            "0s",
            "--orphan-grace",
            "0s",
            "--no-writer-active",
            "--json",
            ...t.flags,
          ],
          { env: t.env, timeoutMs: 120_000 },
        );
        if (run.code !== 0) throw new Error(`exit ${run.code}\n${run.stdout}\n${run.stderr}`);
        const doc = run.json();
        checkShape(doc);
        expect(doc.format).toBe("lance");
        const info = written.tables[table]!;
        const kept = new Set(info.versions.slice(-2));
        for (const tag of Object.values(info.tags)) if (tag.branch === null) kept.add(tag.version);
        for (const branch of Object.values(info.branches)) {
          if (branch.parentBranch === null) kept.add(branch.parentVersion);
        }
        const after = await pylance<Verified>(["verify", t.url(table)], t.storageOptions);
        expect(Object.keys(after.main).map(Number)).toEqual([...kept].sort((a, b) => a - b));
        for (const version of kept)
          expect(after.main[String(version)]).toEqual(before.main[String(version)]);
        // Branch versions retire by the same policy; every kept one reads as before.
        for (const [branch, reads] of Object.entries(after.branches)) {
          for (const [version, read] of Object.entries(reads)) {
            expect({ branch, version, read }).toEqual({
              branch,
              version,
              read: before.branches[branch]![version],
            });
          }
          // Every branch (`dev/sub` too) keeps its newest 2, its tags and its children's fork points.
          const own = info.branches[branch]!;
          const keptOn = new Set(own.versions.slice(-2));
          for (const tag of Object.values(info.tags))
            if (tag.branch === branch) keptOn.add(tag.version);
          for (const child of Object.values(info.branches)) {
            if (child.parentBranch === branch) keptOn.add(child.parentVersion);
          }
          expect(Object.keys(reads).map(Number)).toEqual(own.versions.filter((v) => keptOn.has(v)));
        }
        if (t.dir) {
          const tracked = new Set(after.tracked.keys);
          const left = filesUnder(join(t.dir, `${table}.lance`)).filter((key) => {
            if (tracked.has(key) || key.startsWith("_refs/")) return false;
            if (/^(tree\/.+\/)?_versions\/latest_version_hint\.json$/.test(key)) return false;
            // The local backend's own lock files (never listed as keys).
            if (key.startsWith("_holdfast/.local/")) return false;
            // The run's summary for the dashboard (the cleanup package's run history).
            if (key.startsWith("_holdfast/history/")) return false;
            const sidecar = /^(.*\/)?data\/([^/]+)\/[^/]+\.blob$/.exec(key);
            return !(sidecar && tracked.has(`${sidecar[1] ?? ""}data/${sidecar[2]}.lance`));
          });
          expect(left).toEqual([]);
        }
      },
    );
  });
}

describeCli("local disk", local, CASES);
describeCli("Ceph RGW", rgw, CASES.slice(0, 1));
describeCli("Azurite", azurite, CASES.slice(0, 1));
