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
