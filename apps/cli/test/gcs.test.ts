// The CLI on gs:// URLs against a real fake-gcs-server (tooling/services/gcs-start.sh): the
// doctor's report of what the bucket guarantees, and a small cleanup that keeps a leased
// version. A missing emulator fails these tests with instructions: they never skip.
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { createGcsStore } from "@holdfast/backends-gcs";
import { listAll } from "@holdfast/conditional-store";
import { gcsError, startFaultProxy } from "@holdfast/fault-proxy";
import * as lancedb from "@lancedb/lancedb";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkShape, readServiceEnv } from "./e2e-harness.js";
import { run } from "./run.js";

const service = readServiceEnv("gcs");
const endpoint = service.STORAGE_EMULATOR_HOST!;
const bucket = service.HOLDFAST_GCS_BUCKET!;

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "holdfast-cli-gcs-"));
  await writeFile(join(work, "a.bin"), "alpha");
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

function freshUrl(label: string): string {
  return `gs://${bucket}/cli-${label}-${ulid().toLowerCase()}`;
}

describe("holdfast on gs:// (fake-gcs-server)", () => {
  it("doctor reports what the bucket guarantees: create-only and compare-and-swap enforced, conditional delete not relied on", async () => {
    const url = freshUrl("doctor");
    const answer = await run(["doctor", url, "--endpoint", endpoint, "--json"]);
    expect(answer.code, answer.stderr).toBe(0);
    const doc = answer.json();
    checkShape(doc);
    expect(doc).toMatchObject({
      ok: true,
      command: "doctor",
      location: url,
      backend: "gcs",
      verdict: "supported",
      declared: {
        atomicConditionalUpdate: true,
        // fake-gcs-server ignores ifGenerationMatch on delete: the probe turned it off.
        atomicConditionalDelete: false,
        timestampPrecisionMs: 1000,
        maxBatchDelete: 100,
        requestMode: "single-attempt",
        etagIsContentHash: false,
      },
    });
    const checks = Object.fromEntries(
      (doc.checks as { id: string; status: string }[]).map((c) => [c.id, c.status]),
    );
    expect(checks).toMatchObject({
      "create-only": "pass",
      "if-match": "pass",
      "conditional-delete": "info",
      "batch-delete": "pass",
    });
    expect(doc.guarantees).toEqual(
      expect.arrayContaining([expect.stringMatching(/Conditional delete is not relied on/)]),
    );
  });

  it("takes the emulator from STORAGE_EMULATOR_HOST when --endpoint is not given", async () => {
    const url = freshUrl("env");
    const init = await run(["init", url, "--json"], { env: { STORAGE_EMULATOR_HOST: endpoint } });
    expect(init.code, init.stderr).toBe(0);
    expect(init.json()).toMatchObject({ ok: true, command: "init" });
  });

  it("a small cleanup retires old versions and keeps the leased one", async () => {
    const url = freshUrl("cleanup");
    const flags = ["--endpoint", endpoint];
    expect((await run(["init", url, ...flags])).code).toBe(0);
    for (let i = 0; i < 4; i += 1) {
      const commit = await run(["commit", url, "a.bin", ...flags], { cwd: work });
      expect(commit.code, commit.stderr).toBe(0);
    }
    const lease = await run(["lease", "acquire", url, "2", "--ttl", "10m", ...flags, "--json"]);
    expect(lease.code, lease.stderr).toBe(0);

    const cleanup = await run([
      "cleanup",
      url,
      "--retain",
      "1",
      "--min-age",
      "0s",
      ...flags,
      "--json",
    ]);
    expect(cleanup.code, cleanup.stderr).toBe(0);
    checkShape(cleanup.json());

    const versions = await run(["versions", url, ...flags, "--json"]);
    expect(versions.code, versions.stderr).toBe(0);
    expect((versions.json().versions as { version: number }[]).map((v) => v.version)).toEqual([
      2, 4,
    ]);
  });

  it("C8 a commit whose manifest create landed but answered 500 commits once: the re-issue's 'already exists' reads back as ours", async () => {
    const url = freshUrl("c8");
    expect((await run(["init", url, "--endpoint", endpoint])).code).toBe(0);
    await using proxy = await startFaultProxy({ target: endpoint });
    const manifest =
      /^\/upload\/storage\/v1\/b\/[^/]+\/o\?.*name=[^&]*_versions%2Fmain%2F0+1\.json(?:&|$)/;
    proxy.addRule({
      method: "POST",
      path: manifest,
      nth: 1,
      action: gcsError(500, "backendError", { after: "forward" }),
    });

    const commit = await run(["commit", url, "a.bin", "--endpoint", proxy.url, "--json"], {
      cwd: work,
    });

    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.json()).toMatchObject({ ok: true, command: "commit", version: 1 });
    const uploads = proxy.requests.filter((r) => r.method === "POST" && manifest.test(r.path));
    expect(uploads.map((r) => [r.action, r.status])).toEqual([
      ["replace-response", 200],
      ["forward", 412],
    ]);
    const versions = await run(["versions", url, "--endpoint", endpoint, "--json"]);
    expect((versions.json().versions as { version: number }[]).map((v) => v.version)).toEqual([1]);
  });

  it("refuses a malformed bucket before sending anything (exit 2)", async () => {
    const answer = await run(["doctor", "gs://Bad_Bucket/x", "--endpoint", endpoint, "--json"]);
    expect(answer.code).toBe(2);
    expect(answer.json()).toMatchObject({ ok: false, error: { kind: "invalid-input" } });
  });

  it("--region and --path-style stay S3's: refused on gs:// (exit 2)", async () => {
    for (const extra of [["--region", "us-east-1"], ["--path-style"]]) {
      const answer = await run(["versions", freshUrl("flags"), ...extra, "--json"]);
      expect(answer.code).toBe(2);
      expect(answer.json()).toMatchObject({ ok: false, error: { kind: "invalid-input" } });
    }
  });
});

