import {
  parseRetirementKey,
  RetiredManifestRewrittenError,
  type RetirementHandle,
  type RetiringVersion,
} from "@holdfast/retirement";
import { DeleteBatcher } from "./batcher.js";
import type { RetiredLog, VersionSet } from "./ranges.js";
import { countDeletion, type RunState } from "./run-state.js";
import type { RetiredManifestCursor, RetiredManifests, SpilledManifest } from "./spill.js";

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
 * deleted again. A step's manifests are deleted while the next step's data files are; a run
 * killed mid-record redoes at most two steps' data-file deletes. The record is
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
  foreseen: number,
  present?: ReadonlyMap<string, VersionSet>,
): Promise<RecordDeletion> {
  const { stats, dryRun } = state;
  const onDeleted = (count: number) => state.deleteProgress.deleted(count);
  const batcher = () =>
    new DeleteBatcher(
      state.ctx.store,
      state.deletePool,
      state.batchSize,
      dryRun,
      onDeleted,
      // Data files and manifests are create-only (docs/protocol.md §1).
      { createOnly: true, rate: state.deleteRate },
    );
  // This run's record: its manifests as read before the drain, streamed back from the
  // run's spill in the record's (ascending) order, one line at a time. A spill gone under
  // the run answers nothing: each manifest is read again, ETag-checked like any other.
  const retired = state.retiredManifests.get(handle.key);
  const steps = new StepReader(
    state,
    handle,
    retainedFiles,
    plannedData,
    retired,
    foreseen,
    present,
  );
  const active = handle.record.versions.filter((entry) => !entry.cancelled);
  let accounted = 0;
  // The last step's manifests, deleted while the next step's data files are.
  let manifests: DeleteBatcher | undefined;
  const countManifests = () => {
    stats.objectsDeleted.manifests += manifests?.deleted ?? 0;
    manifests = undefined;
  };
  try {
    for (let at = 0; at < active.length && !steps.stopped; at += DELETE_STEP_VERSIONS) {
      // The step's per-version and per-key loops run in the reader and the batcher, not
      // here: a function resumed once per version or key is hot enough for the optimizing
      // compiler, which compiles the whole function (a long one costs tens of ms of CPU).
      const step = await steps.read(active.slice(at, at + DELETE_STEP_VERSIONS));
      // Every manifest of the step is read before its first delete: the phase's total gains
      // the step's data files (less those it counted already: the record's distinct files
      // not retained, cleanup.ts) and loses its manifests already gone (progress only).
      accounted += step.taken;
      state.deleteProgress.planned(
        step.dataKeys.length + step.manifestKeys.length - step.taken - step.foreseenTaken,
      );
      const dataBatch = batcher();
      await dataBatch.addAll(step.dataKeys);
      // The drain waits for the step's data files and for the last step's manifests, which
      // were deleted meanwhile: a step's files are its own (a file several versions name
      // goes with the first), so no manifest waits on a file of a later step.
      stats.objectsDeleted.dataFiles += await dataBatch.flush();
      countManifests();
      // Manifests go only after every data file of the step is gone: until then they tell
      // a resumed run what to delete.
      manifests = batcher();
      await manifests.addAll(step.manifestKeys);
      await manifests.sendQueued();
    }
    await state.deletePool.drain();
    countManifests();
  } catch (error) {
    // Never leave a batch delete running past the call (a step's manifests may still be in
    // the pool); the error already on its way (a rewritten manifest, a failed batch) is the
    // one reported.
    await state.deletePool.drain().catch(() => {});
    throw error;
  } finally {
    await steps.close();
  }
  // Versions an interrupt left unread leave the phase's total, and files counted for
  // versions no step took (kept by the last look, or left by an interrupt).
  if (accounted < active.length) state.deleteProgress.planned(accounted - active.length);
  if (steps.foreseen > 0) state.deleteProgress.planned(-steps.foreseen);
  state.retiredManifests.delete(handle.key);
  await retired?.discard();
  return { complete: !steps.stopped };
}

