import type { DatasetFormat, ProtocolContext } from "@holdfast/dataset";
import { finalize, type PresentManifests, type RetirementHandle } from "@holdfast/retirement";
import type { RunState } from "./run-state.js";

/**
 * Step 6, finalize a record whose deletion is complete: no metadata left (L3). A failure
 * is a warning: recovery retries it on the next run.
 */
export async function finalizeRetired(state: RunState, handle: RetirementHandle): Promise<void> {
  try {
    await finalize(state.ctx, handle, {
      deleteLeases: state.deleteLeases,
      presentManifests: formatPresentManifests(state.ctx, state.format),
    });
  } catch (error) {
    state.stats.warnings.push(
      `${handle.key}: finalize failed (${String(error)}); recovery retries`,
    );
  }
}

/** Present-manifest check through the format: one listing of the branch from the record's first version. */
function formatPresentManifests(ctx: ProtocolContext, format: DatasetFormat): PresentManifests {
  return async (branch, versions) => {
    const wanted = new Set(versions);
    const max = Math.max(...versions);
    const present = new Set<number>();
    for await (const entry of format.listVersions(ctx, branch)) {
      if (entry.version > max) break;
      if (wanted.has(entry.version)) present.add(entry.version);
    }
    return present;
  };
}
