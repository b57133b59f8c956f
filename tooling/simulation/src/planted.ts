import { decodeJson, isHoldfastError } from "@holdfast/conditional-store";
import type { DatasetFormat, FormatManifest, VersionEntry } from "@holdfast/dataset";

/**
 * Planted fault `blind-last-look` (tests only): a format whose branch and version
 * listings are frozen at their first answer, made fresh for each cleanup run. The run's
 * last look (docs/protocol.md, "Commits that reuse files") then finds no manifest added
 * after its plan; with commit intents hidden too (see the cleaner's store) it protects
 * nothing, as before commits that reuse files were protected.
 */
export function frozenFormat(base: DatasetFormat): DatasetFormat {
  let branches: Promise<string[]> | undefined;
  const versions = new Map<string, Promise<VersionEntry[]>>();
  const collect = async (entries: AsyncIterable<VersionEntry>) => {
    const all: VersionEntry[] = [];
    for await (const entry of entries) all.push(entry);
    return all;
  };
  return {
    ...base,
    listBranches(ctx) {
      branches ??= base.listBranches(ctx);
      return branches;
    },
    async *listVersions(ctx, branch) {
      let listed = versions.get(branch);
      if (!listed) {
        listed = collect(base.listVersions(ctx, branch));
        versions.set(branch, listed);
      }
      yield* await listed;
    },
  };
}

/**
 * Planted fault `late-validation` (tests only): a format that does not validate a manifest
 * before the commit, as cleanup did before it refused before the commit (docs/protocol.md,
 * Cleanup "Refuse before the commit"). A manifest a breaker replaced with bytes the format
 * refuses reads as the one it replaced (the stored ETag, that manifest's files: what
 * `broken` says), so the plan, the reference census and the read before the drain pass it
 * and the run drains and commits a version whose manifest is refused.
 */
export function lateValidationFormat(
  base: DatasetFormat,
  broken: ReadonlyMap<string, { readonly original: Uint8Array }>,
): DatasetFormat {
  return {
    ...base,
    async readManifest(ctx, branch, version) {
      try {
        return await base.readManifest(ctx, branch, version);
      } catch (error) {
        const key = base.manifestKey(branch, version);
        const replaced = broken.get(key);
        if (!isHoldfastError(error, "invalid-input") || error.code !== "MALFORMED_OBJECT") {
          throw error;
        }
        const meta = await ctx.store.head(key);
        if (!meta || !replaced) throw error;
        const manifest = decodeJson(replaced.original) as FormatManifest;
        return { etag: meta.etag, parent: manifest.parent ?? null, files: manifest.files };
      }
    },
  };
}
