/**
 * `npm run demo:lance`: a Lance table cleaned safely. LanceDB writes a table; a reader
 * opens an old version; Lance's own cleanup (on a copy) deletes its files under the
 * reader; holdfast's cleanup keeps the version while the reader's lease lasts, and
 * retires it afterwards. See docs/lance.md.
 */
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import { withLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import * as lancedb from "@lancedb/lancedb";
import { openLanceFormat } from "../src/index.js";

const TABLE = "events";
const rows = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({ id: from + i, v: `event-${from + i}` }));

/** Runs the demo in `root` (created; an existing demo there is replaced); `log` prints. */
export async function runLanceDemo(root: string, log: (line: string) => void): Promise<void> {
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const holdfastDir = join(root, "holdfast");
  const lanceDir = join(root, "lance-copy");

  log(`1. LanceDB writes ${holdfastDir}/${TABLE}.lance: 6 versions, a tag on version 3`);
  const db = await lancedb.connect(holdfastDir);
  const table = await db.createTable(TABLE, rows(1000, 0));
  await table.add(rows(500, 1000));
  await table.add(rows(1000, 5000), { mode: "overwrite" });
  await table.delete("id % 10 = 0");
  await table.add(rows(100, 9000));
  await table.add(rows(1000, 20000), { mode: "overwrite" });
  table.close();
  // Lance's cleanup refuses to run while an old version is tagged: the copy has no tag.
  cpSync(holdfastDir, lanceDir, { recursive: true, preserveTimestamps: true });
  const tagged = await db.openTable(TABLE);
  await (await tagged.tags()).create("audit", 3);
  tagged.close();

  log("2. Without holdfast: a reader opens version 2, then Lance's own cleanup runs (on a copy)");
  const copyDb = await lancedb.connect(lanceDir);
  const reader = await copyDb.openTable(TABLE);
  await reader.checkout(2);
  const writer = await copyDb.openTable(TABLE);
  await writer.optimize({
    cleanupOlderThan: new Date(Date.now() + 60_000),
    deleteUnverified: true,
  });
  writer.close();
  try {
    await reader.query().toArray();
    log("   the reader's read succeeded (unexpected)");
  } catch (error) {
    log(`   the reader's read FAILS: ${String(error).split("\n")[0]?.slice(0, 140)}`);
  }
  reader.close();

  log("3. With holdfast: the reader holds a lease on version 2 while it reads");
  const ctx = createContext(createLocalStore({ root: join(holdfastDir, `${TABLE}.lance`) }));
  const format = await openLanceFormat(ctx);
  const clean = () => cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
  await withLease(ctx, { branch: "main", version: 2, ttlMs: 60_000, format }, async () => {
    const leased = await (await lancedb.connect(holdfastDir)).openTable(TABLE);
    await leased.checkout(2);
    const stats = await clean();
    log(
      `   holdfast cleanup retired versions ${stats.retired.map((r) => r.version).join(", ")}; kept ${stats.retained
        .map((r) => `${r.version} (${r.reason})`)
        .join(", ")}`,
    );
    const read = await leased.query().toArray();
    log(`   the reader's read succeeds: ${read.length} rows of version 2`);
    leased.close();
  });

  log("4. The lease has ended: the next cleanup retires version 2");
  const after = await clean();
  log(`   retired ${after.retired.map((r) => r.version).join(", ")}`);
  const final = await (await lancedb.connect(holdfastDir)).openTable(TABLE);
  log(
    `   LanceDB now lists versions ${(await final.listVersions()).map((v) => v.version).join(", ")}`,
  );
  final.close();
}

if (process.argv[1] && resolve(process.argv[1]).endsWith(join("scripts", "demo.ts"))) {
  await runLanceDemo(resolve(process.argv[2] ?? "./holdfast-lance-demo"), (line) =>
    console.log(line),
  );
}
