/**
 * Grouping of versions into ranges, for the dashboard's timeline and plan: consecutive
 * versions of one branch with the same state (and the same reasons, tags, ...) read as one
 * row, "main 1–2,990 retire", instead of one row per version. Pure: no DOM, tested in Node.
 */

/** A run of consecutive versions of one branch sharing one key, `from` to `to` inclusive. */
export interface Range<T> {
  readonly branch: string;
  readonly from: number;
  readonly to: number;
  /** The items of the range, in version order. */
  readonly items: readonly T[];
}

/**
 * Groups items into ranges: per branch (branches in the order they first appear), versions
 * ascending; a version extends the previous range when it follows it directly (`to + 1`)
 * and `keyOf` gives the same key. A version listed twice stays in its first range.
 */
export function groupRanges<T extends { branch: string; version: number }>(
  items: readonly T[],
  keyOf: (item: T) => string,
): Range<T>[] {
  const byBranch = new Map<string, T[]>();
  for (const item of items) {
    const list = byBranch.get(item.branch) ?? [];
    list.push(item);
    byBranch.set(item.branch, list);
  }
  const ranges: Range<T>[] = [];
  for (const [branch, list] of byBranch) {
    const sorted = [...list].sort((a, b) => a.version - b.version);
    let current: { from: number; to: number; key: string; items: T[] } | null = null;
    for (const item of sorted) {
      const key = keyOf(item);
      if (current !== null && item.version === current.to) continue;
      if (current !== null && item.version === current.to + 1 && key === current.key) {
        current.to = item.version;
        current.items.push(item);
        continue;
      }
      if (current !== null) ranges.push({ branch, ...current });
      current = { from: item.version, to: item.version, key, items: [item] };
    }
    if (current !== null) ranges.push({ branch, ...current });
  }
  return ranges.map(({ branch, from, to, items: members }) => ({
    branch,
    from,
    to,
    items: members,
  }));
}

/** "7" or "1–2,990": a range's versions as a person reads them. */
export function rangeLabel(range: { from: number; to: number }): string {
  const n = (v: number) => v.toLocaleString("en-US");
  return range.from === range.to ? n(range.from) : `${n(range.from)}–${n(range.to)}`;
}

/** How many versions a range holds. */
export function rangeSize(range: { from: number; to: number }): number {
  return range.to - range.from + 1;
}

/**
 * The gaps in a branch's version numbers: versions a listing no longer shows between the
 * first it could have (`start`) and the highest it shows. Version numbers of a branch are
 * consecutive (docs/protocol.md §1), so a gap is a run of retired versions.
 */
export function gaps(versions: readonly number[], start: number): { from: number; to: number }[] {
  const sorted = [...new Set(versions)].sort((a, b) => a - b);
  const out: { from: number; to: number }[] = [];
  let next = start;
  for (const v of sorted) {
    if (v > next) out.push({ from: next, to: v - 1 });
    next = Math.max(next, v + 1);
  }
  return out;
}

/** What a plan decided about one version: retire it, or keep it for every reason that applies. */
export interface PlanItem {
  readonly branch: string;
  readonly version: number;
  readonly decision: "retire" | "keep";
  readonly reasons: readonly string[];
}

/**
 * A plan's versions as ranges of one decision and one set of reasons. A kept version
 * carries `reasons` (every reason) when the plan has them, else its one `reason`.
 */
export function planRanges(stats: {
  retired: readonly { branch: string; version: number }[];
  retained: readonly { branch: string; version: number; reason: string; reasons?: unknown }[];
}): Range<PlanItem>[] {
  const items: PlanItem[] = [
    ...stats.retired.map((v) => ({
      branch: v.branch,
      version: v.version,
      decision: "retire" as const,
      reasons: [],
    })),
    ...stats.retained.map((v) => ({
      branch: v.branch,
      version: v.version,
      decision: "keep" as const,
      reasons: reasonsOf(v),
    })),
  ];
  return groupRanges(items, (i) => `${i.decision}:${i.reasons.join(",")}`);
}

/** Every reason a kept version has: its `reasons` list when present, else its one `reason`. */
export function reasonsOf(v: { reason: string; reasons?: unknown }): string[] {
  const many = v.reasons;
  if (Array.isArray(many) && many.length > 0 && many.every((r) => typeof r === "string")) {
    return [...new Set(many as string[])].sort();
  }
  return [v.reason];
}
