import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliRun, cli, readServiceEnv, requireBuiltCli } from "./e2e-harness.js";

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

  beforeAll(async () => {
    requireBuiltCli();
    work = await mkdtemp(join(tmpdir(), `holdfast-e2e-${backend.name}-`));
    ({ url, flags, env } = backend.setup(work));
    await writeFile(join(work, "a.bin"), "alpha");
    await writeFile(join(work, "b.bin"), "bravo!");
  });
  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("doctor probes the store and says what holdfast guarantees", async () => {
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

  it("init creates a dataset; a second init conflicts (exit 3)", async () => {
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

  it("commit writes files and commits versions; versions lists them", async () => {
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

  it("bad input is a usage error (exit 2) and writes nothing", async () => {
    const before = await cli(["versions", url, ...flags, "--json"], { env });
    const cases: { args: string[]; match: RegExp }[] = [
      { args: ["commit", url, "a.bin", "--branch", "a/b", ...flags], match: /invalid branch name/ },
      { args: ["commit", url, "a.bin", "--branch", "..", ...flags], match: /invalid branch name/ },
      { args: ["commit", url, "missing.bin", ...flags], match: /no such file/ },
      {
        args: ["commit", url, "a.bin", "--frobnicate", ...flags],
        match: /unknown option '--frobnicate'/,
      },
      { args: ["versions", "gs://bucket/x"], match: /unsupported scheme gs/ },
      { args: ["versions", "s3://Bad_Bucket/x"], match: /invalid storage URL/ },
      { args: ["versions", "az://x/y"], match: /3 to 63/ },
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
});

describe("e2e conventions", () => {
  let work: string;
  beforeAll(async () => {
    requireBuiltCli();
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
