import type { DatasetFormat } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  finalize,
  isRetiredManifestRewritten,
  type PresentManifests,
  RetiredManifestRewrittenError,
  type RetirementHandle,
} from "@holdfast/retirement";
import type { RunState } from "./run-state.js";

/**
 * Cleanup 10 finalize (Retirement 9 finalize, docs/protocol.md §5.4), a record whose deletion is
 * complete: no metadata left (L3). The record's deletion began (it is marked), so a recorded key
 * holding another object than the recorded manifest is not absent: the run stops with
 * `RETIRED_MANIFEST_REWRITTEN` and the record stays (docs/protocol.md §5.5). Any other failure is a
 * warning: recovery retries it on the next run.
 */
export async function finalizeRetired(state: RunState, handle: RetirementHandle): Promise<void> {
  try {
    await finalize(state.ctx, handle, {
      deleteLeases: (branch, versions, options) => state.deleteLeases(branch, versions, options),
      // The run's census time: every lease deleted was listed by a census that judged it
      // expired, whatever the handle's age (docs/protocol.md §5.4).
      leasesWrittenBefore: state.now,
      presentManifests: formatPresentManifests(state.ctx, state.format, handle),
    });
  } catch (error) {
    if (isRetiredManifestRewritten(error)) throw error;
    state.stats.warnings.push(
      `${handle.key}: finalize failed (${String(error)}); recovery retries`,
    );
  }
}

/**
 * Present-manifest check through the format: one listing of the branch's versions from the
 * record's first to its last (a format may list only those). A recorded manifest is present when its key holds the recorded object (the
 * ETag the record was drained with); another object at the key was written after the
 * record's deletion began and throws {@link RetiredManifestRewrittenError}.
 */
function formatPresentManifests(
  ctx: ProtocolContext,
  format: DatasetFormat,
  handle: RetirementHandle,
): PresentManifests {
  const recorded = new Map(handle.record.versions.map((v) => [v.version, v.manifestEtag]));
  return async (branch, versions) => {
    const wanted = new Set(versions);
    let min = Number.POSITIVE_INFINITY;
    let max = Number.NEGATIVE_INFINITY;
    for (const v of versions) {
      min = Math.min(min, v);
      max = Math.max(max, v);
    }
    const present = new Set<number>();
    // Only the record's versions are wanted: a format whose names sort by version lists
    // just their keys, not every version of the branch (a listing per record of a table of
    // n versions was O(n) each, O(n²) for its cleanup).
    for await (const entry of format.listVersions(ctx, branch, { from: min, to: max })) {
      if (entry.version > max) break;
      if (!wanted.has(entry.version)) continue;
      if (entry.etag !== recorded.get(entry.version)) {
        throw new RetiredManifestRewrittenError(handle, entry.version, entry.etag, {
          manifestKey: (b, v) => format.manifestKey(b, v),
        });
      }
      present.add(entry.version);
    }
    return present;
  };
}
