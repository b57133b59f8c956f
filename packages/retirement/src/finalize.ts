import { holdfastError, listAll } from "@holdfast/conditional-store";
import { holdfastDatasetKnown, requireHoldfastDataset } from "@holdfast/dataset";
import type { RetirementContext } from "./context.js";
import { activeVersions, type RetirementHandle, readRecord } from "./machine.js";
import { parseRetirementKey, retirementPrefix } from "./record.js";

/** Deletes every lease of the given versions (leases' `deleteLeasesOf`, injected). */
export type DeleteLeases = (branch: string, versions: readonly number[]) => Promise<unknown>;

/** Which of `versions` still have a manifest on `branch` (the dataset format decides the keys). */
export type PresentManifests = (
  branch: string,
  versions: readonly number[],
) => Promise<ReadonlySet<number>>;

export interface FinalizeOptions {
  readonly deleteLeases: DeleteLeases;
  /** @default LIST of `_versions/{branch}/` over the record's range (holdfast layout; the store must then hold holdfast's dataset marker) */
  readonly presentManifests?: PresentManifests | undefined;
}

export interface FinalizeResult {
  /** Superseded (cancelled) records of the branch that were removed with this one. */
  readonly supersededRemoved: number;
}

/**
 * Step 7: leaves no retirement metadata behind (invariant 5, L3). Re-checks that every
 * recorded manifest is absent (else `refused`: deletion is not complete), then deletes
 * the retired versions' leases, then superseded cancelled records, and the committed
 * record LAST, so a crash anywhere before leaves the retry anchor in place (L8). The
 * committed record is terminal, so its delete is unconditional (RGW ignores If-Match on
 * DELETE, docs/protocol.md, Retirement).
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
  const { branch } = handle.record;
  const retired = activeVersions(handle.record);
  // The default reads holdfast's layout: only on a holdfast dataset (a Lance table's
  // manifests would all look absent). docs/protocol.md §1, "The format guard".
  if (!options.presentManifests && !holdfastDatasetKnown(ctx.store)) {
    await requireHoldfastDataset(ctx, "finalize");
  }
  const present = await (options.presentManifests ?? layoutPresentManifests(ctx))(branch, retired);
  if (present.size > 0) {
    throw holdfastError(
      "refused",
      "finalize",
      `${present.size} retired manifest(s) of ${branch} still present; deletion is incomplete`,
      { key: handle.key, code: "RetirementIncomplete" },
    );
  }
  if (retired.length > 0) await options.deleteLeases(branch, retired);
  const supersededRemoved = await removeSuperseded(ctx, handle);
  await ctx.store.delete(handle.key);
  return { supersededRemoved };
}

/**
 * Present-manifest check on the holdfast layout (`_versions/{branch}/{version:020d}.json`):
 * one LIST page per 1,000 versions of the record's range, instead of one HEAD per version.
 */
export function layoutPresentManifests(ctx: RetirementContext): PresentManifests {
  return async (branch, versions) => {
    const present = new Set<number>();
    if (versions.length === 0) return present;
    const wanted = new Set(versions);
    const min = Math.min(...versions);
    const max = Math.max(...versions);
    const prefix = `_versions/${branch}/`;
    const startAfter = min > 1 ? `${prefix}${pad(min - 1)}.json` : undefined;
    for await (const meta of listAll(ctx.store, prefix, { startAfter })) {
      const match = /^(\d{20})\.json$/.exec(meta.key.slice(prefix.length));
      if (!match) continue;
      const version = Number(match[1]);
      if (version > max) break;
      if (wanted.has(version)) present.add(version);
    }
    return present;
  };
}

// --- utils ---

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

function pad(n: number): string {
  return n.toString().padStart(20, "0");
}
