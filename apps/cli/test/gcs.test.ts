// The CLI on gs:// URLs against a real fake-gcs-server (tooling/services/gcs-start.sh): the
// doctor's report of what the bucket guarantees, and a small cleanup that keeps a leased
// version. A missing emulator fails these tests with instructions: they never skip.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gcsError, startFaultProxy } from "@holdfast/fault-proxy";
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
