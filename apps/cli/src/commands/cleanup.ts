import {
  CLEANUP_INTERRUPTED,
  type CleanupOptions,
  type CleanupPolicy,
  type CleanupStats,
  type RecoveredRun,
  recoverAll,
  recoverAndCleanup,
} from "@holdfast/cleanup";
import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/dataset";
import { abandonRetirement } from "@holdfast/retirement";
import { Command } from "commander";
import { parseCountArg, parseNameArg, parseVersionArg } from "../args.js";
import { formatBytes, formatDuration, parseDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import {
  lanceAutoCleanupWarning,
  openFormatDataset,
  parseFormatOption,
  type ResolvedFormat,
  withFormatOption,
} from "../format.js";
import {
  type CleanupLockHolder,
  describeLockHolder,
  inspectCleanupLock,
  lockHeldError,
} from "../lock-holder.js";
import type { Output } from "../output.js";
import { type Registrar, withStoreOptions } from "../program.js";
import { formatRanges, ProgressView } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

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

/** `cleanup`, `recover` (`status` is in status.ts). */
export function registerCleanup(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("cleanup")
          .description(
            "retire old versions safely: leases, tags, branches and in-flight operations are always respected",
          )
          .argument("<url>", "storage URL")
          .option(
            "--older-than <duration>",
            "retire versions older than this in storage time, e.g. 7d",
          )
          .option("--retain <n>", "keep the newest N versions of every branch")
          .option("--before-version <n>", "retire versions numbered below N")
          .option("-b, --branch <name...>", "retire versions of these branches only")
          .option(
            "--orphan-grace <duration>",
            "delete unreferenced data files older than this",
            "7d",
          )
          .option(
            "--no-writer-active",
            "state that no writer can be committing during this run: allows --orphan-grace below 1h",
          )
          .option(
            "--min-age <duration>",
            "never retire versions younger than this (storage time): a writer whose commit answer was lost may still be re-issuing it",
            "5m",
          )
          .option(
            "--error-if-tagged",
            "fail (writing nothing) if a tag names a version the policy would retire",
          )
          .option(
            "--dry-run",
            "plan only: show what would be retired and kept; writes only one storage-time probe, so the plan judges leases by the store's clock exactly as the run will",
          )
          .option(
            "--format <name>",
            "dataset format: holdfast or lance (default: detected from the dataset)",
          )
          .option("--wait", "wait for another cleanup of this dataset to finish instead of exiting")
          .option(
            "--progress",
            "print progress lines on stderr even when it is not a terminal (logs, CI); --json prints progress events as JSON lines on stderr",
          )
          .option(
            "--concurrent",
            "run even while another cleanup holds the dataset's lock (safe, but both do the work)",
          )
          .addHelpText(
            "after",
            '\nOne cleanup runs at a time per dataset: a second exits 3 with "another cleanup is running\n' +
              '(owner, since)". Ctrl-C stops at the next safe point (exit 130); a second Ctrl-C exits at once.',
          ),
      ),
      "cleanup",
      [
        "holdfast cleanup ./my-dataset --retain 10 --dry-run",
        "holdfast cleanup ./my-dataset --older-than 7d",
        "holdfast cleanup s3://bucket/ds --before-version 100 --retain 5 --json",
        "holdfast cleanup s3://bucket/db/events.lance --retain 10   # a Lance table (LanceDB)",
      ],
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const policy = parsePolicy(opts);
        const forced = parseFormatOption(opts.format);
        const ctx = contextFor(await openTarget(t, cx.io));
        const { resolved } = await openFormatDataset(ctx, forced, { describe: true });
        warnLanceAutoCleanup(cx.out, resolved);
        const view = new ProgressView(cx.out, {
          clock: ctx.clock,
          plain: opts.progress === true,
          command: "cleanup",
        });
        let done: RecoveredRun;
        try {
          // A run that writes recovers interrupted tag and branch operations first (the
          // cleanup package's rule, as the server's jobs); a dry run writes nothing.
          done = await recoverAndCleanup(
            ctx,
            policy,
            runOptions(opts, cx.interrupt, resolved, (p) => view.update(p)),
          );
        } catch (error) {
          view.stop();
          return reportInterrupted(cx.out, cx.command, error);
        } finally {
          view.stop();
        }
        const { stats, references } = done;
        cx.out.result(cx.command, {
          location: t.display,
          format: resolved.name,
          policy,
          stats,
          references,
        });
        if (references) printReferences(cx.out, references, { quiet: true });
        printStats(cx.out, stats);
        return ExitCode.ok;
      },
    ),
  );

  program.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(new Command("recover"))
          .description(
            "finish or undo interrupted work: retirements, tag and branch operations (safe to run any time)",
          )
          .argument("<url>", "storage URL")
          .option(
            "--abandon <id>",
            "end one retirement now (its ID from holdfast status): only draining or sealed ones; committed ones run to completion",
          )
          .option("--wait", "wait while another cleanup holds the dataset's lock (the default)")
          .option(
            "--no-wait",
            "refuse at once (exit 3) while another cleanup holds the dataset's lock, instead of waiting",
          )
          .option("--concurrent", "run even while a cleanup holds the dataset's lock")
          .option(
            "--progress",
            "print progress lines on stderr even when it is not a terminal (logs, CI)",
          )
          .addHelpText(
            "after",
            "\nWhile another cleanup holds the dataset's lock, recover says who holds it, its last heartbeat\n" +
              "(storage time) and when the lock clears, then waits for it (--no-wait: exit 3 at once). A killed\n" +
              "cleanup's lock clears one bound (60 s) after its last heartbeat.\n" +
              "\n--abandon <id> is safe for a retirement that is draining or sealed (pre-commit): cancelling\n" +
              "keeps every version, and an owner still running fails its next conditional write and stops\n" +
              "without deleting anything. A committed retirement is refused (exit 1, RETIREMENT_COMMITTED):\n" +
              "its versions are already decided and plain `holdfast recover` finishes it. Without --abandon,\n" +
              "a crashed cleaner's record stops blocking leases about a minute after its last renewal.",
          ),
      ),
      "recover",
      [
        "holdfast recover ./my-dataset",
        "holdfast recover s3://bucket/ds --json",
        "holdfast recover ./my-dataset --no-wait   # exit 3 at once while a cleanup holds the lock",
        "holdfast recover ./my-dataset --abandon 01JD5X2Q7Z3V8M4K6N1P9R0S2T",
      ],
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const abandonId =
          typeof opts.abandon === "string" ? parseAbandonId(opts.abandon) : undefined;
        const forced = parseFormatOption(opts.format);
        const ctx = contextFor(await openTarget(t, cx.io));
        const { resolved } = await openFormatDataset(ctx, forced);
        if (abandonId !== undefined) return abandonOne(ctx, abandonId, t.display, cx.out);
        const wait = opts.wait !== false;
        // Before anything is written: a held lock is explained, then waited for or refused.
        const waited =
          opts.concurrent === true
            ? null
            : await waitForLockHolder(ctx, wait, cx.out, cx.interrupt);
        const view = new ProgressView(cx.out, {
          clock: ctx.clock,
          plain: opts.progress === true,
          command: "recover",
        });
        let done: RecoveredRun;
        try {
          // References first, then retirements (the cleanup package's recoverAll).
          done = await recoverAll(ctx, {
            ...runOptions(opts, cx.interrupt, resolved, (p) => view.update(p)),
            waitForLock: wait,
          });
        } catch (error) {
          view.stop();
          return reportInterrupted(cx.out, cx.command, error);
        } finally {
          view.stop();
        }
        const { stats, references, referenceKeys } = done;
        cx.out.result(cx.command, {
          location: t.display,
          references,
          referenceKeys,
          retirements: stats.recovered,
          retired: stats.retired,
          finished: stats.finished,
          objectsDeleted: stats.objectsDeleted,
          bytesDeleted: stats.bytesDeleted,
          warnings: stats.warnings,
          waitedForLock:
            waited === null
              ? null
              : {
                  owner: waited.owner,
                  lastHeartbeat: waited.lastHeartbeat.toISOString(),
                  clearsAt: waited.clearsAt.toISOString(),
                  stoppedRenewing: waited.stoppedRenewing,
                },
        });
        if (references) printReferences(cx.out, references, { quiet: false });
        cx.out.line(
          `Retirements: ${stats.recovered.committed} committed one(s) finished, ${stats.recovered.cancelled} cancelled, ` +
            `${stats.recovered.retained} version(s) kept; ${stats.objectsDeleted.total} object(s), ${formatBytes(stats.bytesDeleted)} deleted.`,
        );
        for (const warning of stats.warnings)
          cx.out.line(cx.out.paint("yellow", `warning: ${warning}`));
        return ExitCode.ok;
      },
    ),
  );
}

