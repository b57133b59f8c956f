import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openAzureStore } from "@holdfast/backends-azure";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store } from "@holdfast/backends-s3";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { ulid } from "ulid";
import { localDir } from "./sites.js";

/**
 * Tables written by pylance (the repo's Python environment: pylance 14, lancedb 0.40), for
 * tests of holdfast on Lance as its users write it today (docs/lance.md). The script
 * `tooling/python/pylance_tables.py` writes a scenario's tables and reads every version
 * back; this module runs it with `$HOLDFAST_PYTHON` and parses its JSON.
 */
export const PYLANCE_TABLES = fileURLToPath(
  new URL("../../../tooling/python/pylance_tables.py", import.meta.url),
);

/** The scenarios the script writes (see its docstring). */
export type Scenario =
  | "history"
  | "v1-naming"
  | "stable-row-ids"
  | "fragment-reuse"
  | "blobs"
  | "branches"
  | "shallow-clone";

/** What `write` made: per table, pylance's account of it. */
export interface Written {
  readonly tables: Record<
    string,
    {
      versions: number[];
      tags: Record<string, { branch: string | null; version: number }>;
      branches: Record<
        string,
        { parentBranch: string | null; parentVersion: number; versions: number[] }
      >;
    }
  >;
}

export interface VersionRead {
  readonly rows: number;
  readonly checksum: string;
}

/** What `verify` read: every version of main and of each branch, tags, tracked files. */
export interface Verified {
  /** The version pylance opens as the latest. */
  readonly latest: number;
  readonly main: Record<string, VersionRead>;
  readonly branches: Record<string, Record<string, VersionRead>>;
  readonly tags: Record<string, { branch: string | null; version: number }>;
  /**
   * Files the manifests of main and every branch track: keys relative to the table root
   * (`tree/{branch}/...` for a branch's own) and how many live under other roots.
   */
  readonly tracked: { keys: string[]; elsewhere: number };
}

/**
 * The interpreter of the repo's Python environment. Missing is a failure, never a skip:
 * `npm test` sets it; by hand, `export HOLDFAST_PYTHON=$PWD/.venv/bin/python` after
 * `bash tooling/scripts/python-env.sh`.
 */
export function holdfastPython(): string {
  const python = process.env.HOLDFAST_PYTHON;
  if (!python) {
    throw new Error(
      "HOLDFAST_PYTHON is not set: these tests need pylance. Run `npm test`, or `bash tooling/scripts/python-env.sh` and export HOLDFAST_PYTHON=$PWD/.venv/bin/python",
    );
  }
  if (!existsSync(python)) throw new Error(`HOLDFAST_PYTHON=${python} does not exist`);
  return python;
}

/** Runs the fixture script and parses its JSON (stderr is attached to a failure). */
export function pylance<T>(
  args: readonly string[],
  storageOptions: Record<string, string>,
): Promise<T> {
  const python = holdfastPython();
  return new Promise((resolve, reject) => {
    execFile(
      python,
      [PYLANCE_TABLES, ...args, "--storage-options", JSON.stringify(storageOptions)],
      { maxBuffer: 64 * 1024 * 1024, timeout: 300_000, env: { ...process.env, RUST_LOG: "error" } },
      (error, stdout, stderr) => {
        if (error) {
          reject(
            new Error(`pylance_tables.py ${args.join(" ")} failed: ${error.message}\n${stderr}`),
          );
          return;
        }
        try {
          resolve(JSON.parse(stdout) as T);
        } catch (cause) {
          reject(new Error(`pylance_tables.py printed no JSON: ${stdout}\n${stderr}`, { cause }));
        }
      },
    );
  });
}

/** Where pylance writes and how holdfast reaches the same table folder. */
export interface PySite {
  readonly name: "local" | "rgw" | "azurite";
  /** The folder pylance writes tables in (`{root}/{table}.lance`). */
  readonly root: string;
  readonly storageOptions: Record<string, string>;
  /** holdfast's store rooted at `{root}/{table}.lance` (opened and probed as the CLI does). */
  store(table: string): Promise<ObjectStore>;
  /** The CLI's URL of the table, its extra flags and environment. */
  cli(table: string): { url: string; flags: string[]; env: Record<string, string> };
  /** The local directory of `root`, for a site on local disk. */
  readonly dir?: string;
}

/** A fresh local directory; removed at process exit. */
export function localPySite(): PySite {
  const { dir, remove } = localDir();
  process.once("exit", remove);
  return {
    name: "local",
    root: dir,
    dir,
    storageOptions: {},
    store: async (table) => createLocalStore({ root: `${dir}/${table}.lance` }),
    cli: (table) => ({ url: `${dir}/${table}.lance`, flags: [], env: {} }),
  };
}

