import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { readManifest } from "@holdfast/dataset";
import { createContext, leaseExpiresAt } from "@holdfast/protocol";
import {
  acquireCleanupLock,
  CLEANUP_LOCK_KEY,
  commit,
  drain,
  readCleanupLock,
  seal,
} from "@holdfast/retirement";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkShape } from "./e2e-harness.js";
import { run } from "./run.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "holdfast-ops-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A local dataset with `n` versions on main. */
async function dataset(n: number): Promise<string> {
  const ds = join(dir, "ds");
  expect((await run(["init", ds])).code).toBe(0);
  await writeFile(join(dir, "f.txt"), "x");
  for (let i = 0; i < n; i += 1)
    expect((await run(["commit", ds, "f.txt"], { cwd: dir })).code).toBe(0);
  return ds;
}

function contextOf(ds: string) {
  return createContext(createLocalStore({ root: ds }));
}

async function drained(ds: string, versions: number[]) {
  const ctx = contextOf(ds);
  const entries = [];
  for (const version of versions) {
    entries.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
  }
  return {
    ctx,
    handle: await drain(ctx, { branch: "main", versions: entries, owner: "01DEADCLEANER" }),
  };
}

describe("--help points to docs/operations.md", () => {
  it("the program and every command that can get stuck", async () => {
    for (const args of [
      ["--help"],
      ["cleanup", "--help"],
      ["recover", "--help"],
      ["status", "--help"],
      ["lease", "acquire", "--help"],
    ]) {
      const r = await run(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("docs/operations.md");
    }
    const recover = await run(["recover", "--help"]);
    expect(recover.stdout).toMatch(/--abandon <id>/);
    expect(recover.stdout).toMatch(/committed retirement is refused/);
  });
});

describe("init on a regular file", () => {
  it("says it is a file, exits 2, and leaves the file alone", async () => {
    const file = join(dir, "file");
    await writeFile(file, "not a dataset");
    const r = await run(["init", file, "--json"]);
    expect(r.code).toBe(2);
    expect(r.json()).toMatchObject({
      ok: false,
      error: { kind: "invalid-input", code: "NOT_A_DIRECTORY" },
    });
    const text = await run(["init", file]);
    expect(text.stderr).toMatch(/is a file, not a dataset directory/);
    expect(text.stderr).not.toMatch(/already exists/);
  });
});

describe("one cleanup at a time", () => {
  it("a second cleanup exits 3 naming the owner; --concurrent runs", async () => {
    const ds = await dataset(3);
    await acquireCleanupLock(contextOf(ds), { owner: "01OTHERCLEANER" });
    const r = await run(["cleanup", ds, "--retain", "1", "--min-age", "0", "--json"]);
    expect(r.code).toBe(3);
    expect(r.json()).toMatchObject({ error: { kind: "conflict", code: "CLEANUP_RUNNING" } });
    expect((r.json().error as { message: string }).message).toMatch(
      /another cleanup is running \(owner 01OTHERCLEANER, since /,
    );
    const status = await run(["status", ds, "--json"]);
    checkShape(status.json());
    expect(status.json().cleanupLock).toMatchObject({ owner: "01OTHERCLEANER", stale: false });
    const ok = await run([
      "cleanup",
      ds,
      "--retain",
      "1",
      "--min-age",
      "0",
      "--concurrent",
      "--json",
    ]);
    expect(ok.code).toBe(0);
    expect((ok.json().stats as { retired: unknown[] }).retired).toHaveLength(2);
  });
});

describe("a tag file the local backend cannot name", () => {
  // Invariant 8 on a real file system: `_refs/tags/keep.json.hfobj` (the old layout's
  // suffix) names version 1. Skipping it would let cleanup delete the version it names.
  it("invariant 8: stops the cleanup (exit 2) naming the file; every version stays", async () => {
    const ds = await dataset(3);
    const tag = JSON.stringify({ schema: 1, name: "keep", target: { branch: "main", version: 1 } });
    await mkdir(join(ds, "_refs", "tags"), { recursive: true });
    await writeFile(join(ds, "_refs", "tags", "keep.json.hfobj"), tag);
    const r = await run(["cleanup", ds, "--retain", "1", "--min-age", "0", "--json"]);
    expect(r.code).toBe(2);
    expect(r.json()).toMatchObject({
      error: {
        kind: "invalid-input",
        code: "LOCAL_UNMAPPABLE_NAME",
        key: "_refs/tags/keep.json.hfobj",
      },
    });
    const versions = await readdir(join(ds, "_versions", "main"));
    expect(versions).toHaveLength(3);
    expect(await readdir(join(ds, "_holdfast"))).not.toContain("retirement");
  });
});

describe("recover after a killed cleanup", () => {
  /**
   * What a killed cleanup leaves: its lock as it last wrote it `ageMs` ago, never renewed
   * since. The lock file's mtime (its Last-Modified on a local store) is set back instead of
   * sleeping, so how long the CLI takes to start does not decide whether the lock has
   * cleared yet: it clears `boundMs` + 1 s of precision after that stamp.
   */
  async function deadLock(ds: string, { boundMs, ageMs }: { boundMs: number; ageMs: number }) {
    const ctx = contextOf(ds);
    await acquireCleanupLock(ctx, { owner: "01DEADCLEANER", boundMs });
    const stamp = (Date.now() - ageMs) / 1000;
    await utimes(join(ds, CLEANUP_LOCK_KEY), stamp, stamp);
    const lock = await readCleanupLock(ctx);
    const clearsAt = leaseExpiresAt(
      lock!.lastModified,
      boundMs,
      ctx.store.capabilities.timestampPrecisionMs,
    );
    return {
      ctx,
      lastHeartbeat: lock!.lastModified.toISOString(),
      clearsAt: clearsAt.toISOString(),
    };
  }

  // Past 1.5 renewal intervals (a third of the bound each) plus the 1 s precision: a live
  // holder would have renewed. K1: 20 s before the lock clears; K2: 3-4 s, which it waits.
  const LONG_DEAD = { boundMs: 60_000, ageMs: 40_000 };
  const JUST_DEAD = { boundMs: 9_000, ageMs: 6_000 };

  it("K1 --no-wait refuses at once (exit 3) naming the holder, that it stopped renewing, its last heartbeat and when the lock clears", async () => {
    const ds = await dataset(2);
    const { ctx, lastHeartbeat, clearsAt } = await deadLock(ds, LONG_DEAD);
    const r = await run(["recover", ds, "--no-wait", "--json"]);
    expect(r.code).toBe(3);
    checkShape(r.json());
    expect(r.json()).toMatchObject({
      error: { kind: "conflict", code: "CLEANUP_RUNNING", key: CLEANUP_LOCK_KEY },
    });
    const message = (r.json().error as { message: string }).message;
    expect(message).toContain("owner 01DEADCLEANER");
    expect(message).toContain("stopped renewing");
    expect(message).toContain(`last heartbeat ${lastHeartbeat} (storage time`);
    expect(message).toContain(`clears at ${clearsAt}`);
    const text = await run(["recover", ds, "--no-wait"]);
    expect(text.code).toBe(3);
    expect(text.stderr).toContain(`clears at ${clearsAt}`);
    // Refused before anything was written: the dead holder's lock is as it left it.
    expect((await readCleanupLock(ctx))?.owner).toBe("01DEADCLEANER");
  });

  it("K2 by default it says who holds the lock and when it clears, waits for it, then recovers (exit 0)", async () => {
    const ds = await dataset(2);
    const { ctx, lastHeartbeat, clearsAt } = await deadLock(ds, JUST_DEAD);
    const r = await run(["recover", ds, "--json"]);
    expect(r.code, r.stdout).toBe(0);
    checkShape(r.json());
    expect(r.json()).toMatchObject({
      waitedForLock: { owner: "01DEADCLEANER", lastHeartbeat, clearsAt, stoppedRenewing: true },
    });
    expect(await readCleanupLock(ctx)).toBeNull();
    await deadLock(ds, JUST_DEAD);
    const text = await run(["recover", ds]);
    expect(text.code).toBe(0);
    expect(text.stderr).toMatch(
      /held by owner 01DEADCLEANER, which stopped renewing it: last heartbeat .* the lock clears at .*Waiting for it \(--no-wait refuses at once\)/,
    );
  });
});

describe("recover --abandon", () => {
  it("ends a live drain now; a committed retirement is refused (exit 1)", async () => {
    const ds = await dataset(3);
    const { ctx, handle } = await drained(ds, [1]);
    const status = await run(["status", ds]);
    expect(status.stdout).toContain(handle.record.opId);
    const leaseBlocked = await run(["lease", "acquire", ds, "1", "--ttl", "30s"]);
    expect(leaseBlocked.code).toBe(3);
    const r = await run(["recover", ds, "--abandon", handle.record.opId, "--json"]);
    expect(r.code).toBe(0);
    checkShape(r.json());
    expect(r.json()).toMatchObject({ abandoned: { previousState: "draining", versions: [1] } });
    expect((await run(["lease", "acquire", ds, "1", "--ttl", "30s"])).code).toBe(0);

    const committed = await commit(ctx, await seal(ctx, (await drained(ds, [2])).handle));
    const refused = await run(["recover", ds, "--abandon", committed.record.opId, "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json()).toMatchObject({
      error: { kind: "refused", code: "RETIREMENT_COMMITTED" },
    });
  });
});

describe("branch delete with live leases", () => {
  it("is refused (exit 3) unless --force", async () => {
    const ds = await dataset(1);
    expect((await run(["branch", "create", ds, "dev", "--from", "1"])).code).toBe(0);
    await writeFile(join(dir, "g.txt"), "y");
    expect((await run(["commit", ds, "g.txt", "--branch", "dev"], { cwd: dir })).code).toBe(0);
    expect((await run(["lease", "acquire", ds, "1", "--branch", "dev", "--ttl", "10m"])).code).toBe(
      0,
    );
    const refused = await run(["branch", "delete", ds, "dev", "--json"]);
    expect(refused.code).toBe(3);
    expect(refused.json()).toMatchObject({ error: { code: "BRANCH_HAS_LEASES" } });
    expect((await run(["branch", "delete", ds, "dev", "--force"])).code).toBe(0);
  });
});
