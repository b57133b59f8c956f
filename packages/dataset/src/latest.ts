import type { ProtocolContext } from "@holdfast/protocol";
import { validateName } from "@holdfast/protocol";
import { readHeadHint, type StoredHeadHint } from "./heads.js";
import {
  MAX_VERSION,
  manifestKey,
  parseManifestKey,
  validateVersion,
  versionsPrefix,
} from "./layout.js";

/**
 * The highest version of a branch, or `null` when it has none. Starts at the branch's head
 * hint (1 GET, see `heads.ts`), so the cost does not grow with the branch's length: 1 LIST
 * from the hint when the hint is current, O(log lag) single-key LISTs when it lags far
 * behind, and the full search from version 1 when there is no hint or nothing at or above
 * it. Exact in every case: the listing sees every version at or above its start.
 */
export async function latestVersion(
  ctx: ProtocolContext,
  branch: string,
  options: { signal?: AbortSignal } = {},
): Promise<number | null> {
  validateName(branch, "branch");
  const hint = await readHeadHint(ctx, branch, options.signal);
  return (await latestFromHint(ctx, branch, hint, options.signal)).latest;
}

/**
 * {@link latestVersion} from a hint already read. `atOrAboveHint` is false when the search
 * had to start over at version 1 (no usable hint, or nothing at or above it: the branch
 * lost those versions, deleted and re-created), so the hint's floor says nothing of it.
 */
export async function latestFromHint(
  ctx: ProtocolContext,
  branch: string,
  hint: StoredHeadHint | null,
  signal?: AbortSignal,
): Promise<{ latest: number | null; atOrAboveHint: boolean }> {
  if (hint?.version != null) {
    const latest = await latestVersionFrom(ctx, branch, hint.version, signal);
    if (latest !== null) return { latest, atOrAboveHint: true };
  }
  return { latest: await latestVersionFrom(ctx, branch, 1, signal), atOrAboveHint: false };
}

/**
 * The highest version of a branch that is `from` or above, or `null` when there is none. A
 * range that fits in one listing page costs one LIST; a longer one is searched with
 * single-key listings (`startAfter`), galloping then bisecting: O(log n) requests, exact
 * even with gaps.
 */
export async function latestVersionFrom(
  ctx: ProtocolContext,
  branch: string,
  from: number,
  signal?: AbortSignal,
): Promise<number | null> {
  validateVersion(from);
  const prefix = versionsPrefix(branch);
  const page = await ctx.store.list(prefix, {
    startAfter: from > 1 ? manifestKey(branch, from - 1) : undefined,
    signal,
  });
  let lo: number | null = null;
  for (const meta of page.objects) {
    const parsed = parseManifestKey(meta.key);
    if (parsed?.branch === branch) lo = parsed.version;
  }
  if (page.nextPageToken === undefined) return lo;
  lo ??= await firstVersionAfter(ctx, branch, from - 1);
  if (lo === null) return null;
  // Invariant below: version `lo` exists and no version is above `hi`.
  let step = 1024;
  let hi: number;
  for (;;) {
    const probe = Math.min(lo + step, MAX_VERSION);
    const next = await firstVersionAfter(ctx, branch, probe);
    if (next === null) {
      hi = probe;
      break;
    }
    lo = next;
    step *= 2;
  }
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const next = await firstVersionAfter(ctx, branch, mid);
    if (next === null) hi = mid;
    else lo = next;
  }
  return lo;
}

/** The lowest version above `after` (0: the lowest), skipping foreign keys; `null` if none. */
async function firstVersionAfter(
  ctx: ProtocolContext,
  branch: string,
  after: number,
): Promise<number | null> {
  const prefix = versionsPrefix(branch);
  let startAfter = after >= 1 ? manifestKey(branch, after) : undefined;
  for (;;) {
    const page = await ctx.store.list(prefix, { startAfter, pageSize: 8 });
    for (const meta of page.objects) {
      const parsed = parseManifestKey(meta.key);
      if (parsed?.branch === branch) return parsed.version;
      // Version keys start with a digit: a key past "9" is past every version.
      if ((meta.key[prefix.length] ?? "") > "9") return null;
      startAfter = meta.key;
    }
    if (page.objects.length === 0) return null;
  }
}
