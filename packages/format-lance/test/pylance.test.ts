import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/protocol";
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
  type Scenario,
  type Verified,
  type Written,
} from "./pylance.js";

/**
 * Lance as its users write it today: pylance 14 writes each scenario's tables (appends,
 * overwrites, deletes, updates, merge_insert, schema evolution, compaction, every index
 * type, tags, branches, a shallow clone, blob columns, stable row ids, the fragment reuse
 * index), holdfast's cleanup retires old versions through the Lance format, and pylance is
 * the oracle afterwards (docs/lance.md, "Interop tests"): it reads every kept version in
 * full with the checksum it had, no longer lists a removed version, and no file is left
 * that no kept version needs, except the named exceptions.
 */
const RETAIN = 2;

export interface ScenarioCase {
  readonly scenario: Scenario;
  /** Tables in cleanup order (a shallow clone before its source). */
  readonly tables: readonly string[];
}

export const SCENARIOS: readonly ScenarioCase[] = [
  { scenario: "history", tables: ["history"] },
  { scenario: "v1-naming", tables: ["v1names"] },
  { scenario: "stable-row-ids", tables: ["rowids"] },
  { scenario: "fragment-reuse", tables: ["reuse"] },
  { scenario: "blobs", tables: ["blobs"] },
  { scenario: "branches", tables: ["branches"] },
  { scenario: "shallow-clone", tables: ["clone", "source"] },
];

/**
 * The versions of `branch` the policy (newest `retain`), tags and branch fork points keep
 * (a Lance branch whose name holds `/`, `dev/sub`, retires like any other).
 */
export function expectedKept(
  table: Written["tables"][string],
  branch = "main",
  retain = RETAIN,
): number[] {
  const versions = branch === "main" ? table.versions : table.branches[branch]!.versions;
  const kept = new Set(versions.slice(-retain));
  for (const tag of Object.values(table.tags)) {
    if ((tag.branch ?? "main") === branch) kept.add(tag.version);
  }
  for (const child of Object.values(table.branches)) {
    if ((child.parentBranch ?? "main") === branch) kept.add(child.parentVersion);
    if (branch !== "main") continue;
    // A branch of a branch shares main's files from its root fork point.
    let at: { parentBranch: string | null; parentVersion: number } | undefined = child;
    while (at && at.parentBranch !== null) at = table.branches[at.parentBranch];
    if (at) kept.add(at.parentVersion);
  }
  return [...kept].filter((v) => versions.includes(v)).sort((a, b) => a - b);
}

const byVersion = (a: number, b: number) => a - b;

