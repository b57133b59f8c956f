import { mkdtemp, readdir, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonShapes } from "@holdfast/api-shapes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deleteRateOptions } from "../src/commands/cleanup-run.js";
import { run } from "./run.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "holdfast-cli-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("conventions", () => {
  it("prints help with examples and exit codes", async () => {
    const top = await run(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/Exit codes: 0 ok/);
    const init = await run(["init", "--help"]);
    expect(init.code).toBe(0);
    expect(init.stdout).toMatch(/Examples:\n {2}\$ holdfast init/);
    expect(init.stdout).toMatch(/--json/);
  });

  it("unknown flags are usage errors with a hint, in text and JSON", async () => {
    const text = await run(["init", join(dir, "ds"), "--frobnicate"]);
    expect(text.code).toBe(2);
    expect(text.stderr).toMatch(
      /^holdfast: error: unknown option '--frobnicate'\nhint: run: holdfast init --help\n$/,
    );
    const json = await run(["init", join(dir, "ds"), "--frobnicate", "--json"]);
    expect(json.code).toBe(2);
    expect(json.json()).toMatchObject({
      ok: false,
      command: "init",
      exitCode: 2,
      error: { kind: "invalid-input", code: "commander.unknownOption" },
    });
    expect(await readdir(dir)).toEqual([]);
  });

  it("a group without its subcommand is a usage error", async () => {
    const r = await run(["lease"]);
    expect(r.code).toBe(2);
  });

  it("no colour without a TTY, and NO_COLOR wins", async () => {
    const r = await run(["versions", join(dir, "missing")]);
    expect(r.stderr).not.toContain("\x1b[");
  });
});

describe("init, commit, versions on a local directory", () => {
  it("builds a dataset and lists its versions", async () => {
    const ds = join(dir, "ds");
    const init = await run(["init", ds, "--json"]);
    expect(init.code).toBe(0);
    expect(init.json()).toMatchObject({
      ok: true,
      command: "init",
      backend: "local",
      defaultBranch: "main",
    });

    await writeFile(join(dir, "a.txt"), "hello");
    await writeFile(join(dir, "b.txt"), "world!");
    const c1 = await run(["commit", ds, "a.txt", "b.txt", "--json"], { cwd: dir });
    expect(c1.code).toBe(0);
    expect(c1.json()).toMatchObject({ ok: true, command: "commit", branch: "main", version: 1 });
    expect((c1.json().files as { size: number }[]).map((f) => f.size)).toEqual([5, 6]);
    const c2 = await run(["commit", ds, "a.txt"], { cwd: dir });
    expect(c2.code).toBe(0);
    expect(c2.stdout).toMatch(/Committed version 2 on main/);

    const versions = await run(["versions", ds, "--json"]);
    expect(versions.code).toBe(0);
    const list = versions.json().versions as { version: number }[];
    expect(list.map((v) => v.version)).toEqual([1, 2]);

    const again = await run(["init", ds, "--json"]);
    expect(again.code).toBe(3);
    expect(again.json()).toMatchObject({ ok: false, error: { kind: "conflict" } });
  });

  it("a missing file writes nothing", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    const before = await readdir(join(ds), { recursive: true });
    const r = await run(["commit", ds, "nope.bin"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no such file: nope\.bin/);
    expect(await readdir(join(ds), { recursive: true })).toEqual(before);
  });

  it("a bad branch name is rejected before anything is written", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    await writeFile(join(dir, "a.txt"), "x");
    const before = await readdir(join(ds), { recursive: true });
    const r = await run(["commit", ds, "a.txt", "--branch", "../evil", "--json"], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.json()).toMatchObject({ error: { kind: "invalid-input" } });
    expect(await readdir(join(ds), { recursive: true })).toEqual(before);
  });

  it("commands on a missing dataset fail without creating it", async () => {
    const ds = join(dir, "nothing-here");
    const r = await run(["versions", ds]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no dataset at/);
    expect(r.stderr).toMatch(/hint: create one with: holdfast init/);
    expect(await readdir(dir)).toEqual([]);
  });

  it("doctor leaves no trace in a directory it had to create, and keeps an existing one", async () => {
    const fresh = join(dir, "fresh");
    expect((await run(["doctor", fresh])).code).toBe(0);
    expect(await readdir(dir)).toEqual([]);
    await writeFile(join(dir, "mine.txt"), "keep");
    expect((await run(["doctor", dir])).code).toBe(0);
    expect(await readdir(dir)).toContain("mine.txt");
  });

  it("doctor reports a local store as supported", async () => {
    const r = await run(["doctor", join(dir, "ds"), "--json"]);
    expect(r.code).toBe(0);
    const doc = r.json();
    expect(doc).toMatchObject({
      ok: true,
      command: "doctor",
      backend: "local",
      verdict: "supported",
    });
    const ids = (doc.checks as { id: string; status: string }[]).map((c) => `${c.id}:${c.status}`);
    expect(ids).toContain("create-only:pass");
    expect(ids).toContain("if-match:pass");
    expect(ids).toContain("batch-delete:pass");
  });
});

