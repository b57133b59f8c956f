import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store, type S3StoreOptions } from "@holdfast/backends-s3";
import type { ObjectStore } from "@holdfast/conditional-store";
import * as lancedb from "@lancedb/lancedb";
import { ulid } from "ulid";

/** Env file written by tooling/services/rgw-start.sh. */
const RGW_ENV_FILE = process.env.HOLDFAST_RGW_ENV_FILE ?? "/tmp/holdfast-services/rgw.env";

/** Where LanceDB writes a dataset and how holdfast reaches the same table folder. */
export interface LanceSite {
  readonly name: string;
  /** LanceDB connection URI (a directory or `s3://bucket/prefix`). */
  readonly uri: string;
  readonly storageOptions: Record<string, string>;
  /** holdfast's store rooted at the table folder `{uri}/{table}.lance` (probed, as the CLI opens it). */
  store(table: string): Promise<ObjectStore>;
  /** S3 options of the table folder, for another process to open the same store. */
  readonly s3?: ((table: string) => S3StoreOptions) | undefined;
  /** Local directory LanceDB writes to, for another process to open the same store. */
  readonly dir?: string | undefined;
}

/**
 * A fresh local directory: LanceDB writes plain files there and holdfast's local backend
 * reads the same files (the table folder is the store's root). Removed at process exit.
 */
export function localSite(): LanceSite {
  const { dir, remove } = localDir();
  process.once("exit", remove);
  return {
    name: "local",
    uri: dir,
    storageOptions: {},
    store: async (table) => createLocalStore({ root: join(dir, `${table}.lance`) }),
    dir,
  };
}

/** A fresh prefix on the test RGW, reached by LanceDB through its S3 storage options. */
export function rgwSite(): LanceSite {
  const env = rgwEnv();
  const prefix = `lance-${ulid().slice(-12).toLowerCase()}`;
  const s3 = (table: string): S3StoreOptions => ({
    bucket: env.bucket,
    prefix: `${prefix}/${table}.lance`,
    region: env.region,
    endpoint: env.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
  });
  return {
    name: "rgw",
    uri: `s3://${env.bucket}/${prefix}`,
    storageOptions: {
      aws_endpoint: env.endpoint,
      aws_access_key_id: env.accessKeyId,
      aws_secret_access_key: env.secretAccessKey,
      aws_region: env.region,
      allow_http: "true",
      aws_virtual_hosted_style_request: "false",
    },
    store: (table) => openS3Store(s3(table)),
    s3,
  };
}

/** A fresh local directory (for LanceDB, and for reading its files with node:fs). */
export function localDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "holdfast-lance-"));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One row of the test tables. */
export type Row = {
  id: number;
  v: string;
};

/** `count` rows with ids from `from`. */
export function rows(count: number, from: number): Row[] {
  return Array.from({ length: count }, (_, i) => ({ id: from + i, v: `row-${from + i}` }));
}

/** What a full read of one version returned: its row count and a checksum of every row. */
export interface VersionRead {
  readonly rows: number;
  readonly checksum: string;
}

/** Reads every row of the table's checked-out version (sorted by id) and hashes them. */
export async function readAll(table: lancedb.Table): Promise<VersionRead> {
  const all = (await table.query().toArray()) as Row[];
  const lines = all.map((r) => `${Number(r.id)}\t${String(r.v)}`).sort();
  const checksum = createHash("sha256").update(lines.join("\n")).digest("hex");
  return { rows: all.length, checksum };
}

/** Reads every listed version of a table in full, through a fresh connection. */
export async function readEveryVersion(
  site: LanceSite,
  tableName: string,
): Promise<Map<number, VersionRead>> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.openTable(tableName);
  const out = new Map<number, VersionRead>();
  for (const { version } of await table.listVersions()) {
    await table.checkout(version);
    out.set(version, await readAll(table));
  }
  table.close();
  return out;
}

/** Version numbers LanceDB lists for a table, through a fresh connection. */
export async function lanceVersions(site: LanceSite, tableName: string): Promise<number[]> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.openTable(tableName);
  const versions = (await table.listVersions()).map((v) => v.version);
  table.close();
  return versions;
}

// --- utils ---

interface RgwEnv {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** The test RGW's settings from the environment or its env file; throws (never skips) when absent. */
function rgwEnv(): RgwEnv {
  const fromFile: Record<string, string> = {};
  if (existsSync(RGW_ENV_FILE)) {
    for (const line of readFileSync(RGW_ENV_FILE, "utf8").split("\n")) {
      const match = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
      if (match) fromFile[match[1]!] = match[2]!;
    }
  }
  const read = (name: string) => process.env[name] ?? fromFile[name];
  const endpoint = read("HOLDFAST_S3_ENDPOINT");
  const bucket = read("HOLDFAST_S3_BUCKET");
  const accessKeyId = read("AWS_ACCESS_KEY_ID");
  const secretAccessKey = read("AWS_SECRET_ACCESS_KEY");
  if (!endpoint || !bucket || !accessKeyId || !secretAccessKey) {
    throw new Error(
      `the real S3 test service is not configured (no HOLDFAST_S3_* / AWS_* in the environment or ${RGW_ENV_FILE}); start it with bash tooling/services/rgw-start.sh`,
    );
  }
  return {
    endpoint,
    bucket,
    region: read("HOLDFAST_S3_REGION") ?? "us-east-1",
    accessKeyId,
    secretAccessKey,
  };
}
