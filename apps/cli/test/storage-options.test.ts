import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseStorageOptions, STORAGE_OPTION_KEYS } from "../src/storage-options.js";
import { parseTarget } from "../src/target.js";
import { readServiceEnv } from "./e2e-harness.js";
import { run } from "./run.js";

// Lance's storage_options (object_store's keys) as the CLI's store settings
// (apps/cli/README.md, Storage options).

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "holdfast-cli-storage-options-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const io = (cwd: string) => ({
  stdout: { write: () => {} },
  stderr: { write: () => {} },
  env: {},
  cwd,
});

/** A value each setting accepts, and what the settings then hold. */
const SAMPLE: Record<string, [string, unknown]> = {
  endpoint: ["http://127.0.0.1:7480", "http://127.0.0.1:7480"],
  region: ["eu-west-1", "eu-west-1"],
  pathStyle: ["true", false], // the key says virtual-hosted style: negated
  allowHttp: ["true", true],
  accessKeyId: ["AKID", "AKID"],
  secretAccessKey: ["SECRET", "SECRET"],
  sessionToken: ["TOKEN", "TOKEN"],
  azureAccount: ["acct1", "acct1"],
  azureKey: ["a2V5", "a2V5"],
  azureConnectionString: ["UseDevelopmentStorage=true", "UseDevelopmentStorage=true"],
  azureEmulator: ["true", true],
  gcsServiceAccountPath: ["/etc/sa.json", "/etc/sa.json"],
};

/** Keys a setting needs beside it (credentials go in pairs). */
const COMPANIONS: Record<string, string[]> = {
  accessKeyId: ["aws_secret_access_key=S"],
  secretAccessKey: ["aws_access_key_id=A"],
  sessionToken: ["aws_access_key_id=A", "aws_secret_access_key=S"],
};

describe("the storage_options translation table, key by key", () => {
  for (const [key, entry] of Object.entries(STORAGE_OPTION_KEYS)) {
    it(`${key} sets ${entry.setting} for ${entry.scheme}:// URLs, and is refused for the others`, () => {
      const [value, expected] = SAMPLE[entry.setting]!;
      const options = [`${key}=${value}`, ...(COMPANIONS[entry.setting] ?? [])];
      const settings = parseStorageOptions({ storageOption: options }, entry.scheme, dir);
      expect((settings as Record<string, unknown>)[entry.setting]).toEqual(expected);
      // upper case, as environment-style keys, is the same key
      const upper = parseStorageOptions(
        { storageOption: [`${key.toUpperCase()}=${value}`, ...(COMPANIONS[entry.setting] ?? [])] },
        entry.scheme,
        dir,
      );
      expect((upper as Record<string, unknown>)[entry.setting]).toEqual(expected);
      for (const other of ["s3", "az", "gs", "file"] as const) {
        if (other === entry.scheme) continue;
        expect(() => parseStorageOptions({ storageOption: options }, other, dir)).toThrow(
          expect.objectContaining({ kind: "invalid-input", code: "STORAGE_OPTION_MISPLACED" }),
        );
      }
    });
  }
});

