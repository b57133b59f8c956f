import { cleanup } from "@holdfast/cleanup";
import { isHoldfastError } from "@holdfast/conditional-store";
import type { DatasetFormat, VersionEntry } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  createTag,
  deleteTag,
  type FormatEntry,
  FormatRegistry,
  getTag,
  holdfastFormatEntry,
  listTags,
  recoverReferences,
  referenceCodecOf,
} from "@holdfast/refs-lifecycle";
import type { ReferenceCensus } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";

/** A dataset written by the format's own writer, and how to reach it. */
export interface FormatFixture {
  readonly ctx: ProtocolContext;
  readonly format: DatasetFormat;
  /** The branch the fixture wrote (at least three versions, each naming files of its own). */
  readonly branch: string;
  /** The reference census cleanup needs on this format. @default cleanup's own */
  readonly referenceCensus?: ReferenceCensus | undefined;
}

export interface FormatContractOptions {
  /** Writes a fresh dataset with the format's native writer (holdfast's commits, LanceDB, ...). */
  readonly create: () => Promise<FormatFixture>;
  /** How an application registers the format (`holdfastFormatEntry`, `lanceFormatEntry`, ...). */
  readonly entry: FormatEntry;
  /** Per-test timeout. @default 60 s */
  readonly timeoutMs?: number | undefined;
}

/**
 * The contract every `DatasetFormat` keeps, so leases, retirement, cleanup and the
 * reference lifecycle (tags, recovery) route every manifest key, version listing,
 * existence check and reference file through it (docs/lance.md; docs/protocol.md). Run on
 * a format whose keys differ from holdfast's (Lance), any path that bypasses the format
 * fails here. Call once per format and store configuration, at top level of a
 * test file: `describeDatasetFormatContract("lance on RGW", { create })`.
 */