/** A fresh prefix on the test RGW (pylance through its S3 storage options). */
export function rgwPySite(): PySite {
  const env = serviceEnv("rgw");
  const endpoint = need(env, "HOLDFAST_S3_ENDPOINT", "rgw");
  const bucket = need(env, "HOLDFAST_S3_BUCKET", "rgw");
  const region = env.HOLDFAST_S3_REGION ?? "us-east-1";
  const accessKeyId = need(env, "AWS_ACCESS_KEY_ID", "rgw");
  const secretAccessKey = need(env, "AWS_SECRET_ACCESS_KEY", "rgw");
  const prefix = `pylance-${ulid().slice(-12).toLowerCase()}`;
  return {
    name: "rgw",
    root: `s3://${bucket}/${prefix}`,
    storageOptions: {
      aws_endpoint: endpoint,
      aws_access_key_id: accessKeyId,
      aws_secret_access_key: secretAccessKey,
      aws_region: region,
      allow_http: "true",
      aws_virtual_hosted_style_request: "false",
    },
    store: (table) =>
      openS3Store({
        bucket,
        prefix: `${prefix}/${table}.lance`,
        region,
        endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId, secretAccessKey },
      }),
    cli: (table) => ({
      url: `s3://${bucket}/${prefix}/${table}.lance`,
      flags: ["--endpoint", endpoint, "--region", region, "--path-style"],
      env: { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey },
    }),
  };
}

/** A fresh prefix on the test Azurite (pylance through object_store's Azure options). */
export function azuritePySite(): PySite {
  const env = serviceEnv("azurite");
  const connectionString = need(env, "AZURE_STORAGE_CONNECTION_STRING", "azurite");
  const container = env.HOLDFAST_AZURE_CONTAINER ?? "holdfast-test";
  const part = (name: string) => new RegExp(`${name}=([^;]+)`).exec(connectionString)?.[1];
  const account = part("AccountName");
  const key = part("AccountKey");
  const endpoint = part("BlobEndpoint");
  if (!account || !key || !endpoint) {
    throw new Error("the Azurite connection string lacks AccountName, AccountKey or BlobEndpoint");
  }
  const prefix = `pylance-${ulid().slice(-12).toLowerCase()}`;
  return {
    name: "azurite",
    root: `az://${container}/${prefix}`,
    storageOptions: {
      account_name: account,
      account_key: key,
      // Not azure_storage_use_emulator: object_store then ignores azure_endpoint and
      // writes to 127.0.0.1:10000, whatever port this Azurite listens on.
      azure_endpoint: endpoint,
      allow_http: "true",
    },
    store: (table) =>
      openAzureStore({ container, prefix: `${prefix}/${table}.lance`, connectionString }),
    cli: (table) => ({
      url: `az://${container}/${prefix}/${table}.lance`,
      flags: [],
      env: { AZURE_STORAGE_CONNECTION_STRING: connectionString },
    }),
  };
}

/** Every key under a store's root. */
export async function listKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const meta of listAll(store, "")) keys.push(meta.key);
  return keys.sort();
}

/**
 * Keys a table root may still hold after a cleanup: every file pylance tracks for the kept
 * versions of main and every branch, the blob sidecars of those data files, and the named
 * exceptions (Lance's references and the version hints).
 */
export function leftovers(keys: readonly string[], after: Verified): string[] {
  const tracked = new Set(after.tracked.keys);
  return keys.filter((key) => {
    if (tracked.has(key) || key.startsWith("_refs/")) return false;
    if (/^(tree\/.+\/)?_versions\/latest_version_hint\.json$/.test(key)) return false;
    const sidecar = /^(.*\/)?data\/([^/]+)\/[^/]+\.blob$/.exec(key);
    return !(sidecar && tracked.has(`${sidecar[1] ?? ""}data/${sidecar[2]}.lance`));
  });
}

// --- utils ---

function serviceEnv(name: "rgw" | "azurite"): Record<string, string | undefined> {
  const file = `${process.env.HOLDFAST_SERVICES_DIR ?? "/tmp/holdfast-services"}/${name}.env`;
  const vars: Record<string, string | undefined> = {};
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (match) vars[match[1]!] = match[2]!.replace(/^'(.*)'$/, "$1");
    }
  }
  return { ...vars, ...pick(process.env, Object.keys(vars)) };
}

function pick(env: NodeJS.ProcessEnv, keys: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) if (env[key]) out[key] = env[key];
  return out;
}

function need(env: Record<string, string | undefined>, key: string, service: string): string {
  const value = env[key];
  if (!value) {
    throw new Error(
      `${key} is not set and ${service}.env lacks it: start the service with bash tooling/services/${service}-start.sh (npm test does)`,
    );
  }
  return value;
}
