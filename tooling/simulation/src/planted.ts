import { isHoldfastError } from "@holdfast/conditional-store";
import type { DatasetFormat, VersionEntry } from "@holdfast/dataset";

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
 * Planted fault `late-validation` (tests only): a format that validates manifests only
 * when their files are used, as cleanup did before it refused before the commit
 * (docs/protocol.md, Cleanup "Refuse before the commit"). A manifest the format refuses
 * reads as one with the stored ETag and no parent whose file list throws the refusal, so
 * the pre-commit read, the plan and the reference census pass it and the run commits; the
 * refusal comes at the deletion, after the commit, and the record stays committed.
 */
export function lateValidationFormat(base: DatasetFormat): DatasetFormat {
  return {
    ...base,
    async readManifest(ctx, branch, version) {
      try {
        return await base.readManifest(ctx, branch, version);
      } catch (error) {
        if (!isHoldfastError(error, "invalid-input") || error.code !== "MALFORMED_OBJECT") {
          throw error;
        }
        const meta = await ctx.store.head(base.manifestKey(branch, version));
        if (!meta) return null;
        return {
          etag: meta.etag,
          parent: null,
          get files(): never {
            throw error;
          },
        };
      }
    },
  };
}
