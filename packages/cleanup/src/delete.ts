import type { RetirementHandle } from "@holdfast/retirement";
import { DeleteBatcher } from "./batcher.js";
import type { RunState } from "./run-state.js";

/** Files a plan would delete: the orphan sweep must not count them a second time. */
export type PlannedDeletions = Set<string>;

/**
 * Step 5, delete one committed record: data files no retained version names, then the
 * retired manifests. Resolves to whether the record is complete (every retired manifest
 * gone or never there), so it may be finalized.
 */
export async function deleteRetired(
  state: RunState,
  handle: RetirementHandle,
  retainedFiles: Set<string>,
  plannedData: PlannedDeletions,
): Promise<boolean> {
  const { ctx, format, stats, dryRun } = state;
  const { branch } = handle.record;
  const queuedData = new Set<string>();
  const dataBatch = new DeleteBatcher(ctx.store, state.deletePool, state.batchSize, dryRun);
  // Manifests go only after every data file of the record is gone: until then they
  // tell a resumed run what to delete.
  const manifestKeys: string[] = [];
  let complete = true;
  const counted = state.ownRecords.has(handle.key) ? stats.retired : stats.finished;
  for (const entry of handle.record.versions) {
    if (entry.cancelled) continue;
    // Interrupted: stop between versions; what is queued is sent, the record stays
    // committed and the next run or `recover` finishes it.
    if (state.stopping()) {
      complete = false;
      break;
    }
    counted.push({ branch, version: entry.version });
    await state.pool.run(async () => {
      const manifest = await format.readManifest(ctx, branch, entry.version);
      if (!manifest) return; // deleted by an earlier, interrupted run
      if (manifest.etag !== entry.manifestEtag) {
        // Not the manifest that was retired: keep it and everything it names.
        for (const file of manifest.files) retainedFiles.add(file.key);
        complete = false;
        stats.warnings.push(
          `${branch}@${entry.version}: manifest changed since it was drained; kept`,
        );
        return;
      }
      for (const file of manifest.files) {
        if (retainedFiles.has(file.key) || queuedData.has(file.key)) continue;
        queuedData.add(file.key);
        // A plan deletes nothing, so the orphan sweep would see these again.
        if (dryRun) plannedData.add(file.key);
        stats.bytesDeleted += file.size;
        await dataBatch.add(file.key);
      }
      manifestKeys.push(format.manifestKey(branch, entry.version));
    });
  }
  await state.pool.drain();
  stats.objectsDeleted.dataFiles += await dataBatch.flush();
  const manifestBatch = new DeleteBatcher(ctx.store, state.deletePool, state.batchSize, dryRun);
  for (const key of manifestKeys) await manifestBatch.add(key);
  stats.objectsDeleted.manifests += await manifestBatch.flush();
  return complete;
}
