import { type CleanupPolicy, type RecoveredRun, recoverAndCleanup } from "@holdfast/cleanup";
import { holdfastError } from "@holdfast/conditional-store";
import { Command } from "commander";
import { parseCountArg, parseNameArg, parseVersionArg } from "../args.js";
import { parseDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import { openFormatDataset, parseFormatOption } from "../format.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { ProgressView } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

import {
  DELETE_CONCURRENCY_FLAG,
  MAX_DELETES_FLAG,
  printReferences,
  printStats,
  reportInterrupted,
  runOptions,
  warnLanceAutoCleanup,
} from "./cleanup-run.js";

/** `cleanup`: retires old versions safely (policy first, then every protection). */
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
          .option(...MAX_DELETES_FLAG)
          .option(...DELETE_CONCURRENCY_FLAG)
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
      cleanupCommand,
    ),
  );
}

/** `holdfast cleanup`. */
async function cleanupCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
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
}

// --- utils ---

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
