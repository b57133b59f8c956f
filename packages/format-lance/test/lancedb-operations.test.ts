import { setTimeout as sleep } from "node:timers/promises";
import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/protocol";
import * as lancedb from "@lancedb/lancedb";
import { describe, expect, it } from "vitest";
import { openLanceFormat } from "../src/index.js";
import {
  azuritePySite,
  leftovers,
  listKeys,
  localPySite,
  type PySite,
  pylance,
  rgwPySite,
  type Verified,
} from "./pylance.js";

/**
 * Tables LanceDB JS 0.31.0 writes through every kind of operation an application uses,
 * cleaned by holdfast and read back by both LanceDB JS and pylance 14 (docs/lance.md,
 * "Interop tests"): appends, an update, merge_insert, a delete, BTREE, BITMAP, LABEL_LIST,
 * full-text, IVF_PQ and IVF_HNSW_SQ indices, added, renamed and dropped columns,
 * `optimize()` (compaction and index optimization), an overwrite, a tag, a restore of an
 * old version, a branch and a shallow clone of a tagged version.
 */
const TABLE = "ops";
const DIM = 8;

function opRows(count: number, from: number) {
  return Array.from({ length: count }, (_, i) => {
    const id = from + i;
    return {
      id,
      v: `word${id % 7} row ${id}`,
      cat: `c${id % 3}`,
      labels: [`l${id % 4}`, `l${(id + 1) % 4}`],
      vector: Array.from({ length: DIM }, (_, d) => ((id * 31 + d * 17) % 97) / 97),
    };
  });
}

/** Writes the table; returns the versions of main and the version the tag `kept` names. */
async function writeOperations(site: PySite): Promise<{ versions: number[]; tagged: number }> {
  const db = await lancedb.connect(site.root, { storageOptions: site.storageOptions });
  const table = await db.createTable(TABLE, opRows(300, 0));
  await table.add(opRows(100, 300));
  await table.update({ where: "id = 20", valuesSql: { cat: "'updated'" } });
  await table
    .mergeInsert("id")
    .whenMatchedUpdateAll()
    .whenNotMatchedInsertAll()
    .execute(opRows(20, 390));
  await table.delete("id % 11 = 0");
  await table.createIndex("id", { config: lancedb.Index.btree() });
  await table.createIndex("cat", { config: lancedb.Index.bitmap() });
  await table.createIndex("labels", { config: lancedb.Index.labelList() });
  await table.createIndex("v", { config: lancedb.Index.fts() });
  await table.createIndex("vector", {
    config: lancedb.Index.ivfPq({ numPartitions: 2, numSubVectors: 2 }),
  });
  const tagged = await table.version();
  await (await table.tags()).create("kept", tagged);
  await table.addColumns([{ name: "double_id", valueSql: "id * 2" }]);
  await table.alterColumns([{ path: "double_id", rename: "twice" }]);
  await table.dropColumns(["twice"]);
  await table.add(opRows(50, 1000));
  await table.optimize();
  await table.createIndex("vector", {
    config: lancedb.Index.hnswSq({ numPartitions: 2 }),
    name: "vector_hnsw",
  });
  const early = 3;
  await table.add(opRows(40, 2000), { mode: "overwrite" });
  await table.checkout(early);
  await table.restore();
  await table.add(opRows(10, 3000));
  const feature = await (await table.branches()).create("feature", "main", tagged);
  await feature.add(opRows(5, 5000));
  feature.close();
  const versions = (await table.listVersions()).map((v) => v.version);
  table.close();
  // LanceDB JS 0.31.0's cloneTable opens the source without the storage options on S3
  // and Azure (it fails resolving the bucket's region, or finding the account), so its
  // shallow clone runs on local disk; pylance's runs on all three (pylance.test.ts).
  if (site.name === "local") {
    const clone = await db.cloneTable("ops-clone", `${site.root}/${TABLE}.lance`, {
      sourceTag: "kept",
    });
    await clone.add(opRows(5, 6000));
    clone.close();
  }
  return { versions, tagged };
}

function describeOperations(siteName: string, makeSite: () => PySite) {
  describe(`LanceDB JS 0.31.0 tables on ${siteName}: every operation, read back by LanceDB and pylance`, () => {
    it("kept versions read in full as before by both, removed ones and their files gone", {
      timeout: 300_000,
    }, async () => {
      const site = makeSite();
      const { versions, tagged } = await writeOperations(site);
      const uri = `${site.root}/${TABLE}.lance`;
      const before = await pylance<Verified>(["verify", uri], site.storageOptions);
      expect(Object.keys(before.main).map(Number)).toEqual(versions);
      const cloned = site.name === "local";
      const cloneUri = `${site.root}/ops-clone.lance`;
      const cloneBefore = cloned
        ? await pylance<Verified>(["verify", cloneUri], site.storageOptions)
        : undefined;
      await sleep(1_100); // the sweep (grace 0) takes files older than the run's second
      // The clone first (it names its source's files; cleaning it never deletes them).
      for (const table of cloned ? ["ops-clone", TABLE] : [TABLE]) {
        const ctx = createContext(await site.store(table));
        const format = await openLanceFormat(ctx);
        await cleanup(
          ctx,
          { retainVersions: 2, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
          { format },
        );
      }
      // Kept: the newest two, the tagged version (also the branch's fork point and the
      // clone's source). pylance reads each as before; the rest are gone.
      const kept = [...new Set([tagged, ...versions.slice(-2)])].sort((a, b) => a - b);
      const after = await pylance<Verified>(["verify", uri], site.storageOptions);
      expect(Object.keys(after.main).map(Number)).toEqual(kept);
      for (const version of kept) {
        expect({ version, read: after.main[String(version)] }).toEqual({
          version,
          read: before.main[String(version)],
        });
      }
      expect(after.branches).toEqual(before.branches);
      expect(after.tags).toEqual(before.tags);
      expect(leftovers(await listKeys(await site.store(TABLE)), after)).toEqual([]);
      if (cloneBefore) {
        const cloneAfter = await pylance<Verified>(["verify", cloneUri], site.storageOptions);
        const cloneKept = Object.keys(cloneBefore.main).slice(-2);
        expect(Object.keys(cloneAfter.main)).toEqual(cloneKept);
        for (const version of cloneKept) {
          expect(cloneAfter.main[version]).toEqual(cloneBefore.main[version]);
        }
      }
      // LanceDB lists the same versions and opens each, through a fresh connection.
      const db = await lancedb.connect(site.root, { storageOptions: site.storageOptions });
      const table = await db.openTable(TABLE);
      expect((await table.listVersions()).map((v) => v.version)).toEqual(kept);
      for (const version of kept) {
        await table.checkout(version);
        expect(await table.countRows()).toBe(after.main[String(version)]!.rows);
      }
      for (const version of versions.filter((v) => !kept.includes(v))) {
        await expect(table.checkout(version)).rejects.toThrow();
      }
      table.close();
    });
  });
}

describeOperations("local disk", localPySite);
describeOperations("Ceph RGW", rgwPySite);
describeOperations("Azurite", azuritePySite);
