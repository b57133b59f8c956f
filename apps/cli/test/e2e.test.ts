import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import {
  BIN,
  type CliRun,
  checkShape,
  cli,
  readServiceEnv,
  requireBuiltCli,
} from "./e2e-harness.js";

/** One storage configuration the e2e suite runs against. */
interface Backend {
  name: string;
  /** Builds the URL, the storage flags and the environment (credentials) for this run. */
  setup(work: string): { url: string; flags: string[]; env: Record<string, string> };
}

const BACKENDS: Backend[] = [
  {
    name: "local",
    setup: (work) => ({ url: join(work, "dataset"), flags: [], env: {} }),
  },
  {
    name: "rgw",
    setup: () => {
      const env = readServiceEnv("rgw");
      return {
        url: `s3://${env.HOLDFAST_S3_BUCKET}/cli-e2e-${ulid().toLowerCase()}`,
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
    },
  },
  {
    name: "fake-gcs-server",
    setup: () => {
      const env = readServiceEnv("gcs");
      return {
        url: `gs://${env.HOLDFAST_GCS_BUCKET}/cli-e2e-${ulid().toLowerCase()}`,
        flags: ["--endpoint", env.STORAGE_EMULATOR_HOST!],
        env: {},
      };
    },
  },
  {
    name: "azurite",
    setup: () => {
      const env = readServiceEnv("azurite");
      return {
        url: `az://${env.HOLDFAST_AZURE_CONTAINER}/cli-e2e-${ulid().toLowerCase()}`,
        flags: [],
        env: { AZURE_STORAGE_CONNECTION_STRING: env.AZURE_STORAGE_CONNECTION_STRING! },
      };
    },
  },
];

function expectOk(run: CliRun): CliRun {
  if (run.code !== 0)
    throw new Error(`exit ${run.code}\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
  return run;
}

describe.each(BACKENDS)("e2e $name", (backend) => {
  let work: string;
  let url: string;
  let flags: string[];
  let env: Record<string, string>;

  // A missing service or build fails every test of the backend with its reason (a failing
  // beforeAll would report the tests as skipped, and nothing here may look skipped).
  let setupError: unknown;
  const check = (name: string, fn: () => Promise<void>) =>
    it(name, async () => {
      if (setupError !== undefined) throw setupError;
      await fn();
    });

  beforeAll(async () => {
    try {
      requireBuiltCli();
      work = await mkdtemp(join(tmpdir(), `holdfast-e2e-${backend.name}-`));
      ({ url, flags, env } = backend.setup(work));
      await writeFile(join(work, "a.bin"), "alpha");
      await writeFile(join(work, "b.bin"), "bravo!");
    } catch (error) {
      setupError = error;
    }
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  check("doctor probes the store and says what holdfast guarantees", async () => {
    const run = await cli(["doctor", url, ...flags, "--json"], { env });
    expectOk(run);
    const doc = run.json();
    expect(doc).toMatchObject({ ok: true, command: "doctor" });
    expect(["supported", "degraded"]).toContain(doc.verdict);
    const checks = doc.checks as { id: string; status: string }[];
    expect(checks.find((c) => c.id === "create-only")?.status).toBe("pass");
    expect(checks.map((c) => c.id)).toEqual(
      expect.arrayContaining([
        "create-only",
        "if-match",
        "conditional-delete",
        "timestamps",
        "batch-delete",
        "clock-skew",
      ]),
    );
    expect((doc.guarantees as string[]).length).toBeGreaterThan(1);
    const human = expectOk(await cli(["doctor", url, ...flags], { env }));
    expect(human.stdout).toMatch(/What holdfast guarantees here:/);
  });

  check("init creates a dataset; a second init conflicts (exit 3)", async () => {
    const run = expectOk(await cli(["init", url, ...flags, "--json"], { env }));
    expect(run.json()).toMatchObject({ ok: true, command: "init", defaultBranch: "main" });
    const again = await cli(["init", url, ...flags, "--json"], { env });
    expect(again.code).toBe(3);
    expect(again.json()).toMatchObject({
      ok: false,
      command: "init",
      exitCode: 3,
      error: { kind: "conflict" },
    });
  });

  check("commit writes files and commits versions; versions lists them", async () => {
    const c1 = expectOk(
      await cli(["commit", url, "a.bin", "b.bin", ...flags, "--json"], { env, cwd: work }),
    );
    expect(c1.json()).toMatchObject({ ok: true, command: "commit", branch: "main", version: 1 });
    expectOk(await cli(["commit", url, "a.bin", ...flags], { env, cwd: work }));
    expectOk(await cli(["commit", url, "b.bin", ...flags], { env, cwd: work }));
    const list = expectOk(await cli(["versions", url, ...flags, "--json"], { env }));
    const versions = list.json().versions as { version: number; lastModified: string }[];
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3]);
    expect(Number.isNaN(Date.parse(versions[0]!.lastModified))).toBe(false);
  });

  check("bad input is a usage error (exit 2) and writes nothing", async () => {
    const before = await cli(["versions", url, ...flags, "--json"], { env });
    const cases: { args: string[]; match: RegExp }[] = [
      { args: ["commit", url, "a.bin", "--branch", "a/b", ...flags], match: /invalid branch name/ },
      { args: ["commit", url, "a.bin", "--branch", "..", ...flags], match: /invalid branch name/ },
      { args: ["commit", url, "missing.bin", ...flags], match: /no such file/ },
      {
        args: ["commit", url, "a.bin", "--frobnicate", ...flags],
        match: /unknown option '--frobnicate'/,
      },
      { args: ["versions", "hdfs://bucket/x"], match: /unsupported scheme hdfs/ },
      { args: ["versions", "gs://goog-data/x"], match: /does not start with 'goog'/ },
      { args: ["versions", "s3://Bad_Bucket/x"], match: /invalid storage URL/ },
      { args: ["versions", "az://x/y"], match: /3 to 63/ },
      {
        args: ["versions", "./x", "--endpoint", "http://127.0.0.1:1"],
        match: /applies only to s3:\/\//,
      },
      {
        args: ["lease", "acquire", url, "1", "--ttl", "5 minutes", ...flags],
        match: /invalid --ttl/,
      },
      { args: ["cleanup", url, "--older-than", "7", ...flags], match: /missing a unit/ },
    ];
    for (const { args, match } of cases) {
      const run = await cli(args, { env, cwd: work });
      expect(run.code, `${args.join(" ")}\n${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(match);
      expect(run.stderr).toMatch(/\nhint: /);
      expect(run.stdout).toBe("");
      const json = await cli([...args, "--json"], { env, cwd: work });
      expect(json.code).toBe(2);
      expect(json.json()).toMatchObject({
        ok: false,
        exitCode: 2,
        error: { kind: "invalid-input" },
      });
    }
    const after = await cli(["versions", url, ...flags, "--json"], { env });
    expect(after.json()).toEqual(before.json());
  });
  check("lease acquire, list and release; bad TTL and missing version", async () => {
    const acquired = expectOk(
      await cli(["lease", "acquire", url, "1", "--ttl", "30s", ...flags, "--json"], { env }),
    );
    const lease = acquired.json().lease as {
      leaseId: string;
      version: number;
      ttlMs: number;
      expiresAt: string;
    };
    expect(lease).toMatchObject({ version: 1, ttlMs: 30_000 });
    expect(Number.isNaN(Date.parse(lease.expiresAt))).toBe(false);
    const listed = expectOk(await cli(["lease", "list", url, ...flags, "--json"], { env }));
    expect(listed.json().leases).toMatchObject([
      { leaseId: lease.leaseId, branch: "main", version: 1, active: true },
    ]);
    const handle = JSON.stringify(acquired.json().handle);
    expectOk(await cli(["lease", "release", url, "--handle", handle, ...flags], { env }));
    expect(
      expectOk(await cli(["lease", "list", url, ...flags, "--json"], { env })).json().leases,
    ).toEqual([]);

    const badTtl = await cli(["lease", "acquire", url, "1", "--ttl", "90", ...flags, "--json"], {
      env,
    });
    expect(badTtl.code).toBe(2);
    expect(badTtl.json()).toMatchObject({ error: { kind: "invalid-input" } });
    const missing = await cli(["lease", "acquire", url, "99", "--ttl", "30s", ...flags, "--json"], {
      env,
    });
    expect(missing.code).toBe(1);
    expect(missing.json()).toMatchObject({ error: { kind: "not-found" } });
  });

  check("lease acquire --hold renews until SIGINT, then releases", async () => {
    const child = spawn(
      process.execPath,
      [
        BIN,
        "lease",
        "acquire",
        url,
        "2",
        "--ttl",
        "4s",
        "--renew-every",
        "1s",
        "--hold",
        "--json",
        ...flags,
      ],
      {
        env: { PATH: process.env.PATH, NO_COLOR: "1", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const lines: Record<string, unknown>[] = [];
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    // Each renewal starts at least 1 s after the previous write, so the fifth starts more
    // than 4 s (the TTL) after the acquire: only renewals can keep the lease active then.
    let outlivedTtl!: () => void;
    const renewedPastTtl = new Promise<void>((resolve) => (outlivedTtl = resolve));
    const acquired = new Promise<void>((resolve) => {
      let buffer = "";
      child.stdout.on("data", (c: Buffer) => {
        buffer += c.toString();
        const parts = buffer.split("\n");
        buffer = parts.pop()!;
        for (const part of parts) {
          const event = JSON.parse(part) as Record<string, unknown>;
          checkShape(event, "lease acquire --hold");
          lines.push(event);
          if (event.event === "acquired") resolve();
          if (event.event === "renewed" && (event.renewal as number) >= 5) outlivedTtl();
        }
      });
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on("exit", (code) => resolve(code)),
    );
    onTestFinished(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    });
    await Promise.race([
      acquired,
      exited.then(() => Promise.reject(new Error(`reader exited early: ${stderr}`))),
    ]);
    await Promise.race([
      renewedPastTtl,
      exited.then(() => Promise.reject(new Error(`reader stopped renewing: ${stderr}`))),
    ]);
    const during = expectOk(
      await cli(["lease", "list", url, "2", "--branch", "main", ...flags, "--json"], {
        env,
      }),
    );
    expect(during.json().leases).toMatchObject([{ version: 2, active: true }]);
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(lines[0]).toMatchObject({ ok: true, command: "lease acquire", event: "acquired" });
    expect(lines.filter((l) => l.event === "renewed").map((l) => l.renewal)).toEqual(
      Array.from({ length: lines.filter((l) => l.event === "renewed").length }, (_, i) => i + 1),
    );
    expect(lines.at(-1)).toMatchObject({ ok: true, event: "released" });
    expect(
      expectOk(await cli(["lease", "list", url, ...flags, "--json"], { env })).json().leases,
    ).toEqual([]);
  });

  check("tag create, update, list, delete; a duplicate conflicts (exit 3)", async () => {
    expectOk(await cli(["tag", "create", url, "t1", "1", ...flags], { env }));
    const dup = await cli(["tag", "create", url, "t1", "2", ...flags, "--json"], { env });
    expect(dup.code).toBe(3);
    expect(dup.json()).toMatchObject({ ok: false, error: { kind: "conflict" } });
    expectOk(await cli(["tag", "update", url, "t1", "2", ...flags], { env }));
    const list = expectOk(await cli(["tag", "list", url, ...flags, "--json"], { env }));
    expect(list.json().tags).toEqual([{ name: "t1", target: { branch: "main", version: 2 } }]);
    expectOk(await cli(["tag", "delete", url, "t1", ...flags], { env }));
    expect(
      expectOk(await cli(["tag", "list", url, ...flags, "--json"], { env })).json().tags,
    ).toEqual([]);
    const slash = await cli(["tag", "create", url, "x/y", "1", ...flags], { env });
    expect(slash.code).toBe(2);
    expect(slash.stderr).toMatch(/invalid tag name/);
  });

  check(
    "branch create, commit to it, list; cleanup keeps what is protected; status, recover, branch delete",
    async () => {
      expectOk(await cli(["tag", "create", url, "keep", "1", ...flags], { env }));
      expectOk(await cli(["branch", "create", url, "exp", "--from", "2", ...flags], { env }));
      const onBranch = expectOk(
        await cli(["commit", url, "a.bin", "--branch", "exp", ...flags, "--json"], {
          env,
          cwd: work,
        }),
      );
      expect(onBranch.json()).toMatchObject({ branch: "exp", version: 1 });
      const branches = expectOk(await cli(["branch", "list", url, ...flags, "--json"], { env }));
      expect(branches.json().branches).toMatchObject([
        { name: "main", default: true, latestVersion: 3 },
        { name: "exp", parent: { branch: "main", version: 2 }, latestVersion: 1 },
      ]);
      expectOk(await cli(["commit", url, "a.bin", ...flags], { env, cwd: work }));
      expectOk(await cli(["commit", url, "b.bin", ...flags], { env, cwd: work }));

      const plan = expectOk(
        await cli(
          ["cleanup", url, "--retain", "1", "--min-age", "0", "--dry-run", ...flags, "--json"],
          { env },
        ),
      );
      const planned = plan.json().stats as {
        dryRun: boolean;
        retired: { branch: string; version: number }[];
      };
      expect(planned.dryRun).toBe(true);
      expect(planned.retired).toEqual([
        { branch: "main", version: 3 },
        { branch: "main", version: 4 },
      ]);
      const done = expectOk(
        await cli(["cleanup", url, "--retain", "1", "--min-age", "0", ...flags, "--json"], { env }),
      );
      const stats = done.json().stats as {
        retired: { branch: string; version: number }[];
        retained: { branch: string; version: number; reason: string }[];
        objectsDeleted: { manifests: number; total: number };
        bytesDeleted: number;
        requests: { total: number; list: number; put: number };
        elapsedMs: number;
      };
      expect(stats.retired).toEqual(planned.retired);
      expect(stats.retained).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ branch: "main", version: 1, reason: "tag" }),
          expect.objectContaining({ branch: "main", version: 5, reason: "latest" }),
          expect.objectContaining({ branch: "exp", version: 1, reason: "latest" }),
        ]),
      );
      // Version 2 is the branch's fork point (a lease from an earlier step may also name it).
      expect(stats.retained.find((v) => v.branch === "main" && v.version === 2)).toBeDefined();
      expect(stats.objectsDeleted.manifests).toBe(2);
      expect(stats.requests.total).toBeGreaterThan(0);
      const versions = expectOk(await cli(["versions", url, ...flags, "--json"], { env }));
      expect((versions.json().versions as { version: number }[]).map((v) => v.version)).toEqual([
        1, 2, 5,
      ]);

      const status = expectOk(await cli(["status", url, ...flags, "--json"], { env }));
      expect(status.json()).toMatchObject({
        ok: true,
        command: "status",
        leases: [],
        retirements: [],
        intents: [],
      });
      expect(status.json().tags).toEqual([
        { name: "keep", target: { branch: "main", version: 1 } },
      ]);
      const recovered = expectOk(await cli(["recover", url, ...flags, "--json"], { env }));
      expect(recovered.json()).toMatchObject({ ok: true, command: "recover", retired: [] });

      expectOk(await cli(["branch", "delete", url, "exp", ...flags], { env }));
      const after = expectOk(await cli(["branch", "list", url, ...flags, "--json"], { env }));
      expect((after.json().branches as { name: string }[]).map((b) => b.name)).toEqual(["main"]);
    },
  );
});

