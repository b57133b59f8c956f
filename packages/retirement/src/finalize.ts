import { holdfastError, listAll } from "@holdfast/conditional-store";
import type { RetirementContext } from "./context.js";
import { activeVersions, type RetirementHandle, readRecord } from "./machine.js";
import { parseRetirementKey, retirementPrefix } from "./record.js";

/**
 * Deletes the leases of the given versions written before `writtenBefore` (storage time),
 * keeping any lease in or after its precision interval (leases' `deleteLeasesOf`, injected).
 */
export type DeleteLeases = (
  branch: string,
  versions: readonly number[],
  options: { readonly writtenBefore: Date },
) => Promise<unknown>;

/** Which of `versions` still have a manifest on `branch` (the dataset format decides the keys). */
export type PresentManifests = (
  branch: string,
  versions: readonly number[],
) => Promise<ReadonlySet<number>>;

export interface FinalizeOptions {
  readonly deleteLeases: DeleteLeases;
  /**
   * The dataset format's check (`DatasetFormat.presentManifests`, or cleanup's own through
   * the format). No default: a layout assumed for the wrong format would see every manifest
   * as absent (docs/protocol.md §1.1).
   */
  readonly presentManifests: PresentManifests;
  /**
   * A storage time no later than the write of the record version `handle` holds (the
   * cleanup run's "now", at which its censuses judged leases). Leases are deleted only when
   * written a whole precision interval before the earliest of this and
   * `handle.lastModified`; one of the two is required (docs/protocol.md §5.4).
   */
  readonly leasesWrittenBefore?: Date | undefined;
}

export interface FinalizeResult {
  /** Superseded (cancelled) records of the branch that were removed with this one. */
  readonly supersededRemoved: number;
}

/**
 * Retirement 9 finalize (docs/protocol.md §5.4): leaves no retirement metadata behind (invariant 5,
 * L3). Re-checks that every recorded manifest is absent (else `refused`: deletion is not complete),
 * then deletes the retired versions' leases written before the finalizer's view of the record (so a
 * lease admitted after a cancellation this handle has not seen is never deleted), then superseded
 * cancelled records, and the committed record LAST, so a crash anywhere before leaves the retry
 * anchor in place (L8). The committed record is terminal, so its delete is unconditional (RGW
 * ignores If-Match on DELETE, docs/protocol.md §5).
 */
export async function finalize(
  ctx: RetirementContext,
  handle: RetirementHandle,
  options: FinalizeOptions,
): Promise<FinalizeResult> {
  if (handle.record.state !== "committed") {
    throw holdfastError("invalid-input", "finalize", `record ${handle.key} is not committed`, {
      key: handle.key,
    });
  }
  if (typeof options.presentManifests !== "function") {
    throw holdfastError(
      "invalid-input",
      "finalize",
      "finalize needs the dataset format's present-manifest check",
      {
        key: handle.key,
        hint: "pass presentManifests: (b, v) => format.presentManifests(ctx, b, v)",
      },
    );
  }
  const writtenBefore = earliest(handle.lastModified, options.leasesWrittenBefore);
  if (!writtenBefore) {
    throw holdfastError(
      "invalid-input",
      "finalize",
      "finalize needs the storage time of its view of the record",
      {
        key: handle.key,
        hint: "pass a handle read from the store, or leasesWrittenBefore: the run's storage now",
      },
    );
  }
  const { branch } = handle.record;
  const retired = activeVersions(handle.record);
  const present = await options.presentManifests(branch, retired);
  if (present.size > 0) {
    throw holdfastError(
      "refused",
      "finalize",
      `${present.size} retired manifest(s) of ${branch} still present; deletion is incomplete`,
      { key: handle.key, code: "RetirementIncomplete" },
    );
  }
  // Only leases written before the view: a version cancelled since (committed -> committed,
  // "A recorded manifest that was replaced") may hold leases admitted after it, which this
  // stale view would still count as retired (docs/protocol.md §5.4).
  if (retired.length > 0) await options.deleteLeases(branch, retired, { writtenBefore });
  const supersededRemoved = await removeSuperseded(ctx, handle);
  await ctx.store.delete(handle.key);
  return { supersededRemoved };
}

// --- utils ---

/** The earlier of two storage times; `undefined` when neither is a valid date. */
function earliest(a: Date | undefined, b: Date | undefined): Date | undefined {
  const valid = [a, b].filter((d): d is Date => d instanceof Date && Number.isFinite(d.getTime()));
  if (valid.length === 0) return undefined;
  return valid.reduce((x, y) => (y.getTime() < x.getTime() ? y : x));
}

/** Deletes cancelled records of the branch whose range overlaps this one (already terminal). */
async function removeSuperseded(ctx: RetirementContext, handle: RetirementHandle): Promise<number> {
  const own = parseRetirementKey(handle.key);
  if (!own) return 0;
  let removed = 0;
  for await (const meta of listAll(ctx.store, retirementPrefix(own.branch))) {
    if (meta.key === handle.key) continue;
    const parts = parseRetirementKey(meta.key);
    if (!parts || parts.maxVersion < own.minVersion || parts.minVersion > own.maxVersion) continue;
    const other = await readRecord(ctx, meta.key);
    if (other?.record.state !== "cancelled") continue;
    await ctx.store.delete(meta.key);
    removed += 1;
  }
  return removed;
}
