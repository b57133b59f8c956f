import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { openS3Store } from "@holdfast/backends-s3";
import { type ObjectStore, ulidIds } from "@holdfast/conditional-store";
import { rgwEnv, rgwLanceOptions } from "@holdfast/test-support";
import * as lancedb from "@lancedb/lancedb";

/** The table LanceDB writes in the server's Lance tests. */
export const TABLE = "events";

const ids = ulidIds();

/** Where LanceDB writes a table and the holdfast store rooted at its folder (`{uri}/events.lance`). */
export interface LanceSite {
  readonly name: "local" | "rgw";
  readonly uri: string;
  readonly storageOptions: Record<string, string>;
  /** The table folder as the server serves it (probed, as `holdfast serve` opens it). */
  store(): Promise<ObjectStore>;
  dispose(): Promise<void>;
}

/** A fresh local directory: LanceDB writes plain files, the local backend reads them in place. */
export async function localLanceSite(): Promise<LanceSite> {
  const dir = await mkdtemp(join(tmpdir(), "holdfast-server-lance-"));
  return {
    name: "local",
    uri: dir,
    storageOptions: {},
    store: async () => createLocalStore({ root: join(dir, `${TABLE}.lance`) }),
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A fresh prefix on the test RGW, reached by LanceDB through its S3 storage options. */
export async function rgwLanceSite(): Promise<LanceSite> {
  const env = rgwEnv();
  const prefix = `srv-lance-${ids.next().slice(-12).toLowerCase()}`;
  return {
    name: "rgw",
    uri: `s3://${env.bucket}/${prefix}`,
    storageOptions: rgwLanceOptions(env),
    store: () =>
      openS3Store({
        bucket: env.bucket,
        prefix: `${prefix}/${TABLE}.lance`,
        region: env.region,
        endpoint: env.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: env.accessKeyId, secretAccessKey: env.secretAccessKey },
      }),
    dispose: async () => {},
  };
}

/** What a full read of one version returned: its row count and a checksum of every row. */
export interface VersionRead {
  readonly rows: number;
  readonly checksum: string;
}

/** Opens the table through a fresh connection, runs `use`, closes it. */
export async function withTable<T>(
  site: LanceSite,
  use: (table: lancedb.Table) => Promise<T>,
): Promise<T> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.openTable(TABLE);
  try {
    return await use(table);
  } finally {
    table.close();
  }
}

/** Reads every row of the checked-out version (sorted) and hashes them. */
export async function readAll(table: lancedb.Table): Promise<VersionRead> {
  const all = (await table.query().toArray()) as { id: number; v: string }[];
  const lines = all.map((r) => `${Number(r.id)}\t${String(r.v)}`).sort();
  return {
    rows: all.length,
    checksum: createHash("sha256").update(lines.join("\n")).digest("hex"),
  };
}

/** Checks a version out (a number, or a tag name) through a fresh connection and reads it in full. */
export function readVersion(site: LanceSite, version: number | string): Promise<VersionRead> {
  return withTable(site, async (table) => {
    await table.checkout(version);
    return readAll(table);
  });
}

/** Version numbers LanceDB lists, through a fresh connection. */
export function lanceVersions(site: LanceSite): Promise<number[]> {
  return withTable(site, async (t) => (await t.listVersions()).map((v) => v.version));
}

/** LanceDB's tags: name → `{ branch, version }` (branch `null` for main). */
export function lanceTags(
  site: LanceSite,
): Promise<Record<string, { branch: string | null; version: number }>> {
  return withTable(site, async (t) => {
    const listed = await (await t.tags()).list();
    return Object.fromEntries(
      Object.entries(listed).map(([name, tag]) => [
        name,
        { branch: (tag as { branch?: string | null }).branch ?? null, version: tag.version },
      ]),
    );
  });
}

/** The table LanceDB wrote, with its reads before any cleanup. */
export interface LanceHistory {
  /** Main's versions as LanceDB lists them. */
  readonly versions: number[];
  /** Each of main's versions read in full. */
  readonly reads: Map<number, VersionRead>;
  /** Branch `dev` (forked at 3): its latest version and that version read in full. */
  readonly dev: { latest: number; read: VersionRead };
}

/**
 * LanceDB writes a table as an application would: main 1-7 (create, then overwrites and
 * appends, so old versions own files of their own), LanceDB's tag `lance-2` on 2, and
 * LanceDB's branch `dev` forked at 3 with two commits of its own (its versions 4 and 5).
 */
export async function writeLanceTable(site: LanceSite): Promise<LanceHistory> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const row = (id: number) => ({ id, v: `row-${id}` });
  const table = await db.createTable(TABLE, [row(1), row(2)]);
  for (let i = 2; i <= 7; i += 1) {
    const rows = [row(i * 10), row(i * 10 + 1)];
    await table.add(rows, i % 2 === 0 ? { mode: "overwrite" } : {});
  }
  await (await table.tags()).create("lance-2", 2);
  const dev = await (await table.branches()).create("dev", "main", 3);
  await dev.add([row(500)]);
  await dev.add([row(501)]);
  const devRead = { latest: await dev.version(), read: await readAll(dev) };
  dev.close();
  const versions = (await table.listVersions()).map((v) => v.version);
  const reads = new Map<number, VersionRead>();
  for (const version of versions) {
    await table.checkout(version);
    reads.set(version, await readAll(table));
  }
  table.close();
  return { versions, reads, dev: devRead };
}
