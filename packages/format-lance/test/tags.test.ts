import { cleanup } from "@holdfast/cleanup";
import { encodeJson, isHoldfastError, listAll } from "@holdfast/conditional-store";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import {
  createBranch,
  createTag,
  deleteTag,
  getTag,
  type Intent,
  intentKey,
  listTags,
  recoverReferences,
  updateTag,
} from "@holdfast/refs-lifecycle";
import * as lancedb from "@lancedb/lancedb";
import { describe, expect, it } from "vitest";
import { censusLanceReferences, type LanceFormat, openLanceFormat } from "../src/index.js";
import { TABLE } from "./history.js";
import { type LanceSite, lanceVersions, localSite, readAll, rgwSite, rows } from "./sites.js";

/** Versions 1-4 of a LanceDB table, each an overwrite of 10 rows (so each version's rows differ). */
async function fourVersions(
  site: LanceSite,
): Promise<{ ctx: ProtocolContext; format: LanceFormat }> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  const table = await db.createTable(TABLE, rows(10, 0));
  for (let i = 1; i < 4; i += 1) await table.add(rows(10, i * 100), { mode: "overwrite" });
  table.close();
  const ctx = createContext(await site.store(TABLE));
  return { ctx, format: await openLanceFormat(ctx) };
}

async function openTable(site: LanceSite): Promise<lancedb.Table> {
  const db = await lancedb.connect(site.uri, { storageOptions: site.storageOptions });
  return db.openTable(TABLE);
}

