import { listAll } from "@holdfast/conditional-store";
import { sweepExpiredLeases } from "@holdfast/leases";
import { CLOCK_PREFIX } from "@holdfast/protocol/internal";
import { DeleteBatcher } from "./batcher.js";
import type { PlannedDeletions } from "./delete.js";
import { countDeletion, type RunState, truncSec } from "./run-state.js";

/** Storage-time probes older than this are leftovers of a crashed probe. */
const PROBE_LEFTOVER_MS = 60 * 60 * 1000;

/**
 * Cleanup 11 sweep (docs/protocol.md §6): data files no manifest names older than the grace
 * (storage time), leftover clock probes, and leases of crashed readers.
 */
export async function sweepOrphans(
  state: RunState,
  retainedFiles: Set<string>,
  plannedData: PlannedDeletions,
  expiredIntents: readonly string[],
): Promise<void> {
  const { ctx, format, stats, dryRun, now } = state;
  state.progress({ phase: "orphans", done: 0 });
  if (state.mode === "recover") return;
  // Progress in objects: a listing streams, so the total is known only at the end.
  let swept = 0;
  const onDeleted = (count: number) => {
    swept += count;
    state.progress({ phase: "orphans", done: swept });
  };
  const batcher = () =>
    new DeleteBatcher(ctx.store, state.deletePool, state.batchSize, dryRun, onDeleted, {
      rate: state.deleteRate,
    });
  // Orphans are data files: create-only, never compare-and-swapped (docs/protocol.md §1).
  const orphans = new DeleteBatcher(
    ctx.store,
    state.deletePool,
    state.batchSize,
    dryRun,
    onDeleted,
    { createOnly: true, rate: state.deleteRate },
  );
  const cutoff = truncSec(now) - state.policy.orphanGraceMs;
  // A format may name several folders (Lance): only those are listed, so folders the
  // format owns but no cleanup may touch (Lance's `_mem_wal/`) are never even listed.
  for (const prefix of format.dataPrefixes ?? [format.dataPrefix]) {
    for await (const meta of listAll(ctx.store, prefix)) {
      if (!format.isDataKey(meta.key, ctx) || retainedFiles.has(meta.key)) continue;
      if (truncSec(meta.lastModified) >= cutoff) continue;
      if (plannedData.has(meta.key)) continue;
      countDeletion(state, meta.key, meta.size, "data");
      await orphans.add(meta.key);
    }
  }
  stats.objectsDeleted.orphans += await orphans.flush();
  const probes = batcher();
  for await (const meta of listAll(ctx.store, CLOCK_PREFIX)) {
    if (truncSec(meta.lastModified) < truncSec(now) - PROBE_LEFTOVER_MS) await probes.add(meta.key);
  }
  stats.objectsDeleted.probes += await probes.flush();
  // Commit intents past their bound: their writers crashed or gave up (invariant 5).
  const intents = batcher();
  for (const key of expiredIntents) await intents.add(key);
  stats.objectsDeleted.expiredCommitIntents += await intents.flush();
  // Leases left by readers that crashed without releasing: gone an hour (storage time)
  // past their TTL, so no holder can still rely on them (invariant 5).
  // Every branch folder, not only branches that still have versions: a reader whose
  // acquire on a deleted branch lost its own cleanup delete leaves a lease there.
  if (!dryRun) {
    const { deleted } = await sweepExpiredLeases(ctx, undefined, now);
    stats.objectsDeleted.expiredLeases += deleted;
    swept += deleted;
  }
  state.progress({ phase: "orphans", done: swept, total: swept });
}
