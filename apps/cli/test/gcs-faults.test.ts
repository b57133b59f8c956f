// The CLI on gs:// through @holdfast/fault-proxy in front of a real fake-gcs-server: requests
// that reach the store twice, and single lost answers that a re-issue or read-back settles
// (docs/guarantees.md, "Conditional requests" and "What each backend repeats"). A missing
// emulator fails these tests with instructions: they never skip.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FaultProxy, gcsError, repeatWrites, startFaultProxy } from "@holdfast/fault-proxy";
import { ulid } from "ulid";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readServiceEnv } from "./e2e-harness.js";
import { run } from "./run.js";

const service = readServiceEnv("gcs");
const endpoint = service.STORAGE_EMULATOR_HOST!;
const bucket = service.HOLDFAST_GCS_BUCKET!;

let work: string;
let proxy: FaultProxy;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "holdfast-cli-gcs-faults-"));
  await writeFile(join(work, "a.bin"), "alpha");
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});
beforeEach(async () => {
  proxy = await startFaultProxy({ target: endpoint });
});
afterEach(() => proxy.close());

function freshUrl(label: string): string {
  return `gs://${bucket}/cli-${label}-${ulid().toLowerCase()}`;
}

/** Straight to the emulator (setup and observation). */
const direct = ["--endpoint", endpoint];
/** Through the proxy (the command under test). */
const via = () => ["--endpoint", proxy.url];

/** Uploads (objects.insert) of objects whose name contains `fragment` (URL-encoded). */
function uploadOf(fragment: string): RegExp {
  return new RegExp(`^/upload/storage/v1/b/[^/]+/o\\?(?:.*&)?name=[^&]*${fragment}`);
}

/** Requests on one object whose name contains `fragment` (get, download, delete). */
function objectOf(fragment: string): RegExp {
  return new RegExp(`^(?:/download)?/storage/v1/b/[^/]+/o/[^?]*${fragment}`);
}

async function versionsOf(url: string): Promise<number[]> {
  const answer = await run(["versions", url, ...direct, "--json"]);
  expect(answer.code, answer.stderr).toBe(0);
  return (answer.json().versions as { version: number }[]).map((v) => v.version);
}

async function commitDirect(url: string, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) {
    const commit = await run(["commit", url, "a.bin", ...direct], { cwd: work });
    expect(commit.code, commit.stderr).toBe(0);
  }
}

describe("a request that reaches the store twice is this writer's (gs://)", () => {
  it("C8 a repeated create-only upload of a commit is this writer's on gcs: one version, exit 0", async () => {
    const url = freshUrl("rr-commit");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    const manifest = uploadOf("_versions%2Fmain%2F0+1\\.json");
    proxy.addRule({ method: "POST", path: manifest, action: { type: "repeat" } });

    const commit = await run(["commit", url, "a.bin", ...via(), "--json"], { cwd: work });

    expect(commit.code, commit.stderr).toBe(0);
    expect(commit.json()).toMatchObject({ ok: true, command: "commit", version: 1 });
    const uploads = proxy.requests.filter((r) => r.method === "POST" && manifest.test(r.path));
    expect(uploads.map((r) => [r.action, r.firstStatus, r.status])).toEqual([["repeat", 200, 412]]);
    expect(await versionsOf(url)).toEqual([1]);
  });

  it("a repeated tag create and tag update are this writer's: exit 0, the tag names what was asked", async () => {
    const url = freshUrl("rr-tag");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 2);
    for (const kind of ["create", "if-match"] as const) proxy.addRule(repeatWrites("gcs", kind));

    const created = await run(["tag", "create", url, "keep", "1", ...via(), "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const updated = await run(["tag", "update", url, "keep", "2", ...via(), "--json"]);
    expect(updated.code, updated.stderr).toBe(0);

    expect(proxy.requests.filter((r) => r.action === "repeat").length).toBeGreaterThan(0);
    const tags = await run(["tag", "list", url, ...direct, "--json"]);
    expect(tags.json().tags).toEqual([
      expect.objectContaining({ name: "keep", target: { branch: "main", version: 2 } }),
    ]);
  });

  it("a repeated lease acquire is this writer's: exit 0, and its handle releases it", async () => {
    const url = freshUrl("rr-lease");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 1);
    proxy.addRule(repeatWrites("gcs", "create"));

    const acquired = await run(["lease", "acquire", url, "1", "--ttl", "10m", ...via(), "--json"]);
    expect(acquired.code, acquired.stderr).toBe(0);
    expect(proxy.requests.filter((r) => r.action === "repeat").length).toBeGreaterThan(0);
    proxy.clearRules();
    const handle = JSON.stringify(acquired.json().handle);
    const released = await run(["lease", "release", url, "--handle", handle, ...direct]);
    expect(released.code, released.stderr).toBe(0);
    const leases = await run(["lease", "list", url, ...direct, "--json"]);
    expect(leases.json().leases).toEqual([]);
  });

  it("a cleanup whose every write is repeated completes (exit 0) and leaves no record blocking the kept version", async () => {
    const url = freshUrl("rr-cleanup");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 3);
    for (const kind of ["create", "if-match", "put", "delete"] as const) {
      proxy.addRule(repeatWrites("gcs", kind));
    }

    const cleanup = await run([
      "cleanup",
      url,
      "--retain",
      "1",
      "--min-age",
      "0s",
      ...via(),
      "--json",
    ]);

    expect(cleanup.code, cleanup.stderr).toBe(0);
    expect(proxy.requests.filter((r) => r.action === "repeat").length).toBeGreaterThan(0);
    expect(await versionsOf(url)).toEqual([3]);
    // No draining record left behind: a lease on the kept version is admitted at once.
    const lease = await run(["lease", "acquire", url, "3", "--ttl", "1m", ...direct, "--json"]);
    expect(lease.code, lease.stderr).toBe(0);
  });
});

