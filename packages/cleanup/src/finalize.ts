import type { DatasetFormat, ProtocolContext } from "@holdfast/dataset";
import { finalize, type PresentManifests, type RetirementHandle } from "@holdfast/retirement";
import type { RunState } from "./run-state.js";

/**
 * Step 6, finalize a record whose deletion is complete: no metadata left (L3). Versions
 * whose manifest was replaced since the drain (`changed`) are no longer the record's: the
 * presence check skips them and their leases stay, so removing the record makes them
 * acquirable again (docs/protocol.md, Retirement "A recorded manifest that was replaced").
 * A failure is a warning: recovery retries it on the next run.
 */
export async function finalizeRetired(
  state: RunState,
  handle: RetirementHandle,
  changed: ReadonlySet<number> = new Set(),
): Promise<void> {
  try {
    await finalize(state.ctx, handle, {
      deleteLeases: (branch, versions, options) =>
        state.deleteLeases(
          branch,
          versions.filter((v) => !changed.has(v)),
          options,
        ),
      // The run's census time: every lease deleted was listed by a census that judged it
      // expired, whatever the handle's age (docs/protocol.md, Retirement "Finalization").
      leasesWrittenBefore: state.now,
      presentManifests: formatPresentManifests(state.ctx, state.format, handle, changed),
    });
  } catch (error) {
    state.stats.warnings.push(
      `${handle.key}: finalize failed (${String(error)}); recovery retries`,
    );
  }
}

/**
 * Present-manifest check through the format: one listing of the branch from the record's
 * first version. A recorded manifest is present when its key holds the recorded object
 * (the ETag the record was drained with); a replaced one is gone.
 */
function formatPresentManifests(
  ctx: ProtocolContext,
  format: DatasetFormat,
  handle: RetirementHandle,
  changed: ReadonlySet<number>,
): PresentManifests {
  const recorded = new Map(handle.record.versions.map((v) => [v.version, v.manifestEtag]));
  return async (branch, versions) => {
    const wanted = new Set(versions.filter((v) => !changed.has(v)));
    const max = Math.max(...versions);
    const present = new Set<number>();
    for await (const entry of format.listVersions(ctx, branch)) {
      if (entry.version > max) break;
      if (wanted.has(entry.version) && entry.etag === recorded.get(entry.version)) {
        present.add(entry.version);
      }
    }
    return present;
  };
}
