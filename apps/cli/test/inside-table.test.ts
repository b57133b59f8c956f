import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { createS3Store } from "@holdfast/backends-s3";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { rgwLanceOptions, runPylanceTables } from "@holdfast/test-support";
import { ulid } from "ulid";
import { beforeAll, describe, expect, it } from "vitest";
import { cli, readServiceEnv } from "./e2e-harness.js";

/**
 * A URI inside a table is never a table (docs/lance.md, "Where a table is"; invariant 9
 * in docs/guarantees.md): on a table pylance 14 wrote with branches (`dev` with a tag on
 * dev@3, `dev/sub` forked from dev@4), every command given the branch's own folder
 * `t.lance/tree/dev`, `_versions/`, `data/`, an index folder, `_holdfast/` or the folder
 * holding the table is refused with `invalid-input` INSIDE_TABLE / HOLDS_TABLE naming the
 * table's root, before anything is written: every object of the table keeps its ETag, and
 * pylance reads every version of every branch as before. Without the refusal, `cleanup
 * t.lance/tree/dev --retain 1` cleaned dev as a table of its own (its tag, `dev/sub`'s fork
 * point and leases at the table root unseen) and `lease acquire t.lance/tree/dev 3` wrote a
 * lease under `tree/dev/_holdfast/`, where the table's cleanup never looks.
 */

interface Verified {
  main: Record<string, { rows: number; checksum: string }>;
  branches: Record<string, Record<string, { rows: number; checksum: string }>>;
}

interface Site {
  name: string;
  root: string;
  storageOptions: Record<string, string>;
  flags: string[];
  env: Record<string, string>;
  /** A store of the table's folder that sends nothing when opened. */
  store(path: string): ObjectStore;
}

function local(): Site {
  const dir = mkdtempSync(join(tmpdir(), "holdfast-cli-inside-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  return {
    name: "local disk",
    root: dir,
    storageOptions: {},
    flags: [],
    env: {},
    store: (path) => createLocalStore({ root: join(dir, path), createRoot: false, fsync: false }),
  };
}

function rgw(): Site {
  const env = readServiceEnv("rgw");
  const prefix = `cli-inside-${ulid().toLowerCase()}`;
  return {
    name: "RGW",
    root: `s3://${env.HOLDFAST_S3_BUCKET}/${prefix}`,
    storageOptions: rgwLanceOptions(),
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
    store: (path) =>
      createS3Store({
        bucket: env.HOLDFAST_S3_BUCKET!,
        prefix: `${prefix}/${path}`,
        region: env.HOLDFAST_S3_REGION!,
        endpoint: env.HOLDFAST_S3_ENDPOINT!,
        forcePathStyle: true,
        credentials: {
          accessKeyId: env.AWS_ACCESS_KEY_ID!,
          secretAccessKey: env.AWS_SECRET_ACCESS_KEY!,
        },
      }),
  };
}

/** Every object under the site's root with its ETag: what must not change. */
async function snapshot(site: Site): Promise<string[]> {
  const out: string[] = [];
  for await (const meta of listAll(site.store(""), "")) out.push(`${meta.key} ${meta.etag}`);
  return out.sort();
}

const INDEX = "_indices/8096bd55-70a0-43e6-a1e5-4a3c2c243300";

/** Each command as a user would type it for a folder `url` (the table's, or one inside it). */
const COMMANDS: readonly { name: string; args: (url: string) => string[] }[] = [
  {
    name: "cleanup --retain 1",
    args: (u) => [
      "cleanup",
      u,
      "--retain",
      "1",
      "--min-age",
      "0s",
      "--orphan-grace",
      "0s",
      "--no-writer-active",
    ],
  },
  { name: "lease acquire 3", args: (u) => ["lease", "acquire", u, "3", "--ttl", "60s"] },
  { name: "lease list", args: (u) => ["lease", "list", u] },
  { name: "tag create", args: (u) => ["tag", "create", u, "inside", "3"] },
  { name: "versions", args: (u) => ["versions", u] },
  { name: "status", args: (u) => ["status", u] },
  { name: "recover", args: (u) => ["recover", u] },
  { name: "branch list", args: (u) => ["branch", "list", u] },
  { name: "init", args: (u) => ["init", u] },
];

function describeSite(make: () => Site, commands: typeof COMMANDS) {
  const site = make();
  const table = () => `${site.root}/branches.lance`;
  let before: Verified;
  let objects: string[];

  async function refused(args: string[], code: string, root: string) {
    const run = await cli([...args, ...site.flags, "--json"], {
      env: site.env,
      timeoutMs: 120_000,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(2);
    const doc = JSON.parse(run.stdout) as {
      error: { kind: string; code: string; key: string; hint: string };
    };
    expect(doc.error).toMatchObject({ kind: "invalid-input", code, key: root });
    return doc.error;
  }

  async function unchanged() {
    expect(await snapshot(site)).toEqual(objects);
  }

  describe(`a URI inside a pylance table is refused, nothing written (${site.name})`, () => {
    beforeAll(async () => {
      await runPylanceTables(["write", "branches", site.root], site.storageOptions);
      before = await runPylanceTables<Verified>(["verify", table()], site.storageOptions);
      objects = await snapshot(site);
    }, 300_000);

    it.each(commands)(
      "$name through the branch folder t.lance/tree/dev: INSIDE_TABLE naming the table and the branch",
      { timeout: 120_000 },
      async ({ args }) => {
        const error = await refused(args(`${table()}/tree/dev`), "INSIDE_TABLE", table());
        expect(error.hint).toContain("--branch dev");
        await unchanged();
      },
    );

    it.each([
      "tree/dev/sub",
      "tree/dev/_versions",
      "_versions",
      "data",
      INDEX,
      "_transactions",
      "_refs",
      "_holdfast",
    ])(
      "cleanup and lease acquire through %s: INSIDE_TABLE, nothing written",
      {
        timeout: 120_000,
      },
      async (inside) => {
        for (const command of commands.slice(0, 2)) {
          await refused(command.args(`${table()}/${inside}`), "INSIDE_TABLE", table());
        }
        await unchanged();
      },
    );

    it("cleanup and lease acquire on the folder holding the table: HOLDS_TABLE", {
      timeout: 120_000,
    }, async () => {
      for (const command of commands.slice(0, 2)) {
        await refused(command.args(site.root), "HOLDS_TABLE", table());
      }
      await unchanged();
    });

    it("afterwards pylance reads every version of every branch as before; the table's own URI still works", {
      timeout: 300_000,
    }, async () => {
      const after = await runPylanceTables<Verified>(["verify", table()], site.storageOptions);
      expect(after.main).toEqual(before.main);
      expect(after.branches).toEqual(before.branches);
      const run = await cli(["versions", table(), ...site.flags, "--json"], { env: site.env });
      expect(run.code, run.stderr).toBe(0);
    });
  });
}

describeSite(local, COMMANDS);
// RGW: the refusals of the two commands (cleanup and lease acquire), before the
// S3 probe writes anything.
describeSite(rgw, COMMANDS.slice(0, 2));
