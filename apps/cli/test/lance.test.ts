import { rgwLanceOptions } from "@holdfast/test-support";
import * as lancedb from "@lancedb/lancedb";
import { ulid } from "ulid";
import { describe, expect, it } from "vitest";
import { checkShape, cli, readServiceEnv } from "./e2e-harness.js";

/**
 * `holdfast cleanup` on a Lance table LanceDB wrote to Ceph RGW: the format is detected
 * from the table's `_versions/` (docs/lance.md), Lance's tag keeps its version, and
 * LanceDB afterwards lists exactly what holdfast kept.
 */
describe("cli on a Lance table (RGW)", () => {
  it("cleanup detects the Lance format, keeps the tagged and latest versions, LanceDB agrees", {
    timeout: 300_000,
  }, async () => {
    const env = readServiceEnv("rgw");
    const prefix = `cli-lance-${ulid().toLowerCase()}`;
    const storageOptions = rgwLanceOptions();
    const uri = `s3://${env.HOLDFAST_S3_BUCKET}/${prefix}`;
    const db = await lancedb.connect(uri, { storageOptions });
    const table = await db.createTable("events", [{ id: 1, v: "a" }]);
    for (let i = 2; i <= 5; i += 1) await table.add([{ id: i, v: "b" }], { mode: "overwrite" });
    await (await table.tags()).create("keep", 2);
    table.close();

    const run = await cli(
      [
        "cleanup",
        `${uri}/events.lance`,
        "--retain",
        "1",
        "--min-age",
        "0s",
        "--json",
        "--endpoint",
        env.HOLDFAST_S3_ENDPOINT!,
        "--region",
        env.HOLDFAST_S3_REGION!,
        "--path-style",
      ],
      {
        env: {
          AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!,
          AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY!,
        },
      },
    );
    if (run.code !== 0) throw new Error(`exit ${run.code}\n${run.stdout}\n${run.stderr}`);
    const doc = run.json();
    checkShape(doc);
    expect(doc.format).toBe("lance");
    const stats = doc.stats as { retired: { version: number }[] };
    expect(stats.retired.map((r) => r.version).sort()).toEqual([1, 3, 4]);

    const after = await (await lancedb.connect(uri, { storageOptions })).openTable("events");
    expect((await after.listVersions()).map((v) => v.version)).toEqual([2, 5]);
    after.close();
  });

  it("lease acquire pins a Lance version: cleanup keeps it until lease release", {
    timeout: 300_000,
  }, async () => {
    const env = readServiceEnv("rgw");
    const prefix = `cli-lance-${ulid().toLowerCase()}`;
    const storageOptions = rgwLanceOptions();
    const uri = `s3://${env.HOLDFAST_S3_BUCKET}/${prefix}`;
    const db = await lancedb.connect(uri, { storageOptions });
    const table = await db.createTable("events", [{ id: 1 }]);
    for (let i = 2; i <= 4; i += 1) await table.add([{ id: i }], { mode: "overwrite" });
    table.close();
    const flags = [
      "--json",
      "--endpoint",
      env.HOLDFAST_S3_ENDPOINT!,
      "--region",
      env.HOLDFAST_S3_REGION!,
      "--path-style",
    ];
    const run = async (...args: string[]) => {
      const done = await cli([...args, ...flags], {
        env: {
          AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID!,
          AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY!,
        },
      });
      if (done.code !== 0) throw new Error(`exit ${done.code}\n${done.stdout}\n${done.stderr}`);
      const doc = done.json();
      checkShape(doc);
      return doc;
    };
    const url = `${uri}/events.lance`;
    const acquired = await run("lease", "acquire", url, "2", "--ttl", "5m");
    const handle = JSON.stringify(acquired.handle);
    const during = await run("cleanup", url, "--retain", "1", "--min-age", "0s");
    const stats = during.stats as {
      retired: { version: number }[];
      retained: { version: number; reason: string }[];
    };
    expect(stats.retired.map((r) => r.version).sort()).toEqual([1, 3]);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 2, reason: "lease" }),
    );
    await run("lease", "release", url, "--handle", handle);
    const after = await run("cleanup", url, "--retain", "1", "--min-age", "0s");
    expect(
      (after.stats as { retired: { version: number }[] }).retired.map((r) => r.version),
    ).toEqual([2]);
    const check = await (await lancedb.connect(uri, { storageOptions })).openTable("events");
    expect((await check.listVersions()).map((v) => v.version)).toEqual([4]);
    check.close();
  });

  it("--format rejects an unknown name before any request", async () => {
    const run = await cli([
      "cleanup",
      "/nonexistent/x",
      "--retain",
      "1",
      "--format",
      "parquet",
      "--json",
    ]);
    expect(run.code).not.toBe(0);
    const doc = run.json();
    checkShape(doc);
    expect(doc).toMatchObject({ ok: false, error: { kind: "invalid-input" } });
  });
});