export function describeDatasetFormatContract(name: string, options: FormatContractOptions): void {
  const timeout = options.timeoutMs ?? 60_000;
  describe(`DatasetFormat contract: ${name}`, () => {
    it("F0 a registry with the format's entry detects the dataset and opens it in this format", {
      timeout,
    }, async () => {
      const { ctx, format, branch } = await options.create();
      const registry = new FormatRegistry(holdfastFormatEntry);
      if (options.entry !== holdfastFormatEntry) registry.register(options.entry);
      expect((await registry.detect(ctx)).name).toBe(options.entry.name);
      const opened = await registry.open(ctx);
      expect(opened.resolved.name).toBe(options.entry.name);
      expect(opened.resolved.format.name).toBe(format.name);
      const viaRegistry = (await list(opened.resolved.format, ctx, branch)).map((e) => e.key);
      expect(viaRegistry).toEqual((await list(format, ctx, branch)).map((e) => e.key));
      expect(await opened.resolved.format.latestVersion(ctx, branch)).toBe(
        (await list(format, ctx, branch)).at(-1)!.version,
      );
    });

    it("F1 lists the branch and its versions in ascending order; manifest keys round-trip", {
      timeout,
    }, async () => {
      const { ctx, format, branch } = await options.create();
      expect(await format.listBranches(ctx)).toContain(branch);
      const entries = await list(format, ctx, branch);
      expect(entries.length).toBeGreaterThanOrEqual(3);
      const versions = entries.map((e) => e.version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      expect(new Set(versions).size).toBe(versions.length);
      for (const entry of entries) {
        expect(entry.branch).toBe(branch);
        expect(format.manifestKey(branch, entry.version)).toBe(entry.key);
        expect(format.parseManifestKey(entry.key)).toEqual({ branch, version: entry.version });
        expect(await ctx.store.head(entry.key)).not.toBeNull();
      }
    });

    it("F2 every listed version's manifest names files under dataPrefix that are data keys and exist", {
      timeout,
    }, async () => {
      const { ctx, format, branch } = await options.create();
      for (const entry of await list(format, ctx, branch)) {
        const manifest = await format.readManifest(ctx, branch, entry.version);
        if (!manifest) throw new Error(`version ${entry.version} listed but unreadable`);
        expect(manifest.etag).toBe(entry.etag);
        expect(manifest.files.length).toBeGreaterThan(0);
        for (const file of manifest.files) {
          expect(file.key.startsWith(format.dataPrefix)).toBe(true);
          expect({ key: file.key, data: format.isDataKey(file.key) }).toEqual({
            key: file.key,
            data: true,
          });
          expect({ key: file.key, present: (await ctx.store.head(file.key)) !== null }).toEqual({
            key: file.key,
            present: true,
          });
        }
      }
      // Manifests and holdfast's own objects are never data.
      const [first] = await list(format, ctx, branch);
      expect(format.isDataKey(first!.key)).toBe(false);
      expect(format.isDataKey("_holdfast/leases/x")).toBe(false);
    });

    it("F3 an absent version reads as null and has no manifest object", { timeout }, async () => {
      const { ctx, format, branch } = await options.create();
      const entries = await list(format, ctx, branch);
      const absent = entries.at(-1)!.version + 1000;
      expect(await format.readManifest(ctx, branch, absent)).toBeNull();
      expect(await ctx.store.head(format.manifestKey(branch, absent))).toBeNull();
    });

    it("F4 a lease through the format admits a listed version and refuses an absent one", {
      timeout,
    }, async () => {
      const { ctx, format, branch } = await options.create();
      const entries = await list(format, ctx, branch);
      const version = entries[0]!.version;
      const lease = await acquireLease(ctx, { branch, version, ttlMs: 30_000, format });
      expect(lease.manifestKey).toBe(entries[0]!.key);
      await releaseLease(ctx, lease);
      let error: unknown;
      try {
        await acquireLease(ctx, {
          branch,
          version: entries.at(-1)!.version + 1000,
          ttlMs: 30_000,
          format,
        });
      } catch (e) {
        error = e;
      }
      expect(isHoldfastError(error, "not-found")).toBe(true);
      expect((error as { code?: string }).code).toBe("VERSION_NOT_FOUND");
    });

    it("F5 cleanup through the format retires all but the newest version, keeping a leased one and every file kept versions name", {
      timeout,
    }, async () => {
      const { ctx, format, branch, referenceCensus } = await options.create();
      const entries = await list(format, ctx, branch);
      const leased = entries[0]!.version;
      const latest = entries.at(-1)!.version;
      const lease = await acquireLease(ctx, { branch, version: leased, ttlMs: 60_000, format });
      const stats = await cleanup(
        ctx,
        { retainVersions: 1, minVersionAgeMs: 0, branches: [branch] },
        { format, ...(referenceCensus ? { referenceCensus } : {}) },
      );
      await releaseLease(ctx, lease);
      const left = (await list(format, ctx, branch)).map((e) => e.version);
      expect(left).toContain(latest);
      expect(left).toContain(leased);
      for (const { version } of stats.retired) {
        expect(await ctx.store.head(format.manifestKey(branch, version))).toBeNull();
      }
      expect(stats.retired.length).toBeGreaterThan(0);
      // Finalization checked the retired manifests through the format: no record is left.
      expect(stats.warnings.filter((w) => w.includes("finalize"))).toEqual([]);
      expect(await keysUnder(ctx, "_holdfast/retirement/")).toEqual([]);
      for (const version of left) {
        const manifest = await format.readManifest(ctx, branch, version);
        for (const file of manifest?.files ?? []) {
          expect({ key: file.key, present: (await ctx.store.head(file.key)) !== null }).toEqual({
            key: file.key,
            present: true,
          });
        }
      }
    });

    it("F6 a tag through the format names a listed version in the format's own reference file; an absent version is refused with nothing left", {
      timeout,
    }, async () => {
      const { ctx, format, branch } = await options.create();
      const entries = await list(format, ctx, branch);
      const target = { branch, version: entries[0]!.version };
      const tag = await createTag(ctx, { name: "contract-keep", target }, { format });
      expect(tag.target).toEqual(target);
      const stored = await ctx.store.get("_refs/tags/contract-keep.json");
      if (!stored) throw new Error("the tag's canonical file is missing");
      // The file decodes with the format's own codec (a Lance table's tag is Lance's JSON).
      expect(referenceCodecOf(format).decode("tag", stored.body, stored.key)).toMatchObject({
        target,
      });
      expect((await getTag(ctx, "contract-keep", { format }))?.target).toEqual(target);
      expect((await listTags(ctx, { format })).map((t) => t.name)).toEqual(["contract-keep"]);
      let error: unknown;
      try {
        await createTag(
          ctx,
          { name: "contract-absent", target: { branch, version: entries.at(-1)!.version + 1000 } },
          { format },
        );
      } catch (e) {
        error = e;
      }
      expect((error as { code?: string }).code).toBe("VERSION_NOT_FOUND");
      expect(await ctx.store.head("_refs/tags/contract-absent.json")).toBeNull();
      expect(await keysUnder(ctx, "_holdfast/refs/")).toEqual([]);
    });

    it("F7 cleanup's default reference census follows the format: a tagged version is kept until the tag is deleted", {
      timeout,
    }, async () => {
      const { ctx, format, branch } = await options.create();
      const entries = await list(format, ctx, branch);
      const tagged = entries[0]!.version;
      await createTag(
        ctx,
        { name: "contract-keep", target: { branch, version: tagged } },
        { format },
      );
      const policy = { retainVersions: 1, minVersionAgeMs: 0, branches: [branch] };
      const first = await cleanup(ctx, policy, { format });
      expect(first.retired.map((r) => r.version)).not.toContain(tagged);
      expect((await list(format, ctx, branch)).map((e) => e.version)).toContain(tagged);
      // Recovery reads the tag through the format and removes nothing.
      const report = await recoverReferences(ctx, { format });
      expect(report.referenced).toContainEqual(
        expect.objectContaining({ branch, version: tagged, reason: "tag" }),
      );
      expect(report.removedOrphans).toEqual([]);
      await deleteTag(ctx, "contract-keep", { format });
      expect(await ctx.store.head("_refs/tags/contract-keep.json")).toBeNull();
      const second = await cleanup(ctx, policy, { format });
      expect(second.retired.map((r) => r.version)).toContain(tagged);
      expect(await format.readManifest(ctx, branch, tagged)).toBeNull();
    });
  });
}

// --- utils ---

async function keysUnder(ctx: ProtocolContext, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let pageToken: string | undefined;
  do {
    const page = await ctx.store.list(prefix, { pageToken });
    keys.push(...page.objects.map((o) => o.key));
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return keys;
}

async function list(
  format: DatasetFormat,
  ctx: ProtocolContext,
  branch: string,
): Promise<VersionEntry[]> {
  const out: VersionEntry[] = [];
  for await (const entry of format.listVersions(ctx, branch)) out.push(entry);
  return out;
}