function describePylance(siteName: string, makeSite: () => PySite) {
  describe(`pylance 14 tables on ${siteName}: holdfast's cleanup through the Lance format`, () => {
    it.each(SCENARIOS)(
      "$scenario: kept versions read in full as before, removed ones and their files gone",
      {
        timeout: 300_000,
      },
      async ({ scenario, tables }) => {
        const site = makeSite();
        const written = await pylance<Written>(["write", scenario, site.root], site.storageOptions);
        for (const table of tables) {
          const uri = `${site.root}/${table}.lance`;
          const info = written.tables[table]!;
          const before = await pylance<Verified>(["verify", uri], site.storageOptions);
          const ctx = createContext(await site.store(table));
          const format = await openLanceFormat(ctx);
          // The orphan sweep (grace 0) deletes files older than the run's storage second; a
          // file Lance left in the last second (a retried commit's transaction) is swept
          // only once a second has passed (Azurite and RGW stamp whole seconds).
          await sleep(1_100);
          const stats = await cleanup(
            ctx,
            { retainVersions: RETAIN, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
            { format },
          );
          const kept = expectedKept(info);
          const retainedOn = (branch: string) =>
            stats.retained
              .filter((r) => r.branch === branch)
              .map((r) => r.version)
              .sort(byVersion);
          expect(retainedOn("main")).toEqual(kept);

          const after = await pylance<Verified>(["verify", uri], site.storageOptions);
          expect(Object.keys(after.main).map(Number)).toEqual(kept);
          for (const version of kept) {
            expect({ version, read: after.main[String(version)] }).toEqual({
              version,
              read: before.main[String(version)],
            });
          }
          // Every branch retires by the same policy (tags on it and its children's fork
          // points kept); pylance reads every kept version of every branch as before.
          expect(Object.keys(after.branches).sort()).toEqual(Object.keys(before.branches).sort());
          for (const [branch, reads] of Object.entries(after.branches)) {
            const keptOnBranch = expectedKept(info, branch);
            // holdfast names the Lance branch `dev/sub` `dev..sub` (docs/lance.md).
            expect(retainedOn(branch.replaceAll("/", ".."))).toEqual(keptOnBranch);
            expect(Object.keys(reads).map(Number)).toEqual(keptOnBranch);
            for (const version of keptOnBranch) {
              expect({ branch, version, read: reads[String(version)] }).toEqual({
                branch,
                version,
                read: before.branches[branch]![String(version)],
              });
            }
          }
          expect(after.tags).toEqual(before.tags);
          expect(leftovers(await listKeys(ctx.store), after)).toEqual([]);
        }
      },
    );
  });
}

describe("folders holdfast never lists or deletes on a Lance table (local disk)", () => {
  it("_mem_wal/ is never listed or touched; _blobs/ and _fri/ are never deleted", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "v1-naming", site.root], site.storageOptions);
    const store = await site.store("v1names");
    // Objects Lance keeps outside what its manifests name: a MemWAL shard's files (its own
    // WAL and SSTables), a managed blob (named only inside data files), a row map.
    const foreign = [
      "_mem_wal/0f8e4c3a-shard/manifest/1.binpb",
      "_mem_wal/0f8e4c3a-shard/wal/00000001.arrow",
      "_blobs/9b1f2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.blob",
      "_fri/5c6d7e8f-map/stable_partition.lance",
    ];
    for (const key of foreign) {
      await store.put(key, new TextEncoder().encode(key));
    }
    await sleep(1_100);
    const listed: string[] = [];
    const recording = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        if (property !== "list") return value.bind(target);
        return (prefix: string, options?: unknown) => {
          listed.push(prefix);
          return value.call(target, prefix, options);
        };
      },
    });
    const ctx = createContext(recording);
    const format = await openLanceFormat(ctx);
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
      { format },
    );
    expect(stats.retired.length).toBeGreaterThan(0);
    // No listing's range reaches into _mem_wal/ (a prefix "" or "_" would).
    expect(listed.filter((prefix) => "_mem_wal/x".startsWith(prefix))).toEqual([]);
    const keys = await listKeys(store);
    for (const key of foreign) expect(keys).toContain(key);
  });
});

describe("orphans under tree/ (local disk)", () => {
  it("old files no manifest names in a branch's folders are swept by the grace; unknown roots, young files and _mem_wal/ stay", {
    timeout: 180_000,
  }, async () => {
    const site = localPySite();
    const written = await pylance<Written>(["write", "branches", site.root], site.storageOptions);
    const uri = `${site.root}/branches.lance`;
    // A Lance branch without a holdfast name (its segment starts with '.'): never retired.
    const latest = written.tables.branches!.versions.at(-1)!;
    await pylance(["create-branch", uri, ".x", "--from-version", String(latest)], {});
    const before = await pylance<Verified>(["verify", uri], site.storageOptions);
    expect(Object.keys(before.branches).sort()).toEqual([".x", "dev", "dev/sub"]);
    const dir = join(site.dir!, "branches.lance");
    const uuid = "0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9";
    // Files of abandoned commits on dev and dev/sub: data, deletion, index, transaction.
    const swept = [
      "tree/dev/data/0000abandoned0000000000000000000.lance",
      "tree/dev/_deletions/9-9-99.arrow",
      `tree/dev/_indices/${uuid}/page_data.lance`,
      "tree/dev/_transactions/9-abandoned.txn",
      "tree/dev/sub/data/0000abandoned0000000000000000000.lance",
      "tree/dev/sub/_deletions/9-9-99.bin",
      `tree/dev/sub/_indices/${uuid}/index.idx`,
    ];
    const stays = [
      // A MemWAL shard under a branch: never a Lance file to holdfast.
      "tree/dev/_mem_wal/0f8e4c3a-shard/wal/00000001.arrow",
      "tree/dev/sub/_mem_wal/0f8e4c3a-shard/manifest/1.binpb",
      // The root of a branch holdfast does not retire (its kept files are not read).
      "tree/.x/data/0000abandoned0000000000000000000.lance",
      // Under no branch's root: no _refs/branches/ JSON says whose files these are.
      "tree/gone/data/0000abandoned0000000000000000000.lance",
      "tree/gone/_indices/0b1c2d3e-4f50-4617-8283-94a5b6c7d8e9/index.idx",
      // Not a file Lance writes in a branch's folders.
      "tree/dev/notes.txt",
    ];
    const young = "tree/dev/data/0000inflight0000000000000000000.lance";
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    for (const key of [...swept, ...stays, young]) {
      mkdirSync(dirname(join(dir, key)), { recursive: true });
      writeFileSync(join(dir, key), key);
      if (key !== young) utimesSync(join(dir, key), twoHoursAgo, twoHoursAgo);
    }
    const ctx = createContext(await site.store("branches"));
    const format = await openLanceFormat(ctx);
    // The grace with writers possibly active (one hour): the young file is a commit in flight.
    const stats = await cleanup(
      ctx,
      { retainVersions: RETAIN, minVersionAgeMs: 0, orphanGraceMs: 3_600_000 },
      { format },
    );
    expect(stats.objectsDeleted.orphans).toBe(swept.length);
    const keys = await listKeys(ctx.store);
    for (const key of swept)
      expect({ key, left: keys.includes(key) }).toEqual({ key, left: false });
    for (const key of [...stays, young]) {
      expect({ key, left: keys.includes(key) }).toEqual({ key, left: true });
    }
    // Every kept version of every branch reads as before; nothing else is left.
    const after = await pylance<Verified>(["verify", uri], site.storageOptions);
    for (const [branch, reads] of Object.entries(after.branches)) {
      for (const [version, read] of Object.entries(reads)) {
        expect({ branch, version, read }).toEqual({
          branch,
          version,
          read: before.branches[branch]![version],
        });
      }
    }
    expect(after.branches[".x"]).toEqual(before.branches[".x"]);
    expect(leftovers(keys, after).filter((k) => ![...stays, young].includes(k))).toEqual([]);
  });
});

