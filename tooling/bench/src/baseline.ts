import { batches, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { ManifestSchema, parseManifestKey, VERSIONS_PREFIX } from "@holdfast/dataset";

/**
 * The unprotected baseline: what a cleanup without leases, references or retirement does.
 * Lists the manifests, reads every one, keeps the newest `retain` per branch, then
 * batch-deletes the data files only retired versions name and the retired manifests.
 * No storage-time probe, no records, no censuses: the floor holdfast is measured against.
 */
export async function baselineCleanup(
  store: ObjectStore,
  retain: number,
  concurrency = 8,
): Promise<number> {
  const perBranch = new Map<string, { key: string; version: number }[]>();
  for await (const meta of listAll(store, VERSIONS_PREFIX)) {
    const parsed = parseManifestKey(meta.key);
    if (!parsed) continue;
    const list = perBranch.get(parsed.branch) ?? [];
    list.push({ key: meta.key, version: parsed.version });
    perBranch.set(parsed.branch, list);
  }
  const keep = new Set<string>();
  const retiredFiles: string[][] = [];
  const retiredManifests: string[] = [];
  for (const list of perBranch.values()) {
    list.sort((a, b) => a.version - b.version);
    // Manifest reads run `concurrency` at a time, like holdfast's, so wall times compare.
    for (let start = 0; start < list.length; start += concurrency) {
      const chunk = list.slice(start, start + concurrency);
      const bodies = await Promise.all(chunk.map((entry) => store.get(entry.key)));
      for (const [j, got] of bodies.entries()) {
        if (!got) continue;
        const i = start + j;
        const manifest = ManifestSchema.parse(JSON.parse(new TextDecoder().decode(got.body)));
        const files = manifest.files.map((f) => f.key);
        if (i >= list.length - retain) for (const f of files) keep.add(f);
        else {
          retiredFiles.push(files);
          retiredManifests.push(list[i]!.key);
        }
      }
    }
  }
  const doomed = [...new Set(retiredFiles.flat())].filter((f) => !keep.has(f));
  let deleted = 0;
  const all = [...batches([...doomed, ...retiredManifests], store.capabilities.maxBatchDelete)];
  for (let start = 0; start < all.length; start += concurrency) {
    const results = await Promise.all(
      all.slice(start, start + concurrency).map((batch) => store.deleteMany(batch)),
    );
    for (const r of results) deleted += r.deleted.length;
  }
  return deleted;
}
