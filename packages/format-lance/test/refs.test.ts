import { cleanup } from "@holdfast/cleanup";
import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import * as lancedb from "@lancedb/lancedb";
import { describe, expect, it } from "vitest";
import {
  autoCleanupOf,
  describeLanceDataset,
  isUnsupportedLance,
  LANCE_MALFORMED_REFERENCE,
  type LanceFeature,
  lanceManifestKey,
  listLanceReferences,
  openLanceFormat,
  readManifestFile,
} from "../src/index.js";
import { TABLE } from "./history.js";
import { type LanceSite, lanceVersions, rgwSite, rows } from "./sites.js";

/**
 * A small LanceDB table on RGW: versions 1-5 on main, tag `v2` → 2, branch `dev` forked
 * at 3 with a commit of its own, and `dev-child` forked from `dev`.
 */
async function smallTable(): Promise<{ site: LanceSite; ctx: ProtocolContext }> {
  const site = rgwSite();
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.createTable(TABLE, rows(20, 0));
  for (let i = 1; i < 5; i += 1) await table.add(rows(20, i * 100), { mode: "overwrite" });
  await (await table.tags()).create("v2", 2);
  const dev = await (await table.branches()).create("dev", "main", 3);
  await dev.add(rows(3, 900));
  const child = await (await table.branches()).create("dev-child", "dev");
  child.close();
  dev.close();
  table.close();
  return { site, ctx: createContext(await site.store(TABLE)) };
}

const cleanupWith = async (ctx: ProtocolContext) =>
  cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format: await openLanceFormat(ctx) });

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a refusal");
}