describe("single lost answers that a re-issue or read-back settles (gs://)", () => {
  it("lease release after a dropped answer exits 0 (an unconditional delete is re-issued)", async () => {
    const url = freshUrl("lost-release");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 1);
    const acquired = await run(["lease", "acquire", url, "1", "--ttl", "10m", ...direct, "--json"]);
    expect(acquired.code, acquired.stderr).toBe(0);
    const lease = objectOf("_holdfast%2Fleases%2F");
    proxy.addRule({ method: "DELETE", path: lease, nth: 1, action: { type: "drop-response" } });

    const handle = JSON.stringify(acquired.json().handle);
    const released = await run(["lease", "release", url, "--handle", handle, ...via()]);

    expect(released.code, released.stderr).toBe(0);
    expect(
      proxy.requests
        .filter((r) => r.method === "DELETE" && lease.test(r.path))
        .map((r) => r.action),
    ).toEqual(["drop-response", "forward"]);
    const leases = await run(["lease", "list", url, ...direct, "--json"]);
    expect(leases.json().leases).toEqual([]);
  });

  it("lease release answered 500 after it applied exits 0", async () => {
    const url = freshUrl("lost-release-500");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 1);
    const acquired = await run(["lease", "acquire", url, "1", "--ttl", "10m", ...direct, "--json"]);
    const lease = objectOf("_holdfast%2Fleases%2F");
    proxy.addRule({
      method: "DELETE",
      path: lease,
      nth: 1,
      action: gcsError(500, "backendError", { after: "forward" }),
    });
    const handle = JSON.stringify(acquired.json().handle);
    const released = await run(["lease", "release", url, "--handle", handle, ...via()]);
    expect(released.code, released.stderr).toBe(0);
  });

  it("a cleanup whose storage-time probe upload and a retired file's delete lose their answers completes (exit 0)", async () => {
    const url = freshUrl("lost-cleanup");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 3);
    proxy.addRule({
      method: "POST",
      path: uploadOf("_holdfast%2Fclock%2F"),
      nth: 1,
      action: { type: "drop-response" },
    });
    proxy.addRule({
      method: "DELETE",
      path: objectOf("_versions%2Fmain%2F"),
      nth: 1,
      action: { type: "drop-response" },
    });

    const cleanup = await run([
      "cleanup",
      url,
      "--retain",
      "1",
      "--min-age",
      "0s",
      ...via(),
      "--json",
    ]);

    expect(cleanup.code, cleanup.stderr).toBe(0);
    expect(proxy.requests.filter((r) => r.action === "drop-response")).toHaveLength(2);
    expect(await versionsOf(url)).toEqual([3]);
  });
});

describe("the store probe of a gs:// command", () => {
  it("read-only holdfast versions on gs:// sends no write probe (no upload, no delete)", async () => {
    const url = freshUrl("ro");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    await commitDirect(url, 1);

    const versions = await run(["versions", url, ...via(), "--json"]);

    expect(versions.code, versions.stderr).toBe(0);
    expect(proxy.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("a lost answer on the probe's own delete is no unknown outcome of the command (exit 0)", async () => {
    const url = freshUrl("probe-lost");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    proxy.addRule({
      method: "DELETE",
      path: objectOf("_holdfast%2Fprobe%2F"),
      action: { type: "drop-response" },
    });

    const commit = await run(["commit", url, "a.bin", ...via(), "--json"], { cwd: work });

    expect(commit.code, commit.stderr).toBe(0);
    expect(proxy.requests.some((r) => r.action === "drop-response")).toBe(true);
  });

  it("a repeated probe upload is not 'unsupported' (exit 0)", async () => {
    const url = freshUrl("probe-repeat");
    expect((await run(["init", url, ...direct])).code).toBe(0);
    proxy.addRule({ ...repeatWrites("gcs", "create"), path: uploadOf("_holdfast%2Fprobe%2F") });

    const commit = await run(["commit", url, "a.bin", ...via(), "--json"], { cwd: work });

    expect(commit.code, commit.stderr).toBe(0);
    expect(proxy.requests.filter((r) => r.action === "repeat").length).toBeGreaterThan(0);
  });
});
