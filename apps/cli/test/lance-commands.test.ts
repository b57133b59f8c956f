import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as lancedb from "@lancedb/lancedb";
import { afterAll, describe, expect, it } from "vitest";
import { type CliRun, checkShape, cli } from "./e2e-harness.js";

const base = mkdtempSync(join(tmpdir(), "holdfast-cli-lance-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

/**
 * A LanceDB table on local disk: versions 1-5 (overwrites), LanceDB's tag `lance-2` on 2
 * and LanceDB's branch `dev` forked at 3 with one commit of its own (dev's version 4).
 * Returns the table folder the CLI is pointed at.
 */
async function lanceTable(): Promise<{ uri: string; dir: string }> {
  n += 1;
  const uri = join(base, `db-${n}`);
  const db = await lancedb.connect(uri);
  const table = await db.createTable("events", [{ id: 1, v: "a" }]);
  for (let i = 2; i <= 5; i += 1) await table.add([{ id: i, v: "b" }], { mode: "overwrite" });
  await (await table.tags()).create("lance-2", 2);
  const dev = await (await table.branches()).create("dev", "main", 3);
  await dev.add([{ id: 9, v: "dev" }]);
  dev.close();
  table.close();
  return { uri, dir: join(uri, "events.lance") };
}

async function lanceTags(uri: string): Promise<Record<string, number>> {
  const table = await (await lancedb.connect(uri)).openTable("events");
  const listed = await (await table.tags()).list();
  table.close();
  return Object.fromEntries(Object.entries(listed).map(([k, t]) => [k, t.version]));
}

/** Every file under a directory with its size and mtime: a write anywhere changes it. */
function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const path = join(e.parentPath, e.name);
      const s = statSync(path);
      return `${path} ${s.size} ${s.mtimeMs}`;
    })
    .sort();
}

function ok(run: CliRun): Record<string, unknown> {
  if (run.code !== 0) throw new Error(`exit ${run.code}\n${run.stdout}\n${run.stderr}`);
  const doc = run.json();
  checkShape(doc);
  return doc;
}

/**
 * Adds `lance.auto_cleanup.interval` to the config of the latest manifest LanceDB wrote,
 * as Lance's writer records it: one more `config` map entry (Manifest field 16) appended
 * to the protobuf message, whose length prefix grows by as much; the footer keeps its
 * position. Lance's own cleaner would then run after the table's next commits.
 */
function turnOnLanceAutoCleanup(dir: string): void {
  const versions = join(dir, "_versions");
  const names = readdirSync(versions).filter((name) => name.endsWith(".manifest"));
  const latest = names.sort()[0]!; // V2 naming: the newest sorts first
  const bytes = readFileSync(join(versions, latest));
  const footer = bytes.subarray(bytes.length - 16);
  const position = Number(footer.readBigInt64LE(0));
  const length = bytes.readUInt32LE(position);
  const text = (s: string) => Buffer.from(s, "utf8");
  const field = (tag: number, value: Buffer) =>
    Buffer.concat([Buffer.from([tag, value.length]), value]);
  const entry = Buffer.concat([
    field(0x0a, text("lance.auto_cleanup.interval")),
    field(0x12, text("20")),
  ]);
  const appended = Buffer.concat([Buffer.from([0x82, 0x01, entry.length]), entry]);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(length + appended.length);
  writeFileSync(
    join(versions, latest),
    Buffer.concat([
      bytes.subarray(0, position),
      prefix,
      bytes.subarray(position + 4, position + 4 + length),
      appended,
      footer,
    ]),
  );
  // The footer's position still points at the length prefix, which now covers the entry.
}

