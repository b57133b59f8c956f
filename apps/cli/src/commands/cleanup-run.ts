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
    out.line(`${verb} ${count(stats.retired.length)} version(s):`);
    for (const [branch, list] of byBranch) {
      out.line(`  ${branch}: ${formatRanges(list.map((v) => v.version))}`);
    }
  }
  out.line(`Kept ${count(stats.retained.length)} version(s):`);
  // One row per branch, run of versions and set of reasons: every reason shows.
  const groups = groupBy(stats.retained, (v) => `${v.branch}\u0000${reasonsOf(v).join(",")}`);
  out.table(
    ["BRANCH", "VERSIONS", "REASON"],
    [...groups.values()]
      .sort((a, b) => a[0]!.branch.localeCompare(b[0]!.branch) || minVersion(a) - minVersion(b))
      .map((list) => [
        list[0]!.branch,
        formatRanges(list.map((v) => v.version)),
        reasonsOf(list[0]!)
          .map((r) => `${r}: ${REASON_TEXT[r] ?? r}`)
          .join("; "),
      ]),
  );
  // One total: every object the run deleted (or would), then what they were: the dataset's
  // files by kind with their bytes, then holdfast's own objects.
  const o = stats.objectsDeleted;
  const byKind = Object.entries(stats.deletedByKind ?? {})
    .filter(([, v]) => v.objects > 0)
    .map(
      ([kind, v]) => `${count(v.objects)} ${KIND_WORDS[kind] ?? kind} (${formatBytes(v.bytes)})`,
    );
  const own = (
    [
      ["probes", "leftover clock probes"],
      ["expiredLeases", "expired leases"],
      ["expiredCommitIntents", "abandoned commit markers"],
    ] as const
  )
    .filter(([k]) => (o[k] ?? 0) > 0)
    .map(([k, words]) => `${count(o[k])} ${words}`);
  const parts = [...byKind, ...own];
  out.line(
    `${stats.dryRun ? "Would delete" : "Deleted"} ${count(o.total)} object(s), ${formatBytes(stats.bytesDeleted)}${parts.length > 0 ? `: ${parts.join(", ")}` : ""}.`,
  );
  const r = stats.requests;
  out.line(
    `Requests: ${r.total} (${(["list", "get", "head", "put", "delete", "deleteMany"] as const).map((k) => `${k} ${r[k]}`).join(", ")}).`,
  );
  out.line(`Elapsed: ${formatDuration(stats.elapsedMs)}.`);
  for (const warning of stats.warnings) out.line(out.paint("yellow", `warning: ${warning}`));
}

/** Each kind of the dataset's files, in words. */
const KIND_WORDS: Record<string, string> = {
  manifests: "manifests",
  data: "data files",
  deletion: "deletion files",
  index: "index files",
  transaction: "transaction files",
  other: "other files",
};

/** `5,980`. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** Every reason a version is kept, the deciding one first. */
function reasonsOf(v: { reason: string; reasons?: readonly string[] }): readonly string[] {
  return v.reasons !== undefined && v.reasons.length > 0 ? v.reasons : [v.reason];
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