describe("e2e conventions", () => {
  let work: string;
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "holdfast-e2e-conv-"));
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("every command has --help with examples", async () => {
    const top = expectOk(await cli(["--help"]));
    const names = [...top.stdout.matchAll(/^ {2}([a-z]+)\b/gm)]
      .map((m) => m[1]!)
      .filter((n) => n !== "help");
    expect(names).toEqual(expect.arrayContaining(["init", "commit", "versions", "doctor"]));
    for (const name of names) {
      const help = expectOk(await cli([name, "--help"]));
      const sub = [...help.stdout.matchAll(/^ {2}([a-z]+) \[options\]/gm)].map((m) => m[1]!);
      if (sub.length === 0) {
        expect(help.stdout, name).toMatch(/Examples:/);
        expect(help.stdout, name).toMatch(/--json/);
      }
      for (const s of sub) {
        const subHelp = expectOk(await cli([name, s, "--help"]));
        expect(subHelp.stdout, `${name} ${s}`).toMatch(/Examples:/);
        expect(subHelp.stdout, `${name} ${s}`).toMatch(/--json/);
      }
    }
  });

  it("missing Azure credentials: clear error, no secrets, nothing written", async () => {
    const run = await cli(["init", "az://holdfast-test/nocreds", "--json"], { env: {} });
    expect(run.code).toBe(1);
    expect(run.json()).toMatchObject({ ok: false, error: { kind: "auth" } });
    expect((run.json().error as { hint: string }).hint).toMatch(/AZURE_STORAGE_CONNECTION_STRING/);
  });

  it("missing S3 credentials: clear error, no secrets, nothing written", async () => {
    const rgw = readServiceEnv("rgw");
    const url = `s3://${rgw.HOLDFAST_S3_BUCKET}/cli-nocreds-${ulid().toLowerCase()}`;
    const flags = ["--endpoint", rgw.HOLDFAST_S3_ENDPOINT!, "--path-style"];
    // A HOME without ~/.aws; its own folder, as the CLI keeps its compile cache under ~/.cache.
    const home = await mkdtemp(join(tmpdir(), "holdfast-e2e-home-"));
    const run = await cli(["init", url, ...flags, "--json"], { env: { HOME: home } });
    await rm(home, { recursive: true, force: true });
    expect(run.code).toBe(1);
    expect(run.json()).toMatchObject({ ok: false, error: { kind: "auth", code: "NoCredentials" } });
    expect((run.json().error as { hint: string }).hint).toMatch(/AWS_ACCESS_KEY_ID/);
    const creds = {
      AWS_ACCESS_KEY_ID: rgw.AWS_ACCESS_KEY_ID!,
      AWS_SECRET_ACCESS_KEY: rgw.AWS_SECRET_ACCESS_KEY!,
    };
    const check = await cli(["versions", url, ...flags, "--json"], { env: creds });
    expect(check.code).toBe(1);
    expect(check.json()).toMatchObject({ error: { kind: "not-found" } });
    // Wrong credentials are refused too, and the secret is never printed.
    const wrong = await cli(["init", url, ...flags], {
      env: { AWS_ACCESS_KEY_ID: "WRONGKEY", AWS_SECRET_ACCESS_KEY: "wrong-secret-value" },
    });
    expect(wrong.code).toBe(1);
    expect(`${wrong.stdout}${wrong.stderr}`).not.toContain("wrong-secret-value");
  });

  it("credentials in a URL are refused without being echoed", async () => {
    const run = await cli(["init", "s3://AKIAEXAMPLE:sup3rsecret@bucket/x"]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain("sup3rsecret");
    expect(run.stderr).not.toContain("AKIAEXAMPLE");
  });

  it("local commands on a missing directory create nothing", async () => {
    const run = await cli(["versions", join(work, "absent")]);
    expect(run.code).toBe(1);
    expect(await readdir(work)).toEqual([]);
  });
});

