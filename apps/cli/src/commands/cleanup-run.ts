import {
  CLEANUP_INTERRUPTED,
  type CleanupOptions,
  type CleanupStats,
  type RecoveredRun,
} from "@holdfast/cleanup";
import { isHoldfastError } from "@holdfast/conditional-store";
import { parseCountArg } from "../args.js";
import { formatBytes, formatDuration } from "../duration.js";
import { lanceAutoCleanupWarning, type ResolvedFormat } from "../format.js";
import type { Output } from "../output.js";
import { formatRanges } from "../progress.js";

// What `cleanup` and `recover` share: their run options, the interrupted-run report, the
// summary they print (the demo prints it too).

/** What each retention reason means, in the words the summary prints. */
export const REASON_TEXT: Record<string, string> = {
  lease: "an active reader lease pins it",
  tag: "a tag names it",
  "branch-lineage": "a branch was forked from it (or descends through it)",
  intent: "a tag or branch operation in flight names it",
  policy: "the policy keeps it (too new, or within --retain)",
  latest: "latest version of its branch (always kept)",
  recent: "younger than --min-age (a lost commit answer could still be re-issued)",
};

/** What the reference recovery before a run did; `quiet` prints nothing when it did nothing. */
export function printReferences(
  out: Output,
  references: NonNullable<RecoveredRun["references"]>,
  options: { quiet: boolean },
): void {
  if (options.quiet && Object.values(references).every((n) => n === 0)) return;
  out.line(
    `References: ${references.fencedIntents} expired intent(s) fenced, ${references.reclaimedIntents} reclaimed, ` +
      `${references.deletionsCompleted} interrupted deletion(s) finished, ${references.removedOrphans} orphan(s) removed.`,
  );
}

/** Lance's automatic cleanup ignores holdfast's leases: say so before anything runs. */
export function warnLanceAutoCleanup(out: Output, resolved: ResolvedFormat): void {
  const warning = lanceAutoCleanupWarning(resolved);
  if (warning) out.line(out.paint("yellow", `warning: ${warning}`));
}

/** Options both `cleanup` and `recover` take: the format, progress, the interrupt, the lock flags. */
export function runOptions(
  opts: Record<string, unknown>,
  interrupt: AbortSignal,
  resolved: ResolvedFormat,
  onProgress: NonNullable<CleanupOptions["onProgress"]>,
): CleanupOptions {
  return {
    onProgress,
    format: resolved.format,
    signal: interrupt,
    concurrent: opts.concurrent === true,
    waitForLock: opts.wait === true,
    // A run that writes leaves its summary on the store, where the server's dashboard reads
    // it (the cleanup package's run history); a dry run leaves none.
    history: { trigger: "cli" },
    ...deleteRateOptions(opts),
  };
}

/**
 * The delete pacing flags `cleanup` and `recover` take (flag, description): batch deletes in
 * flight at once, and the most objects deleted per second (Amazon S3 answers 503 SlowDown
 * past about 3,500 deletes per second per prefix; docs/protocol.md §6, Cleanup 9).
 */
export const MAX_DELETES_FLAG = [
  "--max-deletes-per-second <n>",
  "delete at most N objects per second, whatever the concurrency (S3: 3500 per prefix)",
] as const;
export const DELETE_CONCURRENCY_FLAG = [
  "--delete-concurrency <n>",
  "batch deletes in flight at once (default: 8)",
] as const;

/** `--max-deletes-per-second` and `--delete-concurrency` as cleanup options; bad values are usage errors. */
export function deleteRateOptions(
  opts: Record<string, unknown>,
): Pick<CleanupOptions, "maxDeletesPerSecond" | "deleteConcurrency"> {
  return {
    ...(opts.maxDeletesPerSecond === undefined
      ? {}
      : {
          maxDeletesPerSecond: parseCountArg(
            opts.maxDeletesPerSecond,
            "--max-deletes-per-second",
            1,
          ),
        }),
    ...(opts.deleteConcurrency === undefined
      ? {}
      : { deleteConcurrency: parseCountArg(opts.deleteConcurrency, "--delete-concurrency", 1) }),
  };
}

/**
 * A run stopped by Ctrl-C/SIGTERM at a safe point: print what it did before, then the
 * error (exit 130). Any other error is rethrown to the uniform handler.
 */
export function reportInterrupted(out: Output, command: string, error: unknown): number {
  if (!isHoldfastError(error, "aborted") || error.code !== CLEANUP_INTERRUPTED) throw error;
  const stats = (error as unknown as { stats?: CleanupStats }).stats;
  if (stats && !out.json) {
    printStats(out, stats);
    out.line(
      out.paint(
        "yellow",
        "Interrupted at a safe point: the retirement in flight was given up (nothing blocks leases); committed work left behind is finished by holdfast recover.",
      ),
    );
  }
  return out.error(command, error);
}

/** Prints the cleanup summary: retired, retained with reasons, objects, bytes, requests, time. */
export function printStats(out: Output, stats: CleanupStats): void {
  if (out.json) return;
  const verb = stats.dryRun ? "Would retire" : "Retired";
  const byBranch = groupBy(stats.retired, (v) => v.branch);
  out.line();
  out.line(
    out.paint(
      "bold",
      stats.dryRun ? "Cleanup plan (dry run: nothing was written)" : "Cleanup summary",
    ),
  );
  if (stats.retired.length === 0) {
    out.line(`${verb}: nothing.`);
  } else {
    out.line(`${verb} ${stats.retired.length} version(s):`);
    for (const [branch, list] of byBranch) {
      out.line(`  ${branch}: ${formatRanges(list.map((v) => v.version))}`);
    }
  }
  out.line(`Kept ${stats.retained.length} version(s):`);
  const groups = groupBy(stats.retained, (v) => `${v.branch}\u0000${v.reason}`);
  out.table(
    ["BRANCH", "VERSIONS", "REASON"],
    [...groups.values()]
      .sort((a, b) => a[0]!.branch.localeCompare(b[0]!.branch) || minVersion(a) - minVersion(b))
      .map((list) => [
        list[0]!.branch,
        formatRanges(list.map((v) => v.version)),
        `${list[0]!.reason}: ${REASON_TEXT[list[0]!.reason] ?? list[0]!.reason}`,
      ]),
  );
  const o = stats.objectsDeleted as Record<string, number> & typeof stats.objectsDeleted;
  // Any other kind of object cleanup reports (expired leases, clock probes) when non-zero.
  const extra = Object.entries(o)
    .filter(([k, v]) => !["total", "manifests", "dataFiles", "orphans"].includes(k) && v > 0)
    .map(([k, v]) => `, ${v} ${k.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`)
    .join("");
  out.line(
    `${stats.dryRun ? "Would delete" : "Deleted"} ${o.total} object(s) (${o.manifests} manifests, ${o.dataFiles} data files, ${o.orphans} orphans${extra}), ${formatBytes(stats.bytesDeleted)}.`,
  );
  const r = stats.requests;
  out.line(
    `Requests: ${r.total} (${(["list", "get", "head", "put", "delete", "deleteMany"] as const).map((k) => `${k} ${r[k]}`).join(", ")}).`,
  );
  out.line(`Elapsed: ${formatDuration(stats.elapsedMs)}.`);
  for (const warning of stats.warnings) out.line(out.paint("yellow", `warning: ${warning}`));
}

function minVersion(list: readonly { version: number }[]): number {
  return Math.min(...list.map((v) => v.version));
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
