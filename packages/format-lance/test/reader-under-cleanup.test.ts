import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/protocol";
import * as lancedb from "@lancedb/lancedb";
import { afterEach, describe, expect, it } from "vitest";
import { openLanceFormat } from "../src/index.js";
import { TABLE } from "./history.js";
import {
  type LanceSite,
  lanceVersions,
  localSite,
  readAll,
  rgwSite,
  rows,
  type VersionRead,
} from "./sites.js";

/**
 * The failure of docs/lance.md "The failure this prevents": a reader process holds an old
 * version open through LanceDB while a cleanup runs. Lance's own cleanup deletes the
 * version's files under it and the read fails; with holdfast the reader holds a lease,
 * the cleanup keeps the version, the read succeeds, and a cleanup after the lease ends
 * retires it.
 */
const here = dirname(fileURLToPath(import.meta.url));
const readerScript = join(here, "fixtures", "reader.ts");
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

type Reply =
  | { step: "opened" }
  | { step: "read"; read: VersionRead }
  | { step: "failed"; message: string };

function startReader(): ChildProcess {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@holdfast/source", readerScript],
    { cwd: dirname(here), stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  children.push(child);
  return child;
}

function reply(child: ChildProcess): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`reader exited (${code})`));
    child.once("message", (message) => {
      child.off("exit", onExit);
      resolve(message as Reply);
    });
    child.once("exit", onExit);
  });
}

/** Versions 1-4, each an overwrite: version 1's data files belong to version 1 alone. */
async function overwrittenTable(site: LanceSite): Promise<Map<number, VersionRead>> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.createTable(TABLE, rows(300, 0));
  for (let i = 1; i < 4; i += 1) await table.add(rows(300, i * 1000), { mode: "overwrite" });
  const reads = new Map<number, VersionRead>();
  for (const version of [1, 2, 3, 4]) {
    await table.checkout(version);
    reads.set(version, await readAll(table));
  }
  table.close();
  return reads;
}

function describeSeed(siteName: string, makeSite: () => LanceSite) {
  describe(`invariant 1: a reader holding an old Lance version while cleanup runs (${siteName})`, () => {
    it("Lance's own cleanup deletes the version under a LanceDB reader: its read fails", {
      timeout: 120_000,
    }, async () => {
      const site = makeSite();
      await overwrittenTable(site);
      const reader = startReader();
      reader.send({ uri: site.uri, storageOptions: site.storageOptions, table: TABLE, version: 1 });
      expect(await reply(reader)).toEqual({ step: "opened" });

      const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
      const writer = await db.openTable(TABLE);
      const stats = await writer.optimize({
        cleanupOlderThan: new Date(Date.now() + 60_000),
        deleteUnverified: true,
      });
      writer.close();
      expect(stats.prune.oldVersionsRemoved).toBe(3);

      const answer = reply(reader);
      reader.send("read");
      const result = await answer;
      expect(result.step).toBe("failed");
      expect(result.step === "failed" && /not found/i.test(result.message)).toBe(true);
    });

    it("with holdfast the leased version is kept while the reader reads, and retired after the lease ends", {
      timeout: 120_000,
    }, async () => {
      const site = makeSite();
      const before = await overwrittenTable(site);
      const ctx = createContext(await site.store(TABLE));
      const format = await openLanceFormat(ctx);
      const holdfastCleanup = () =>
        cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });

      const reader = startReader();
      reader.send({
        uri: site.uri,
        storageOptions: site.storageOptions,
        table: TABLE,
        version: 1,
        lease: {
          store: site.dir ? { root: join(site.dir, `${TABLE}.lance`) } : { s3: site.s3?.(TABLE) },
          ttlMs: 60_000,
        },
      });
      expect(await reply(reader)).toEqual({ step: "opened" });

      const during = await holdfastCleanup();
      expect(during.retained).toContainEqual(
        expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
      );
      expect(during.retired.map((r) => r.version).sort()).toEqual([2, 3]);

      const answer = reply(reader);
      reader.send("read");
      expect(await answer).toEqual({ step: "read", read: before.get(1) });
      await new Promise((resolve) => reader.once("exit", resolve));
      expect(await lanceVersions(site, TABLE)).toEqual([1, 4]);

      // The lease is released: the next cleanup retires version 1.
      const after = await holdfastCleanup();
      expect(after.retired.map((r) => r.version)).toEqual([1]);
      expect(await lanceVersions(site, TABLE)).toEqual([4]);
    });
  });
}

describeSeed("Ceph RGW (S3)", rgwSite);
describeSeed("local disk", localSite);