// --- utils ---

/** What the reference recovery before a run did; `quiet` prints nothing when it did nothing. */
function printReferences(
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
function warnLanceAutoCleanup(out: Output, resolved: ResolvedFormat): void {
  const warning = lanceAutoCleanupWarning(resolved);
  if (warning) out.line(out.paint("yellow", `warning: ${warning}`));
}

/** Options both `cleanup` and `recover` take: the format, progress, the interrupt, the lock flags. */
function runOptions(
  opts: Record<string, unknown>,
  interrupt: AbortSignal,
  resolved: ResolvedFormat,
  onProgress: NonNullable<CleanupOptions["onProgress"]>,
): CleanupOptions {
  return {
    onProgress,
    format: resolved.format,
    referenceCensus: resolved.referenceCensus,
    signal: interrupt,
    concurrent: opts.concurrent === true,
    waitForLock: opts.wait === true,
  };
}

/**
 * A run stopped by Ctrl-C/SIGTERM at a safe point: print what it did before, then the
 * error (exit 130). Any other error is rethrown to the uniform handler.
 */
function reportInterrupted(out: Output, command: string, error: unknown): number {
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

/**
 * `recover` while another cleanup holds the lock: says who holds it, its last heartbeat and
 * when the lock clears (storage time), then either refuses (`--no-wait`, CLEANUP_RUNNING) or
 * waits. A holder that stopped renewing is waited out on a local timer for the storage-time
 * difference until the lock clears; a live one is waited for by the cleanup package's lock
 * wait, which also covers a holder that renews after all.
 */
async function waitForLockHolder(
  ctx: ProtocolContext,
  wait: boolean,
  out: Output,
  interrupt: AbortSignal,
): Promise<CleanupLockHolder | null> {
  const holder = await inspectCleanupLock(ctx);
  if (!holder) return null;
  if (!wait) throw lockHeldError(holder);
  out.note(`${describeLockHolder(holder)}. Waiting for it (--no-wait refuses at once).`);
  if (!holder.stoppedRenewing) return holder;
  try {
    await ctx.sleep(Math.max(0, holder.clearsAt.getTime() - holder.now.getTime()), interrupt);
  } catch (error) {
    throw holdfastError("aborted", "recover", "interrupted while waiting for the cleanup lock", {
      hint: "nothing was written; run holdfast recover again",
      cause: error,
    });
  }
  return holder;
}

/** Ends one pre-commit retirement now (`recover --abandon`). */
async function abandonOne(
  ctx: ProtocolContext,
  id: string,
  location: string,
  out: Output,
): Promise<number> {
  const done = await abandonRetirement(ctx, id);
  out.result("recover", {
    location,
    abandoned: {
      key: done.key,
      branch: done.branch,
      previousState: done.previousState,
      versions: done.versions,
    },
  });
  out.line(
    `Abandoned retirement ${id} (${done.previousState}) of ${done.branch}: versions ${formatRanges(done.versions)} are open again.`,
  );
  return ExitCode.ok;
}

function parseAbandonId(text: string): string {
  if (!/^[0-9A-Za-z]+$/.test(text)) {
    throw holdfastError("invalid-input", "parse", `--abandon takes a retirement ID, got ${text}`, {
      hint: "holdfast status lists retirements in flight with their IDs",
    });
  }
  return text;
}

function parsePolicy(opts: Record<string, unknown>): CleanupPolicy {
  const policy: {
    -readonly [K in keyof CleanupPolicy]: CleanupPolicy[K];
  } = {};
  if (opts.olderThan !== undefined)
    policy.olderThanMs = parseDuration(String(opts.olderThan), "--older-than");
  if (opts.retain !== undefined) policy.retainVersions = parseCountArg(opts.retain, "--retain", 1);
  if (opts.beforeVersion !== undefined)
    policy.beforeVersion = parseVersionArg(opts.beforeVersion, "--before-version");
  if (opts.orphanGrace !== undefined)
    policy.orphanGraceMs = parseDuration(String(opts.orphanGrace), "--orphan-grace");
  if (opts.minAge !== undefined) {
    policy.minVersionAgeMs = parseDuration(String(opts.minAge), "--min-age");
  }
  if (Array.isArray(opts.branch))
    policy.branches = opts.branch.map((b) => parseNameArg(b, "branch"));
  if (opts.errorIfTagged === true) policy.errorIfTaggedOldVersions = true;
  if (opts.writerActive === false) policy.noWriterActive = true;
  if (opts.dryRun === true) policy.dryRun = true;
  if (
    policy.olderThanMs === undefined &&
    policy.retainVersions === undefined &&
    policy.beforeVersion === undefined
  ) {
    throw holdfastError("invalid-input", "parse", "cleanup needs a policy", {
      hint: "pass at least one of --older-than 7d, --retain N, --before-version N (add --dry-run to preview)",
    });
  }
  return policy;
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