describe("the version hint (local disk)", () => {
  it("a stale hint keeps every version at or above it: no gap above where readers start", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    // Versions 1-8, tag `pinned` on 4, and Lance's own hint from version 4 put back (a
    // commit whose best-effort hint write was lost).
    await pylance<Written>(["write", "stale-hint", site.root], site.storageOptions);
    const uri = `${site.root}/stale.lance`;
    const before = await pylance<Verified>(["verify", uri], site.storageOptions);
    const ctx = createContext(await site.store("stale"));
    const format = await openLanceFormat(ctx);
    const stats = await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
    // Retiring 5-7 (the policy would) leaves 4 and 8 with a gap above the hint: a reader
    // probing upward from 4 stops at the missing 5 and reads version 4 as the latest.
    const retained = stats.retained
      .map((r) => [r.version, r.reason])
      .sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(retained).toEqual([
      [4, "tag"],
      [5, "version-hint"],
      [6, "version-hint"],
      [7, "version-hint"],
      [8, "latest"],
    ]);
    expect(stats.retired.map((r) => r.version).sort()).toEqual([1, 2, 3]);
    const after = await pylance<Verified>(["verify", uri], site.storageOptions);
    expect(after.latest).toBe(8);
    expect(Object.keys(after.main).map(Number)).toEqual([4, 5, 6, 7, 8]);
    for (const v of [4, 5, 6, 7, 8]) expect(after.main[String(v)]).toEqual(before.main[String(v)]);
    // Once Lance's next commit writes a fresh hint, the next cleanup retires 4's followers.
    const hint = await ctx.store.get("_versions/latest_version_hint.json");
    expect(new TextDecoder().decode(hint!.body)).toBe('{"version":4}');
  });

  it("an unreadable hint stops the cleanup: nothing retired, no retirement record left", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "v1-naming", site.root], site.storageOptions);
    const store = await site.store("v1names");
    await store.put("_versions/latest_version_hint.json", new TextEncoder().encode("{version"));
    const ctx = createContext(store);
    const format = await openLanceFormat(ctx);
    await expect(
      cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format }),
    ).rejects.toMatchObject({ kind: "invalid-input", code: "LANCE_MALFORMED_HINT" });
    const versions = (await listKeys(store)).filter((k) => k.endsWith(".manifest"));
    expect(versions).toHaveLength(7);
    expect((await listKeys(store)).filter((k) => k.startsWith("_holdfast/retirement"))).toEqual([]);
  });
});

describePylance("local disk", localPySite);
describePylance("Ceph RGW", rgwPySite);
describePylance("Azurite", azuritePySite);