/**
 * A Lance table on gs://: LanceDB writes it on local disk (its object_store writes GCS
 * through the XML API, which fake-gcs-server does not serve), the files are copied into the
 * bucket as they are, holdfast cleans them there, and LanceDB reads a copy back.
 */
describe("a Lance table on gs:// (fake-gcs-server)", () => {
  it("cleanup detects the Lance format, keeps the leased, tagged and latest versions, LanceDB agrees", {
    timeout: 300_000,
  }, async () => {
    const local = join(work, "lance-db");
    const db = await lancedb.connect(local);
    const table = await db.createTable("events", [{ id: 1, v: "a" }]);
    for (let i = 2; i <= 5; i += 1) await table.add([{ id: i, v: "b" }], { mode: "overwrite" });
    await (await table.tags()).create("keep", 2);
    table.close();

    const prefix = `cli-lance-${ulid().toLowerCase()}/events.lance`;
    const store = createGcsStore({ bucket, prefix, endpoint });
    const tableDir = join(local, "events.lance");
    for (const file of await readdir(tableDir, { recursive: true, withFileTypes: true })) {
      if (!file.isFile()) continue;
      const path = join(file.parentPath, file.name);
      await store.put(relative(tableDir, path), await readFile(path));
    }

    // A reader holds version 3 with a lease while the cleanup runs (invariant 1).
    const url = `gs://${bucket}/${prefix}`;
    const lease = await run([
      "lease",
      "acquire",
      url,
      "3",
      "--ttl",
      "10m",
      "--endpoint",
      endpoint,
      "--json",
    ]);
    expect(lease.code, lease.stderr).toBe(0);

    const cleanup = await run([
      "cleanup",
      url,
      "--retain",
      "1",
      "--min-age",
      "0s",
      "--endpoint",
      endpoint,
      "--json",
    ]);
    expect(cleanup.code, cleanup.stderr).toBe(0);
    const doc = cleanup.json();
    checkShape(doc);
    expect(doc.format).toBe("lance");
    const stats = doc.stats as { retired: { version: number }[] };
    expect(stats.retired.map((r) => r.version).sort()).toEqual([1, 4]);

    // Copy what the bucket holds now back to disk and let LanceDB read it.
    const back = join(work, "lance-back");
    for await (const meta of listAll(store, "")) {
      const got = await store.get(meta.key);
      const path = join(back, "events.lance", meta.key);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, got!.body);
    }
    const after = await (await lancedb.connect(back)).openTable("events");
    expect((await after.listVersions()).map((v) => v.version)).toEqual([2, 3, 5]);
    expect(await after.countRows()).toBe(1);
    await after.checkout(3);
    expect(await after.countRows()).toBe(1);
    after.close();
  });
});
