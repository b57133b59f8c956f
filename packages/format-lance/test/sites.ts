import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store, type S3StoreOptions } from "@holdfast/backends-s3";
import type { ObjectStore } from "@holdfast/conditional-store";
import { rgwEnv, rgwLanceOptions } from "@holdfast/test-support";
import * as lancedb from "@lancedb/lancedb";
import { ulid } from "ulid";

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
    storageOptions: rgwLanceOptions(env),
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