/** Tag name → version, as LanceDB lists them. */
async function lanceTags(site: LanceSite): Promise<Record<string, number>> {
  const table = await openTable(site);
  const listed = await (await table.tags()).list();
  table.close();
  return Object.fromEntries(Object.entries(listed).map(([name, tag]) => [name, tag.version]));
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

const TIMEOUT = 180_000;

const sites: [string, () => LanceSite][] = [
  ["local disk", localSite],
  ["Ceph RGW", rgwSite],
];

for (const [where, makeSite] of sites) {
  describe(`holdfast tags on a Lance table are Lance tags (${where})`, () => {
    it("a tag holdfast creates is listed and checked out by LanceDB; holdfast's delete removes it for LanceDB", {
      timeout: TIMEOUT,
    }, async () => {
      const site = makeSite();
      const { ctx, format } = await fourVersions(site);
      const table = await openTable(site);
      await table.checkout(2);
      const before = await readAll(table);
      table.close();

      const tag = await createTag(
        ctx,
        { name: "keep-2", target: { branch: "main", version: 2 } },
        { format },
      );
      expect(tag.target).toEqual({ branch: "main", version: 2 });
      expect(await lanceTags(site)).toEqual({ "keep-2": 2 });
      // Checkout by tag name opens version 2 through the tag's manifestSize.
      const byTag = await openTable(site);
      await byTag.checkout("keep-2");
      expect(await byTag.version()).toBe(2);
      expect(await readAll(byTag)).toEqual(before);
      byTag.close();

      // The canonical file is Lance's JSON; holdfast's lifecycle state is under _holdfast/ only.
      const stored = JSON.parse(
        new TextDecoder().decode((await ctx.store.get("_refs/tags/keep-2.json"))!.body),
      );
      expect(Object.keys(stored).sort()).toEqual(
        ["branch", "createdAt", "manifestSize", "metadata", "updatedAt", "version"].sort(),
      );
      expect(stored).toMatchObject({ branch: null, version: 2, metadata: {} });
      expect(stored.manifestSize).toBe((await ctx.store.head(format.manifestKey("main", 2)))!.size);
      const refsKeys: string[] = [];
      for await (const meta of listAll(ctx.store, "_refs/")) refsKeys.push(meta.key);
      expect(refsKeys).toEqual(["_refs/tags/keep-2.json"]);

      // holdfast's cleanup keeps the tagged version (the format's census, by default).
      const stats = await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
      expect(stats.retired.map((r) => r.version).sort()).toEqual([1, 3]);
      expect(await lanceVersions(site, TABLE)).toEqual([2, 4]);

      // Moving the tag keeps Lance's createdAt; LanceDB follows it.
      await updateTag(ctx, { name: "keep-2", target: { branch: "main", version: 4 } }, { format });
      const moved = JSON.parse(
        new TextDecoder().decode((await ctx.store.get("_refs/tags/keep-2.json"))!.body),
      );
      expect(moved.createdAt).toBe(stored.createdAt);
      expect(moved.updatedAt).not.toBe(stored.updatedAt);
      expect(await lanceTags(site)).toEqual({ "keep-2": 4 });

      await deleteTag(ctx, "keep-2", { format });
      expect(await lanceTags(site)).toEqual({});
      const gone = await openTable(site);
      expect(await failure(gone.checkout("keep-2"))).toBeInstanceOf(Error);
      gone.close();
      const leftovers: string[] = [];
      for await (const meta of listAll(ctx.store, "_holdfast/refs/")) leftovers.push(meta.key);
      expect(leftovers).toEqual([]);
    });

    it("a tag LanceDB creates is read by holdfast, counted by the census and kept by cleanup", {
      timeout: TIMEOUT,
    }, async () => {
      const site = makeSite();
      const { ctx, format } = await fourVersions(site);
      const table = await openTable(site);
      await (await table.tags()).create("lance-1", 1);
      table.close();

      expect((await listTags(ctx, { format })).map((t) => [t.name, t.target])).toEqual([
        ["lance-1", { branch: "main", version: 1 }],
      ]);
      expect(await getTag(ctx, "lance-1", { format })).toMatchObject({ name: "lance-1" });
      expect(await censusLanceReferences(ctx)("main", [1, 2, 3])).toEqual(new Map([[1, "tag"]]));
      const stats = await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
      expect(stats.retired.map((r) => r.version).sort()).toEqual([2, 3]);
      expect(await lanceVersions(site, TABLE)).toEqual([1, 4]);
      // Recovery through the format reads the Lance tag and removes nothing.
      const report = await recoverReferences(ctx, { format });
      expect(report.referenced).toContainEqual(
        expect.objectContaining({ branch: "main", version: 1, reason: "tag" }),
      );
      expect(report.removedOrphans).toEqual([]);
      expect(await lanceTags(site)).toEqual({ "lance-1": 1 });
    });

    it("a tag being written by holdfast (its intent durable, its Lance JSON not yet) keeps its version through cleanup", {
      timeout: TIMEOUT,
    }, async () => {
      const site = makeSite();
      const { ctx, format } = await fourVersions(site);
      // What a publisher that stopped between its intent and its canonical write leaves.
      const intent: Intent = {
        schema: 1,
        intentId: "01JINFLIGHT0000000000000000",
        writerId: "01JWRITER00000000000000000",
        kind: "tag",
        name: "inflight",
        op: "create",
        state: "pending",
        ownershipBoundMs: 15 * 60 * 1000,
        target: { branch: "main", version: 1 },
        prior: null,
        generation: "2026-12-01T00:00:00.000000000Z",
      };
      await ctx.store.put(intentKey("tag", "inflight", intent.intentId), encodeJson(intent));
      expect(await censusLanceReferences(ctx)("main", [1, 2])).toEqual(new Map([[1, "intent"]]));
      const stats = await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
      expect(stats.retired.map((r) => r.version).sort()).toEqual([2, 3]);
      expect(await lanceVersions(site, TABLE)).toEqual([1, 4]);
      // LanceDB lists no tag: the intent is holdfast's, under _holdfast/.
      expect(await lanceTags(site)).toEqual({});
    });

    it("refuses a tag on a branch the table lacks, a name Lance refuses, an absent version and branch writes, leaving nothing behind", {
      timeout: TIMEOUT,
    }, async () => {
      const site = makeSite();
      const { ctx, format } = await fourVersions(site);
      // A tag may name a Lance branch's version (tree/{branch}/_versions/); this table has
      // no branch dev, so there is no such version.
      const onBranch = await failure(
        createTag(ctx, { name: "b", target: { branch: "dev", version: 1 } }, { format }),
      );
      expect((onBranch as { code?: string }).code).toBe("VERSION_NOT_FOUND");
      const lockName = await failure(
        createTag(ctx, { name: "x.lock", target: { branch: "main", version: 1 } }, { format }),
      );
      expect(isHoldfastError(lockName, "invalid-input")).toBe(true);
      const absent = await failure(
        createTag(ctx, { name: "later", target: { branch: "main", version: 99 } }, { format }),
      );
      expect((absent as { code?: string }).code).toBe("VERSION_NOT_FOUND");
      const branch = await failure(
        createBranch(ctx, { name: "dev", parent: { branch: "main", version: 1 } }, { format }),
      );
      expect((branch as { code?: string }).code).toBe("REFS_UNSUPPORTED");
      expect(await lanceTags(site)).toEqual({});
      const leftovers: string[] = [];
      for await (const meta of listAll(ctx.store, "_holdfast/refs/")) leftovers.push(meta.key);
      expect(leftovers).toEqual([]);
    });
  });
}