describe("bad storage options are refused before anything is opened", () => {
  it("an unknown key, a key without a value, a malformed boolean, an unreadable file", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ storageOption: ["aws_regoin=eu-west-1"] }, "UNKNOWN_STORAGE_OPTION"],
      [{ storageOption: ["aws_region"] }, "STORAGE_OPTION_MALFORMED"],
      [{ storageOption: ["allow_http=maybe"] }, "STORAGE_OPTION_MALFORMED"],
      [{ storageOption: ["aws_access_key_id=A"] }, "STORAGE_OPTION_INCOMPLETE"],
      [{ storageOption: ["aws_region=a", "region=b"] }, "STORAGE_OPTION_CONFLICT"],
      [
        { storageOption: ["aws_endpoint=http://h:1", "allow_http=false"] },
        "STORAGE_OPTION_CONFLICT",
      ],
      [{ storageOptionsFile: join(dir, "missing.json") }, "STORAGE_OPTIONS_FILE"],
    ];
    await writeFile(join(dir, "list.json"), "[1, 2]");
    cases.push([{ storageOptionsFile: "list.json" }, "STORAGE_OPTIONS_FILE"]);
    for (const [opts, code] of cases) {
      expect(() => parseStorageOptions(opts, "s3", dir), JSON.stringify(opts)).toThrow(
        expect.objectContaining({ kind: "invalid-input", code }),
      );
    }
    // The same key twice with the same value is fine.
    expect(
      parseStorageOptions({ storageOption: ["aws_region=a", "region=a"] }, "s3", dir).region,
    ).toBe("a");
  });

  it("a flag and a storage option that disagree are refused; that agree are fine", () => {
    const t = (opts: Record<string, unknown>) => () =>
      parseTarget("s3://bucket-b/p", opts, io(dir));
    expect(t({ endpoint: "http://a:1", storageOption: ["aws_endpoint=http://b:1"] })).toThrow(
      expect.objectContaining({ kind: "invalid-input", code: "STORAGE_OPTION_CONFLICT" }),
    );
    expect(t({ region: "eu-west-1", storageOption: ["aws_region=us-east-1"] })).toThrow(
      expect.objectContaining({ code: "STORAGE_OPTION_CONFLICT" }),
    );
    expect(
      t({ pathStyle: true, storageOption: ["aws_virtual_hosted_style_request=true"] }),
    ).toThrow(expect.objectContaining({ code: "STORAGE_OPTION_CONFLICT" }));
    const same = parseTarget(
      "s3://bucket-b/p",
      {
        endpoint: "http://a:1",
        storageOption: ["aws_endpoint=http://a:1", "aws_region=eu-west-1"],
      },
      io(dir),
    );
    expect(same.options).toMatchObject({ endpoint: "http://a:1", region: "eu-west-1" });
    expect(() =>
      parseTarget(
        "az://container-c/p",
        { account: "one", storageOption: ["account_name=two"] },
        io(dir),
      ),
    ).toThrow(expect.objectContaining({ code: "STORAGE_OPTION_CONFLICT" }));
  });

  it("the CLI exits 2 naming the key, never its value, and writes nothing", async () => {
    const ds = join(dir, "ds");
    const r = await run([
      "init",
      "s3://bucket-b/p",
      "--storage-option",
      "aws_secret_acess_key=hush",
      "--json",
    ]);
    expect(r.code).toBe(2);
    expect(r.json()).toMatchObject({
      error: { kind: "invalid-input", code: "UNKNOWN_STORAGE_OPTION" },
    });
    expect(r.stdout + r.stderr).not.toContain("hush");
    const local = await run(["init", ds, "--storage-option", "aws_region=x"]);
    expect(local.code).toBe(2);
    await expect(import("node:fs/promises").then((fs) => fs.stat(ds))).rejects.toThrow();
  });
});

describe("a store reached with storage_options alone (no flags, no environment)", () => {
  it("Ceph RGW: aws_endpoint, aws_region, aws_access_key_id, aws_secret_access_key, aws_virtual_hosted_style_request, allow_http from a file", async () => {
    const env = readServiceEnv("rgw");
    const file = join(dir, "storage_options.json");
    await writeFile(
      file,
      JSON.stringify({
        aws_endpoint: env.HOLDFAST_S3_ENDPOINT,
        aws_region: env.HOLDFAST_S3_REGION,
        aws_access_key_id: env.AWS_ACCESS_KEY_ID,
        aws_secret_access_key: env.AWS_SECRET_ACCESS_KEY,
        aws_virtual_hosted_style_request: "false",
        allow_http: "true",
      }),
    );
    const url = `s3://${env.HOLDFAST_S3_BUCKET}/cli-options-${ulid().toLowerCase()}`;
    const init = await run(["init", url, "--storage-options-file", file, "--json"], { env: {} });
    expect(init.code, init.stdout + init.stderr).toBe(0);
    const versions = await run(["versions", url, "--storage-options-file", file, "--json"], {
      env: {},
    });
    expect(versions.code).toBe(0);
    expect(versions.json()).toMatchObject({ ok: true, versions: [] });
    // without them the same command finds no credentials (nothing came from elsewhere)
    const bare = await run(["versions", url, "--json"], { env: {} });
    expect(bare.code).not.toBe(0);
  });

  it("Azurite: azure_storage_connection_string as a repeated --storage-option", async () => {
    const env = readServiceEnv("azurite");
    const url = `az://${env.HOLDFAST_AZURE_CONTAINER}/cli-options-${ulid().toLowerCase()}`;
    const option = `azure_storage_connection_string=${env.AZURE_STORAGE_CONNECTION_STRING}`;
    const init = await run(["init", url, "--storage-option", option, "--json"], { env: {} });
    expect(init.code, init.stdout + init.stderr).toBe(0);
    const versions = await run(["versions", url, "--storage-option", option, "--json"], {
      env: {},
    });
    expect(versions.json()).toMatchObject({ ok: true, versions: [] });
  });
});