describe("e2e demo", () => {
  it("builds, cleans and verifies the demo dataset in under a minute, leaving it to explore", async () => {
    requireBuiltCli();
    const work = await mkdtemp(join(tmpdir(), "holdfast-e2e-demo-"));
    try {
      const started = Date.now();
      const run = await cli(["demo", join(work, "d"), "--json"], { cwd: work, timeoutMs: 90_000 });
      const elapsed = Date.now() - started;
      expectOk(run);
      const doc = run.json();
      expect(doc).toMatchObject({
        ok: true,
        command: "demo",
        versions: 300,
        verification: { ok: true, readerOk: true, failures: [] },
      });
      const reader = doc.reader as { reads: number; readsDuringCleanup: number; exitCode: number };
      expect(reader.exitCode).toBe(0);
      expect(reader.reads).toBeGreaterThan(0);
      // The reader reads through the cleanup, not only before and after it.
      expect(reader.readsDuringCleanup).toBeGreaterThan(0);
      const stats = doc.stats as { retired: unknown[]; retained: { reason: string }[] };
      expect(stats.retired.length).toBeGreaterThan(200);
      expect(new Set(stats.retained.map((v) => v.reason))).toEqual(
        new Set(["lease", "tag", "branch-lineage", "policy", "latest"]),
      );
      expect(elapsed).toBeLessThan(60_000);
      // The directory stays for the other commands.
      const status = expectOk(await cli(["status", join(work, "d"), "--json"]));
      expect(status.json()).toMatchObject({ leases: [], retirements: [], intents: [] });
      const again = await cli(["demo", join(work, "d")]);
      expect(again.code).toBe(3);
      expect(again.stderr).toMatch(/already exists and is not empty/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }, 120_000);
});