describe("leases, tags and branches on a local directory", () => {
  async function dataset(versions: number): Promise<string> {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    await writeFile(join(dir, "f.txt"), "data");
    for (let i = 0; i < versions; i += 1)
      expect((await run(["commit", ds, "f.txt"], { cwd: dir })).code).toBe(0);
    return ds;
  }

  it("acquires, lists and releases a lease", async () => {
    const ds = await dataset(2);
    const acquired = await run(["lease", "acquire", ds, "1", "--ttl", "60s", "--json"]);
    expect(acquired.code).toBe(0);
    const lease = acquired.json().lease as { leaseId: string; ttlMs: number; expiresAt: string };
    expect(lease.ttlMs).toBe(60_000);
    const listed = await run(["lease", "list", ds, "--json"]);
    expect(listed.json().leases).toMatchObject([
      { leaseId: lease.leaseId, version: 1, active: true },
    ]);
    const handle = JSON.stringify(acquired.json().handle);
    expect((await run(["lease", "release", ds, "--handle", handle])).code).toBe(0);
    expect((await run(["lease", "list", ds, "--json"])).json().leases).toEqual([]);
    const again = await run(["lease", "release", ds, "--handle", handle]);
    expect(again.code).toBe(0); // idempotent for its holder
  });

  it("invariant 1 lease release needs the holder's handle: the listing alone releases nothing", async () => {
    const ds = await dataset(1);
    const acquired = await run(["lease", "acquire", ds, "1", "--ttl", "60s", "--json"]);
    const handle = acquired.json().handle as Record<string, unknown> & { secret: string };
    expect(handle.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const listed = await run(["lease", "list", ds, "--json"]);
    expect(listed.stdout).not.toContain(handle.secret);
    const leaseId = handle.leaseId as string;
    // By id alone: refused (exit 2), the lease stays.
    const byId = await run(["lease", "release", ds, leaseId, "--json"]);
    expect(byId.code).toBe(2);
    // A handle forged from the listing with a made-up secret: refused, the lease stays.
    const forged = JSON.stringify({ ...handle, secret: "A".repeat(43) });
    const refused = await run(["lease", "release", ds, "--handle", forged, "--json"]);
    expect(refused.code).toBe(2);
    expect(refused.json().error).toMatchObject({
      kind: "invalid-input",
      code: "INVALID_LEASE_HANDLE",
    });
    expect(refused.stdout + refused.stderr).not.toContain(handle.secret);
    expect((await run(["lease", "list", ds, "--json"])).json().leases).toHaveLength(1);
    // From a file holding the whole acquire document.
    await writeFile(join(dir, "lease.json"), acquired.stdout);
    expect(
      (await run(["lease", "release", ds, "--handle", `@${join(dir, "lease.json")}`])).code,
    ).toBe(0);
    expect((await run(["lease", "list", ds, "--json"])).json().leases).toEqual([]);
  });

  it("L3 lease renew renews from the handle and prints the renewed one, which the next call takes", async () => {
    const ds = await dataset(1);
    const acquired = await run(["lease", "acquire", ds, "1", "--ttl", "60s", "--json"]);
    const handle = acquired.json().handle as { leaseId: string; renewal: number; secret: string };
    const renewed = await run(["lease", "renew", ds, "--handle", JSON.stringify(handle), "--json"]);
    expect(renewed.code, renewed.stderr).toBe(0);
    const doc = JsonShapes["lease renew"].parse(renewed.json());
    expect(doc.handle).toMatchObject({ leaseId: handle.leaseId, renewal: 1 });
    expect(doc.lease).toMatchObject({ leaseId: handle.leaseId, active: true });
    await writeFile(join(dir, "renewed.json"), renewed.stdout);
    const again = await run(["lease", "renew", ds, "--handle", `@${join(dir, "renewed.json")}`]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Renewed lease ${handle.leaseId}`);
    expect(again.stdout + again.stderr).toContain(handle.secret);
  });

  it("lease release --force removes a lease by its id whoever holds it", async () => {
    const ds = await dataset(1);
    const acquired = await run(["lease", "acquire", ds, "1", "--ttl", "60s", "--json"]);
    const leaseId = (acquired.json().lease as { leaseId: string }).leaseId;
    expect((await run(["lease", "release", ds, leaseId, "--force"])).code).toBe(0);
    expect((await run(["lease", "list", ds, "--json"])).json().leases).toEqual([]);
    expect((await run(["lease", "release", ds, leaseId, "--force"])).code).toBe(1);
  });

  it("rejects bad TTLs and missing versions", async () => {
    const ds = await dataset(1);
    for (const ttl of ["60", "10ms", "forever"]) {
      const r = await run(["lease", "acquire", ds, "1", "--ttl", ttl, "--json"]);
      expect(r.code, ttl).toBe(2);
    }
    const missing = await run(["lease", "acquire", ds, "9", "--ttl", "10s", "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.json()).toMatchObject({ error: { kind: "not-found" } });
    expect((await run(["lease", "list", ds, "--json"])).json().leases).toEqual([]);
  });

  it("creates, moves, lists and deletes tags; duplicates conflict", async () => {
    const ds = await dataset(3);
    expect((await run(["tag", "create", ds, "v1", "1"])).code).toBe(0);
    const dup = await run(["tag", "create", ds, "v1", "2", "--json"]);
    expect(dup.code).toBe(3);
    expect((await run(["tag", "update", ds, "v1", "2"])).code).toBe(0);
    const listed = await run(["tag", "list", ds, "--json"]);
    expect(listed.json().tags).toEqual([{ name: "v1", target: { branch: "main", version: 2 } }]);
    expect((await run(["tag", "delete", ds, "v1"])).code).toBe(0);
    expect((await run(["tag", "list", ds, "--json"])).json().tags).toEqual([]);
    const slash = await run(["tag", "create", ds, "a/b", "1", "--json"]);
    expect(slash.code).toBe(2);
  });

  it("creates a branch, commits to it, lists and deletes it", async () => {
    const ds = await dataset(2);
    expect((await run(["branch", "create", ds, "exp", "--from", "1"])).code).toBe(0);
    const c = await run(["commit", ds, "f.txt", "--branch", "exp", "--json"], { cwd: dir });
    expect(c.code).toBe(0);
    expect(c.json()).toMatchObject({ branch: "exp", version: 1 });
    const listed = await run(["branch", "list", ds, "--json"]);
    expect(listed.json().branches).toMatchObject([
      { name: "main", default: true, latestVersion: 2 },
      { name: "exp", parent: { branch: "main", version: 1 }, latestVersion: 1 },
    ]);
    const orphan = await run(["commit", ds, "f.txt", "--branch", "nobranch"], { cwd: dir });
    expect(orphan.code).toBe(1);
    expect(orphan.stderr).toMatch(/branch nobranch does not exist/);
    expect((await run(["branch", "delete", ds, "exp"])).code).toBe(0);
    expect((await run(["branch", "list", ds, "--json"])).json().branches).toHaveLength(1);
  });
});

describe("cleanup, recover, status on a local directory", () => {
  it("retires by policy, keeps tagged, leased, forked and latest versions, with reasons", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    await writeFile(join(dir, "f.txt"), "data");
    for (let i = 0; i < 8; i += 1)
      expect((await run(["commit", ds, "f.txt"], { cwd: dir })).code).toBe(0);
    expect((await run(["tag", "create", ds, "keep", "2"])).code).toBe(0);
    expect((await run(["branch", "create", ds, "exp", "--from", "3"])).code).toBe(0);
    expect((await run(["lease", "acquire", ds, "4", "--ttl", "5m"])).code).toBe(0);

    const plan = await run([
      "cleanup",
      ds,
      "--retain",
      "2",
      "--min-age",
      "0",
      "--dry-run",
      "--json",
    ]);
    expect(plan.code).toBe(0);
    const planned = plan.json().stats as { dryRun: boolean; retired: { version: number }[] };
    expect(planned.dryRun).toBe(true);
    expect(planned.retired.map((v) => v.version).sort()).toEqual([1, 5, 6]);
    expect((await run(["versions", ds, "--json"])).json().versions).toHaveLength(8);

    const human = await run(["cleanup", ds, "--retain", "2", "--min-age", "0", "--progress"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Retired 3 version\(s\):\n {2}main: 1, 5-6/);
    expect(human.stdout).toMatch(/main\s+2\s+tag: a tag names it/);
    expect(human.stdout).toMatch(/main\s+4\s+lease:/);
    expect(human.stdout).toMatch(/main\s+3\s+branch-lineage:/);
    expect(human.stdout).toMatch(/Requests: \d+ \(list \d+, get \d+/);
    expect(human.stderr).toMatch(/holdfast: retiring/);
    const left = (await run(["versions", ds, "--json"])).json().versions as { version: number }[];
    expect(left.map((v) => v.version)).toEqual([2, 3, 4, 7, 8]);

    const status = await run(["status", ds, "--json"]);
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({ retirements: [], intents: [], leases: [{ version: 4 }] });
    const recovered = await run(["recover", ds, "--json"]);
    expect(recovered.code).toBe(0);
    expect(recovered.json()).toMatchObject({ ok: true, command: "recover", retired: [] });
  });

  it("cleanup without a policy is a usage error", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    const r = await run(["cleanup", ds]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/hint: pass at least one of --older-than/);
    for (const bad of [
      ["--older-than", "7"],
      ["--retain", "0"],
      ["--before-version", "x"],
      ["--branch", "a/b", "--retain", "1"],
    ]) {
      expect((await run(["cleanup", ds, ...bad])).code, bad.join(" ")).toBe(2);
    }
  });
});

describe("cleanup and recover pace their deletes (docs/protocol.md §6, Cleanup 9)", () => {
  it("--max-deletes-per-second and --delete-concurrency become the run's options", () => {
    expect(deleteRateOptions({ maxDeletesPerSecond: "3500", deleteConcurrency: "4" })).toEqual({
      maxDeletesPerSecond: 3500,
      deleteConcurrency: 4,
    });
    expect(deleteRateOptions({})).toEqual({});
  });

  it("a run with both flags retires; a bad value is a usage error that writes nothing", async () => {
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    await writeFile(join(dir, "f.txt"), "data");
    for (let i = 0; i < 4; i += 1)
      expect((await run(["commit", ds, "f.txt"], { cwd: dir })).code).toBe(0);
    const policy = ["--retain", "1", "--min-age", "0"];
    for (const bad of [
      ["--max-deletes-per-second", "0"],
      ["--max-deletes-per-second", "fast"],
      ["--delete-concurrency", "0"],
    ]) {
      const refused = await run(["cleanup", ds, ...policy, ...bad]);
      expect(refused.code, bad.join(" ")).toBe(2);
      expect(refused.stderr).toMatch(new RegExp(`invalid ${bad[0]}`));
      expect((await run(["recover", ds, ...bad])).code, `recover ${bad.join(" ")}`).toBe(2);
    }
    expect((await run(["versions", ds, "--json"])).json().versions).toHaveLength(4);
    const paced = ["--max-deletes-per-second", "100000", "--delete-concurrency", "2"];
    const done = await run(["cleanup", ds, ...policy, ...paced, "--json"]);
    expect(done.code).toBe(0);
    expect((await run(["versions", ds, "--json"])).json().versions).toHaveLength(1);
    expect((await run(["recover", ds, ...paced, "--json"])).code).toBe(0);
  });
});

describe("a cleanup in flight", () => {
  it("refuses new leases on a draining version (exit 3) and status shows the retirement; recover clears it", async () => {
    const { createLocalStore } = await import("@holdfast/backends-local");
    const { createContext } = await import("@holdfast/protocol");
    const { readManifest } = await import("@holdfast/dataset");
    const { drain } = await import("@holdfast/retirement");
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    await writeFile(join(dir, "f.txt"), "data");
    for (let i = 0; i < 3; i += 1)
      expect((await run(["commit", ds, "f.txt"], { cwd: dir })).code).toBe(0);

    // A cleaner that drained version 1 and then vanished (its ownership bound is 60 s).
    const ctx = createContext(createLocalStore({ root: ds }));
    const manifest = await readManifest(ctx, "main", 1);
    await drain(ctx, {
      branch: "main",
      versions: [{ version: 1, manifestEtag: manifest.etag }],
      owner: ctx.ids.next(),
      ownershipBoundMs: 60_000,
    });

    const refused = await run(["lease", "acquire", ds, "1", "--ttl", "30s", "--json"]);
    expect(refused.code).toBe(3);
    expect(refused.json()).toMatchObject({
      ok: false,
      error: { kind: "refused", code: "RETIRING" },
    });
    const status = await run(["status", ds, "--json"]);
    expect(status.json()).toMatchObject({
      retirements: [{ branch: "main", state: "draining", versions: [1], abandoned: false }],
    });
    expect(await run(["status", ds]).then((r) => r.stdout)).toMatch(
      /Retirements in flight \(1\)\nID\s+BRANCH\s+STATE/,
    );

    // Past its bound the drain no longer blocks, and recover removes it. The bound passes by
    // setting the record's last write (its Last-Modified on a local store) 61 s back, so no
    // wait decides whether the checks above ran within it.
    const records = join(ds, "_holdfast", "retirement", "main");
    const [record] = await readdir(records);
    const stamp = (Date.now() - 61_000) / 1000;
    await utimes(join(records, record!), stamp, stamp);
    const late = await run(["status", ds, "--json"]);
    expect(late.json()).toMatchObject({ retirements: [{ state: "draining", abandoned: true }] });
    expect((await run(["recover", ds])).code).toBe(0);
    expect((await run(["status", ds, "--json"])).json()).toMatchObject({ retirements: [] });
    expect((await run(["lease", "acquire", ds, "1", "--ttl", "30s"])).code).toBe(0);
  });
});

describe("lease acquire --hold when protection ends", () => {
  it("says so and exits non-zero once the version is sealed for retirement", async () => {
    const { createLocalStore } = await import("@holdfast/backends-local");
    const { createContext } = await import("@holdfast/protocol");
    const { readManifest } = await import("@holdfast/dataset");
    const { drain, seal } = await import("@holdfast/retirement");
    const { main } = await import("../src/index.js");
    const ds = join(dir, "ds");
    expect((await run(["init", ds])).code).toBe(0);
    await writeFile(join(dir, "f.txt"), "data");
    for (let i = 0; i < 2; i += 1)
      expect((await run(["commit", ds, "f.txt"], { cwd: dir })).code).toBe(0);

    let stdout = "";
    const interrupt = new AbortController();
    const holding = main(
      ["lease", "acquire", ds, "1", "--ttl", "1500ms", "--hold", "--json"],
      {
        stdout: { write: (s: string) => (stdout += s) },
        stderr: { write: () => true },
        env: {},
        cwd: dir,
      },
      interrupt.signal,
    );
    while (!stdout.includes('"acquired"')) await new Promise((r) => setTimeout(r, 20));

    // A cleaner drains and seals version 1 (as if its census had missed the lease): the
    // next renewal is refused and the holder must be told protection may end.
    const ctx = createContext(createLocalStore({ root: ds }));
    const manifest = await readManifest(ctx, "main", 1);
    const handle = await drain(ctx, {
      branch: "main",
      versions: [{ version: 1, manifestEtag: manifest.etag }],
      owner: ctx.ids.next(),
    });
    await seal(ctx, handle);

    const code = await Promise.race([
      holding,
      new Promise<number>((r) => setTimeout(() => r(-1), 10_000)),
    ]);
    interrupt.abort();
    expect(code).toBe(3);
    const events = stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events[0]).toMatchObject({ event: "acquired" });
    expect(events.at(-1)).toMatchObject({ ok: false, event: "fenced", error: { kind: "refused" } });
  });
});

describe("filesystem refusals", () => {
  it("a read-only or unwritable local store gets a hint that names the cause, not the bucket", async () => {
    const { holdfastError } = await import("@holdfast/conditional-store");
    const { Output } = await import("../src/output.js");
    const cases = [
      ["EROFS", /mounted read-only/],
      ["EACCES", /permissions/],
      ["ENOSPC", /disk is full/],
    ] as const;
    for (const [code, hint] of cases) {
      let stderr = "";
      const out = new Output(
        {
          stdout: { write: () => {} },
          stderr: { write: (s: string) => (stderr += s) },
          env: {},
          cwd: dir,
        },
        { json: false },
      );
      const error = holdfastError("refused", "put", `${code}: open '${dir}/x.tmp'`, { code });
      expect(out.error("cleanup", error)).toBe(1);
      expect(stderr).toMatch(new RegExp(`error: ${code}:`));
      expect(stderr).toMatch(hint);
      expect(stderr).not.toMatch(/bucket or container/);
    }
  });
});