describe("Lance tags and branches in the reference census (RGW)", () => {
  it("counts tags and branch fork points, following a branch of a branch down to main", {
    timeout: 60_000,
  }, async () => {
    const { site, ctx } = await smallTable();
    const refs = await listLanceReferences(ctx);
    const simplified = refs.map((r) => `${r.reason}:${r.branch}@${r.version}`).sort();
    expect(simplified).toContain("tag:main@2");
    expect(simplified).toContain("branch-lineage:main@3");
    // dev-child forks from dev; its files come from main@3 through dev.
    expect(refs.filter((r) => r.source.endsWith("dev-child.json")).map((r) => r.branch)).toEqual([
      "dev",
      "main",
    ]);
    const stats = await cleanupWith(ctx);
    const retiredOn = (branch: string) =>
      stats.retired
        .filter((r) => r.branch === branch)
        .map((r) => r.version)
        .sort();
    expect(retiredOn("main")).toEqual([1, 4]);
    // dev retires by the same policy: its fork version 3 goes, 4 (its latest and the
    // fork point of dev-child) stays.
    expect(retiredOn("dev")).toEqual([3]);
    expect(retiredOn("dev-child")).toEqual([]);
    expect(await lanceVersions(site, TABLE)).toEqual([2, 3, 5]);
  });

  const failClosed: [
    string,
    LanceFeature | typeof LANCE_MALFORMED_REFERENCE | "MALFORMED_OBJECT",
    (ctx: ProtocolContext) => Promise<unknown>,
  ][] = [
    [
      "an unreadable tag",
      LANCE_MALFORMED_REFERENCE,
      (ctx) => ctx.store.put("_refs/tags/broken.json", new TextEncoder().encode("{not json")),
    ],
    [
      "a tag missing its version",
      LANCE_MALFORMED_REFERENCE,
      (ctx) => ctx.store.put("_refs/tags/odd.json", encodeJson({ branch: null })),
    ],
    [
      "an object under _refs/ that is neither a tag nor a branch",
      "foreign-reference",
      (ctx) => ctx.store.put("_refs/notes/readme.txt", new TextEncoder().encode("hi")),
    ],
    [
      "a branch folder without its JSON (a zombie or a creation in flight)",
      "zombie-branch",
      (ctx) => ctx.store.delete("_refs/branches/dev-child.json"),
    ],
    [
      "a branch whose parent branch's JSON is gone",
      "zombie-branch",
      async (ctx) => {
        await ctx.store.delete("_refs/branches/dev.json");
      },
    ],
    [
      "holdfast reference state other than a tag intent on a Lance dataset",
      "holdfast-references",
      (ctx) => ctx.store.put("_holdfast/refs/fences/x.json", encodeJson({})),
    ],
    [
      "an unreadable holdfast tag intent",
      "MALFORMED_OBJECT",
      (ctx) => ctx.store.put("_holdfast/refs/intents/tags/x/1.json", encodeJson({})),
    ],
  ];
  it.each(failClosed)(
    "cleanup stops, retiring nothing, on %s",
    { timeout: 60_000 },
    async (_, expected, damage) => {
      const { site, ctx } = await smallTable();
      await damage(ctx);
      const error = await refusal(cleanupWith(ctx));
      if (expected === LANCE_MALFORMED_REFERENCE || expected === "MALFORMED_OBJECT") {
        expect(isHoldfastError(error, "invalid-input")).toBe(true);
        expect((error as { code?: string }).code).toBe(expected);
      } else {
        expect(isUnsupportedLance(error, expected)).toBe(true);
      }
      expect(await lanceVersions(site, TABLE)).toEqual([1, 2, 3, 4, 5]);
      expect(await ctx.store.list("_holdfast/retirement/")).toMatchObject({ objects: [] });
    },
  );

  it("a detached version is refused before anything is retired", { timeout: 60_000 }, async () => {
    const { site, ctx } = await smallTable();
    const copy = await ctx.store.get(lanceManifestKey("v2", 1));
    if (!copy) throw new Error("version 1 exists");
    await ctx.store.put("_versions/d9223372036854775809.manifest", copy.body);
    const error = await refusal(cleanupWith(ctx));
    expect(isUnsupportedLance(error, "detached-version")).toBe(true);
    expect(await lanceVersions(site, TABLE)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("Lance manifest naming in a listing (RGW)", () => {
  it("a _versions/ mixing V1 and V2 names is refused before anything is retired", {
    timeout: 60_000,
  }, async () => {
    const { site, ctx } = await smallTable();
    const copy = await ctx.store.get(lanceManifestKey("v2", 1));
    if (!copy) throw new Error("version 1 exists");
    await ctx.store.put(lanceManifestKey("v1", 1), copy.body);
    const error = await refusal(cleanupWith(ctx));
    expect(isUnsupportedLance(error, "mixed-naming")).toBe(true);
    await ctx.store.delete(lanceManifestKey("v1", 1));
    expect(await lanceVersions(site, TABLE)).toEqual([1, 2, 3, 4, 5]);
  });
});

describe("describeLanceDataset (what doctor and status report)", () => {
  it("reports naming, versions, format, flags, tags and branches of a LanceDB table", {
    timeout: 60_000,
  }, async () => {
    const { ctx } = await smallTable();
    const report = await describeLanceDataset(ctx, await openLanceFormat(ctx));
    expect(report).toEqual({
      naming: "v2",
      versions: 5,
      latest: 5,
      formatVersion: "0.2",
      readerFeatureFlags: "0",
      autoCleanup: null,
      tags: 1,
      branches: 2,
    });
  });

  it("sees Lance's automatic cleanup settings in a manifest's config", {
    timeout: 60_000,
  }, async () => {
    const { ctx } = await smallTable();
    const got = await ctx.store.get(lanceManifestKey("v2", 5));
    if (!got) throw new Error("version 5 exists");
    const { manifest } = readManifestFile(got.body, "v5");
    expect(autoCleanupOf(manifest)).toBeNull();
    const configured = {
      ...manifest,
      config: { "lance.auto_cleanup.interval": "20", "lance.auto_cleanup.older_than": "14d" },
    };
    expect(autoCleanupOf(configured)).toEqual({ interval: "20", olderThan: "14d" });
  });
});
