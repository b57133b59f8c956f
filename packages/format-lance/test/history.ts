import * as lancedb from "@lancedb/lancedb";
import { type LanceSite, readAll, rows, type VersionRead } from "./sites.js";

/** The table every interop test writes. */
export const TABLE = "events";

/** What {@link writeHistory} built: LanceDB's own account of it. */
export interface History {
  /** Every version of main, as LanceDB lists them. */
  readonly versions: number[];
  /** Each version of main read in full before any cleanup. */
  readonly reads: Map<number, VersionRead>;
  /** Tag name → version (on main). */
  readonly tags: Record<string, number>;
  /** The branch, its fork point on main, and its latest read in full. */
  readonly branch: { name: string; parentVersion: number; read: VersionRead };
}

/**
 * Writes a Lance table with LanceDB the way an application would: appends, deletes (deletion
 * files), a BTREE index and its replacement, an overwrite, a tag on an old version and a
 * branch forked from another old version with commits of its own.
 * Main ends at version 10: 1 create, 2 add, 3 delete, 4 index, 5 add, 6 overwrite, 7 add,
 * 8 delete, 9 index (a new uuid), 10 add. Tag `keep` → 2; branch `feature` forks at 3.
 */
export async function writeHistory(
  site: LanceSite,
  options: { manifestNaming?: "v1" | "v2" } = {},
): Promise<History> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const storageOptions: Record<string, string> =
    options.manifestNaming === "v1" ? { new_table_enable_v2_manifest_paths: "false" } : {};
  const table = await db.createTable(TABLE, rows(200, 0), { storageOptions });
  await table.add(rows(200, 200));
  await table.delete("id % 7 = 0");
  await table.createIndex("id", { config: lancedb.Index.btree() });
  await table.add(rows(100, 400));
  await table.add(rows(150, 1000), { mode: "overwrite" });
  await table.add(rows(50, 2000));
  await table.delete("id < 1020");
  await table.createIndex("id", { config: lancedb.Index.btree(), replace: true });
  await table.add(rows(20, 3000));

  await (await table.tags()).create("keep", 2);
  const feature = await (await table.branches()).create("feature", "main", 3);
  await feature.add(rows(10, 5000));
  await feature.delete("id = 5001");
  const branchRead = await readAll(feature);
  feature.close();

  const versions = (await table.listVersions()).map((v) => v.version);
  const reads = new Map<number, VersionRead>();
  for (const version of versions) {
    await table.checkout(version);
    reads.set(version, await readAll(table));
  }
  table.close();
  return {
    versions,
    reads,
    tags: { keep: 2 },
    branch: { name: "feature", parentVersion: 3, read: branchRead },
  };
}

/** Reads the branch's latest version in full, through a fresh connection. */
export async function readBranch(site: LanceSite, name: string): Promise<VersionRead> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.openTable(TABLE);
  const branch = await (await table.branches()).checkout(name);
  const read = await readAll(branch);
  branch.close();
  table.close();
  return read;
}

/** Checks a version out through a fresh connection and reads it in full (throws when it is gone). */
export async function readVersion(site: LanceSite, version: number | string): Promise<VersionRead> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.openTable(TABLE);
  try {
    await table.checkout(version);
    return await readAll(table);
  } finally {
    table.close();
  }
}