describe("every cli command detects a Lance table LanceDB wrote (local disk)", () => {
  it("status, versions, tag list and branch list read Lance's versions, tags and branches", {
    timeout: 300_000,
  }, async () => {
    const { dir } = await lanceTable();
    const status = ok(await cli(["status", dir, "--json"]));
    expect(status).toMatchObject({
      format: "lance",
      datasetId: null,
      // Lance branches are branches of the dataset: status lists dev with main.
      branches: [
        { name: "main", latestVersion: 5 },
        { name: "dev", latestVersion: 4 },
      ],
      tags: [{ name: "lance-2", target: { branch: "main", version: 2 } }],
      warnings: [],
    });
    expect(status.lance).toMatchObject({
      naming: "v2",
      versions: 5,
      latest: 5,
      autoCleanup: null,
      tags: 1,
      branches: 1,
    });
    const human = await cli(["status", dir]);
    expect(human.stdout).toContain("Lance table");
    expect(human.stdout).toContain("Lance's automatic cleanup: off");

    const versions = ok(await cli(["versions", dir, "--json"]));
    expect(versions.format).toBe("lance");
    expect(
      (versions.versions as { version: number; tags: string[] }[]).map((v) => [v.version, v.tags]),
    ).toEqual([
      [1, []],
      [2, ["lance-2"]],
      [3, []],
      [4, []],
      [5, []],
    ]);
    const tags = ok(await cli(["tag", "list", dir, "--json"]));
    expect(tags.tags).toEqual([{ name: "lance-2", target: { branch: "main", version: 2 } }]);
    const branches = ok(await cli(["branch", "list", dir, "--json"]));
    // A Lance branch's latest version is read from its own tree/dev/_versions/.
    expect(
      (branches.branches as { name: string; parent: unknown; latestVersion: number | null }[]).map(
        (b) => [b.name, b.parent, b.latestVersion],
      ),
    ).toEqual([
      ["main", null, 5],
      ["dev", { branch: "main", version: 3 }, 4],
    ]);
    const branchTable = await cli(["branch", "list", dir]);
    expect(branchTable.stdout).toMatch(/dev\s+main@3\s+4/);
    // --format forces a format: holdfast's finds no dataset here.
    const forced = await cli(["status", dir, "--format", "holdfast", "--json"]);
    expect(forced.code).not.toBe(0);
    const bad = await cli(["status", dir, "--format", "parquet"]);
    expect(bad.code).toBe(2);
  });

  it("tag create writes a Lance tag LanceDB lists; tag delete removes it for LanceDB; branch writes are refused", {
    timeout: 300_000,
  }, async () => {
    const { uri, dir } = await lanceTable();
    const created = ok(await cli(["tag", "create", dir, "keep-4", "4", "--json"]));
    expect(created).toMatchObject({
      format: "lance",
      tag: { name: "keep-4", target: { branch: "main", version: 4 } },
    });
    expect(await lanceTags(uri)).toEqual({ "lance-2": 2, "keep-4": 4 });
    const table = await (await lancedb.connect(uri)).openTable("events");
    await table.checkout("keep-4");
    expect(await table.version()).toBe(4);
    table.close();

    ok(await cli(["tag", "update", dir, "keep-4", "5", "--json"]));
    expect(await lanceTags(uri)).toEqual({ "lance-2": 2, "keep-4": 5 });
    // A LanceDB tag is deleted through holdfast too.
    ok(await cli(["tag", "delete", dir, "lance-2", "--json"]));
    expect(await lanceTags(uri)).toEqual({ "keep-4": 5 });

    const branch = await cli(["branch", "create", dir, "exp", "--from", "3"]);
    expect(branch.code).toBe(5);
    expect(branch.stderr).toContain("created and deleted by its own tools");
    const recover = ok(await cli(["recover", dir, "--json"]));
    expect(recover.references).toMatchObject({ removedOrphans: 0 });
    const cleaned = ok(await cli(["cleanup", dir, "--retain", "1", "--min-age", "0s", "--json"]));
    expect(cleaned.format).toBe("lance");
    const table2 = await (await lancedb.connect(uri)).openTable("events");
    // 3 is dev's fork point; 5 is the latest and tagged.
    expect((await table2.listVersions()).map((v) => v.version)).toEqual([3, 5]);
    table2.close();
  });

  it("tag create on a version of a Lance branch writes Lance's tag with its branch; LanceDB checks it out; a version the branch lacks writes nothing", {
    timeout: 300_000,
  }, async () => {
    const { uri, dir } = await lanceTable();
    const created = ok(
      await cli(["tag", "create", dir, "dev-4", "4", "--branch", "dev", "--json"]),
    );
    expect(created).toMatchObject({
      tag: { name: "dev-4", target: { branch: "dev", version: 4 } },
    });
    const written = JSON.parse(readFileSync(join(dir, "_refs", "tags", "dev-4.json"), "utf8"));
    expect(written).toMatchObject({ branch: "dev", version: 4 });
    const devManifests = readdirSync(join(dir, "tree", "dev", "_versions"));
    const sizes = devManifests.map((f) => statSync(join(dir, "tree", "dev", "_versions", f)).size);
    expect(sizes).toContain(written.manifestSize);

    const table = await (await lancedb.connect(uri)).openTable("events");
    const listed = await (await table.tags()).list();
    expect(listed["dev-4"]).toMatchObject({ version: 4 });
    await table.checkout("dev-4");
    expect(await table.version()).toBe(4);
    const rows = (await table.query().toArray()) as { id: number }[];
    // dev forked at 3 (one row, id 3) and appended id 9.
    expect(rows.map((r) => r.id).sort((a, b) => a - b)).toEqual([3, 9]);
    table.close();

    // The tag's intent is written before its target is checked (so a cleanup's census sees
    // it, docs/protocol.md) and removed when the check fails; the local backend's lock
    // files are its own bookkeeping. Nothing else may change.
    const data = () => listFiles(dir).filter((f) => !f.includes("/_holdfast/.local/locks/"));
    const before = data();
    const missing = await cli(["tag", "create", dir, "dev-9", "9", "--branch", "dev", "--json"]);
    expect(missing.code).not.toBe(0);
    expect(missing.json()).toMatchObject({ ok: false, error: { kind: "not-found" } });
    expect(data()).toEqual(before);
    expect(await lanceTags(uri)).toEqual({ "lance-2": 2, "dev-4": 4 });
  });

  it("commit on a Lance table is refused as FORMAT_READ_ONLY and writes nothing", {
    timeout: 300_000,
  }, async () => {
    const { uri, dir } = await lanceTable();
    const file = join(base, `commit-${n}.bin`);
    writeFileSync(file, "bytes");
    const before = listFiles(dir);
    for (const extra of [[], ["--branch", "dev"]]) {
      const run = await cli(["commit", dir, file, ...extra, "--json"]);
      expect(run.code, run.stderr).toBe(5);
      const doc = JSON.parse(run.stdout) as { error: { code: string; message: string } };
      expect(doc.error.code).toBe("FORMAT_READ_ONLY");
      expect(doc.error.message).toContain("written by LanceDB");
      expect(doc.error.message).toContain("never writes Lance manifests");
    }
    expect(listFiles(dir)).toEqual(before);
    const table = await (await lancedb.connect(uri)).openTable("events");
    expect((await table.listVersions()).map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    table.close();
  });

  it("doctor and status report the Lance table and warn when Lance's automatic cleanup is on", {
    timeout: 300_000,
  }, async () => {
    const { dir } = await lanceTable();
    const quiet = ok(await cli(["doctor", dir, "--json"]));
    expect(quiet).toMatchObject({ format: "lance", lance: { naming: "v2", autoCleanup: null } });
    expect(
      (quiet.checks as { id: string; status: string }[]).find((c) => c.id === "lance"),
    ).toMatchObject({ status: "info" });

    turnOnLanceAutoCleanup(dir);
    const doctor = ok(await cli(["doctor", dir, "--json"]));
    expect(doctor.lance).toMatchObject({ autoCleanup: { interval: "20" } });
    expect(doctor.verdict).toBe("degraded");
    const check = (doctor.checks as { id: string; status: string; detail: string }[]).find(
      (c) => c.id === "lance",
    );
    expect(check).toMatchObject({ status: "warn" });
    expect(check?.detail).toContain("ignores holdfast's leases");
    const status = ok(await cli(["status", dir, "--json"]));
    expect((status.warnings as string[])[0]).toContain("automatic cleanup");
    expect((status.warnings as string[])[0]).toContain("interval=20");
    const human = await cli(["status", dir]);
    expect(human.stdout).toContain("Lance's automatic cleanup: ON");
  });
});
