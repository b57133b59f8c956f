import {
  parseRetirementKey,
  RetiredManifestRewrittenError,
  type RetirementHandle,
} from "@holdfast/retirement";
import { DeleteBatcher } from "./batcher.js";
import type { VersionSet } from "./ranges.js";
import type { RunState } from "./run-state.js";

/** Files a plan would delete: the orphan sweep must not count them a second time. */
export type PlannedDeletions = Set<string>;

/**
 * Cleanup 7 floor (docs/protocol.md §6), before anything of the committed records is deleted: per
 * branch, the format records that the numbers up to the highest one in the records' keys are
 * retired (docs/protocol.md §2.1, F1: the holdfast format raises the head hint's floor, so a commit
 * that skips listing never lands on a freed number). One call per branch, not per record; a throw
 * stops the deletions (the records stay committed for the next run).
 */
export async function retireVersionNumbers(
  state: RunState,
  committed: readonly RetirementHandle[],
): Promise<void> {
  const { ctx, format, dryRun } = state;
  if (dryRun || !format.retireVersionNumbers) return;
  const upTo = new Map<string, number>();
  for (const handle of committed) {
    // The key's range bounds the record's versions (cancelled ones still exist: over-
    // stating the floor is safe, a version above it is never retired).
    const parts = parseRetirementKey(handle.key);
    const max = parts?.maxVersion ?? Math.max(0, ...handle.record.versions.map((v) => v.version));
    upTo.set(handle.record.branch, Math.max(upTo.get(handle.record.branch) ?? 0, max));
  }
  for (const [branch, maxRetired] of upTo) {
    await format.retireVersionNumbers(ctx, branch, maxRetired);
  }
}

/** What the deletion of one committed record left. */
export interface RecordDeletion {
  /** Every retired manifest is gone or was never there: the record may be finalized. */
  readonly complete: boolean;
}

/** Versions of a record deleted per step: data files, then their manifests (bounded redo). */
export const DELETE_STEP_VERSIONS = 1_000;

/**
 * Cleanup 9 delete (Retirement 8 delete): one committed record, marked (Cleanup 8 mark),
 * {@link DELETE_STEP_VERSIONS} versions at a time: their manifests are read, their data files no
 * retained version names are deleted, then their manifests. This run's own records use the
 * manifests read before their commit; records of earlier runs are read here, except versions the
 * last look did not list (`present`): an earlier run deleted their manifest, and it deletes a
 * version's data files before its manifest, so nothing of them is left and nothing is read or
 * deleted again. A run killed mid-record redoes at most one step's data-file deletes. The record is
 * marked (`startDeletion`) before this runs, so a version whose manifest is not the recorded one
 * (another ETag, written after the last look) may have lost files to an earlier run: the deletion
 * stops before the step's first delete with `RETIRED_MANIFEST_REWRITTEN`, and the record stays
 * committed (docs/protocol.md §5.5).
 */
export async function deleteRetired(
  state: RunState,
  handle: RetirementHandle,
  retainedFiles: Set<string>,
  plannedData: PlannedDeletions,
  present?: ReadonlyMap<string, VersionSet>,
): Promise<RecordDeletion> {
  const { ctx, format, stats, dryRun } = state;
  const { branch } = handle.record;
  // Record-wide: a file several retired versions name is deleted once.
  const queuedData = new Set<string>();
  const onDeleted = (count: number) => state.deleteProgress.deleted(count);
  const batcher = () =>
    new DeleteBatcher(
      ctx.store,
      state.deletePool,
      state.batchSize,
      dryRun,
      onDeleted,
      // Data files and manifests are create-only (docs/protocol.md §1).
      { createOnly: true, rate: state.deleteRate },
    );
  let complete = true;
  const counted = state.ownRecords.has(handle.key) ? stats.retired : stats.finished;
  // This run's record: its manifests as read before the drain, streamed back from the
  // run's spill in the record's (ascending) order, one line at a time. A spill gone under
  // the run answers nothing: each manifest is read again, ETag-checked like any other.
  const retired = state.retiredManifests.get(handle.key);
  const read = retired?.cursor({ missing: "skip" });
  const listed = present?.get(branch);
  const active = handle.record.versions.filter((entry) => !entry.cancelled);
  let accounted = 0;
  // The files of this record's manifests the phase's total already counts (cleanup.ts):
  // each step takes off what it took from them, the end takes off what no step took.
  let foreseen = retired?.files ?? 0;
  try {
    for (let at = 0; at < active.length && complete; at += DELETE_STEP_VERSIONS) {
      const step = active.slice(at, at + DELETE_STEP_VERSIONS);
      const dataKeys: string[] = [];
      const manifestKeys: string[] = [];
      let taken = 0;
      let foreseenTaken = 0;
      for (const entry of step) {
        // Interrupted: stop between versions; what is queued is sent, the record stays
        // committed and the next run or `recover` finishes it.
        if (state.stopping()) {
          complete = false;
          break;
        }
        taken += 1;
        const known = await read?.get(entry.version);
        const files = Math.min(foreseen, known?.manifest?.files.length ?? 0);
        foreseen -= files;
        foreseenTaken += files;
        if (!known && listed && !listed.has(entry.version)) {
          counted.push({ branch, version: entry.version });
          continue; // deleted by an earlier, interrupted run (its files went first)
        }
        await state.pool.run(async () => {
          const manifest = known
            ? known.manifest
            : await format.readManifest(ctx, branch, entry.version);
          if (!manifest) {
            counted.push({ branch, version: entry.version });
            return; // deleted by an earlier, interrupted run
          }
          if (manifest.etag !== entry.manifestEtag) {
            // Rewritten after the deletion began: not admitted, not deleted; the run stops.
            throw new RetiredManifestRewrittenError(handle, entry.version, manifest.etag, {
              manifestKey: (b, v) => format.manifestKey(b, v),
            });
          }
          counted.push({ branch, version: entry.version });
          for (const file of manifest.files) {
            if (retainedFiles.has(file.key) || queuedData.has(file.key)) continue;
            queuedData.add(file.key);
            dataKeys.push(file.key);
            // A plan deletes nothing, so the orphan sweep would see these again.
            if (dryRun) plannedData.add(file.key);
            stats.bytesDeleted += file.size;
          }
          manifestKeys.push(format.manifestKey(branch, entry.version));
        });
      }
      await state.pool.drain();
      // Every manifest of the step is read before its first delete: the phase's total gains
      // the step's data files (less those it counted already) and loses its manifests
      // already gone (progress only).
      accounted += taken;
      state.deleteProgress.planned(dataKeys.length + manifestKeys.length - taken - foreseenTaken);
      // Manifests go only after every data file of the step is gone: until then they tell
      // a resumed run what to delete.
      const dataBatch = batcher();
      for (const key of dataKeys) await dataBatch.add(key);
      stats.objectsDeleted.dataFiles += await dataBatch.flush();
      const manifestBatch = batcher();
      for (const key of manifestKeys) await manifestBatch.add(key);
      stats.objectsDeleted.manifests += await manifestBatch.flush();
    }
  } finally {
    await read?.close();
  }
  // Versions an interrupt left unread leave the phase's total, and files counted for
  // versions no step took (kept by the last look, or left by an interrupt).
  if (accounted < active.length) state.deleteProgress.planned(accounted - active.length);
  if (foreseen > 0) state.deleteProgress.planned(-foreseen);
  state.retiredManifests.delete(handle.key);
  await retired?.discard();
  return { complete };
}