/** What one step of a record's deletion sends, data files first. */
interface StepKeys {
  readonly dataKeys: string[];
  readonly manifestKeys: string[];
  /** Versions of the step looked at (an interrupt stops between versions). */
  readonly taken: number;
  /** Files of the step the phase's total counted from the start. */
  readonly foreseenTaken: number;
}

/** Reads the manifests of a record's steps and names what each step deletes. */
class StepReader {
  /** Record-wide: a file several retired versions name is deleted once. */
  readonly #queuedData = new Set<string>();
  readonly #read: RetiredManifestCursor | undefined;
  readonly #listed: VersionSet | undefined;
  readonly #counted: RetiredLog;
  /**
   * The files of this record the phase's total already counts (its distinct files no
   * retained version names, cleanup.ts): each step takes off what it sends of them, the end
   * takes off what no step sent.
   */
  foreseen: number;
  /** The run was interrupted: the record stays committed for the next run or `recover`. */
  stopped = false;

  constructor(
    private readonly state: RunState,
    private readonly handle: RetirementHandle,
    private readonly retainedFiles: Set<string>,
    private readonly plannedData: PlannedDeletions,
    retired: RetiredManifests | undefined,
    foreseen: number,
    present: ReadonlyMap<string, VersionSet> | undefined,
  ) {
    this.#read = retired?.cursor({ missing: "skip" });
    this.#listed = present?.get(handle.record.branch);
    this.#counted = state.ownRecords.has(handle.key) ? state.stats.retired : state.stats.finished;
    this.foreseen = foreseen;
  }

  async read(step: readonly RetiringVersion[]): Promise<StepKeys> {
    const { pool } = this.state;
    const branch = this.handle.record.branch;
    const keys: StepKeys = { dataKeys: [], manifestKeys: [], taken: 0, foreseenTaken: 0 };
    let taken = 0;
    for (const entry of step) {
      // Interrupted: stop between versions; what is queued is sent, the record stays
      // committed and the next run or `recover` finishes it.
      if (this.state.stopping()) {
        this.stopped = true;
        break;
      }
      taken += 1;
      const known = await this.#read?.get(entry.version);
      if (!known && this.#listed && !this.#listed.has(entry.version)) {
        this.#counted.push({ branch, version: entry.version });
        continue; // deleted by an earlier, interrupted run (its files went first)
      }
      await pool.run(() => this.#queue(keys, entry, known));
    }
    await pool.drain();
    const foreseenTaken = Math.min(this.foreseen, keys.dataKeys.length);
    this.foreseen -= foreseenTaken;
    return { ...keys, taken, foreseenTaken };
  }

  /** One version: its manifest (as read before, or read now, ETag-checked), then its keys. */
  async #queue(
    keys: StepKeys,
    entry: RetiringVersion,
    known: { manifest: SpilledManifest | null } | undefined,
  ): Promise<void> {
    const { ctx, format, dryRun, sizes } = this.state;
    const branch = this.handle.record.branch;
    const manifest = known ? known.manifest : await format.readManifest(ctx, branch, entry.version);
    if (!manifest) {
      this.#counted.push({ branch, version: entry.version });
      return; // deleted by an earlier, interrupted run
    }
    if (manifest.etag !== entry.manifestEtag) {
      // Rewritten after the deletion began: not admitted, not deleted; the run stops.
      throw new RetiredManifestRewrittenError(this.handle, entry.version, manifest.etag, {
        manifestKey: (b, v) => format.manifestKey(b, v),
      });
    }
    this.#counted.push({ branch, version: entry.version });
    for (const file of manifest.files) {
      if (this.retainedFiles.has(file.key) || this.#queuedData.has(file.key)) continue;
      this.#queuedData.add(file.key);
      keys.dataKeys.push(file.key);
      // A plan deletes nothing, so the orphan sweep would see these again.
      if (dryRun) this.plannedData.add(file.key);
      // Before the step's first delete: a size the manifest did not record is listed.
      countDeletion(this.state, file.key, await sizes.of(file.key, file.size), "data");
    }
    const manifestKey = format.manifestKey(branch, entry.version);
    keys.manifestKeys.push(manifestKey);
    countDeletion(this.state, manifestKey, await sizes.of(manifestKey), "manifests");
  }

  async close(): Promise<void> {
    await this.#read?.close();
  }
}
