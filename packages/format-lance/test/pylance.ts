import { openAzureStore } from "@holdfast/backends-azure";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store } from "@holdfast/backends-s3";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import {
  azuriteEnv,
  azuriteLanceOptions,
  rgwEnv,
  rgwLanceOptions,
  runPylanceTables,
} from "@holdfast/test-support";
import { ulid } from "ulid";
import { localDir } from "./sites.js";

// Tables written by pylance (the repo's Python environment: pylance 14, lancedb 0.40), for
// tests of holdfast on Lance as its users write it today (docs/lance.md). The script
// `tooling/python/pylance_tables.py` writes a scenario's tables and reads every version
// back; `@holdfast/test-support` runs it with `$HOLDFAST_PYTHON` and parses its JSON.

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

/** Runs the fixture script and parses its JSON (stderr is attached to a failure). */
export { runPylanceTables as pylance };

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
  const env = rgwEnv();
  const prefix = `pylance-${ulid().slice(-12).toLowerCase()}`;
  return {
    name: "rgw",
    root: `s3://${env.bucket}/${prefix}`,
    storageOptions: rgwLanceOptions(env),
    store: (table) =>
      openS3Store({
        bucket: env.bucket,
        prefix: `${prefix}/${table}.lance`,
        region: env.region,
        endpoint: env.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
      }),
    cli: (table) => ({
      url: `s3://${env.bucket}/${prefix}/${table}.lance`,
      flags: ["--endpoint", env.endpoint, "--region", env.region, "--path-style"],
      env: { AWS_ACCESS_KEY_ID: env.accessKeyId, AWS_SECRET_ACCESS_KEY: env.secretAccessKey },
    }),
  };
}

/** A fresh prefix on the test Azurite (pylance through object_store's Azure options). */
export function azuritePySite(): PySite {
  const env = azuriteEnv();
  const { connectionString, container } = env;
  const prefix = `pylance-${ulid().slice(-12).toLowerCase()}`;
  return {
    name: "azurite",
    root: `az://${container}/${prefix}`,
    storageOptions: azuriteLanceOptions(env),
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
