import { type RecoveredRun, recoverAll } from "@holdfast/cleanup";
import { holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  abandonRetirement,
  type CleanupLockHolder,
  describeLockHolder,
  inspectCleanupLock,
  lockHeldError,
} from "@holdfast/retirement";
import { Command } from "commander";
import { formatBytes } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import { openFormatDataset, parseFormatOption, withFormatOption } from "../format.js";
import type { Output } from "../output.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { formatRanges, ProgressView } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

import {
  DELETE_CONCURRENCY_FLAG,
  MAX_DELETES_FLAG,
  printReferences,
  reportInterrupted,
  runOptions,
} from "./cleanup-run.js";

/** `recover`: finishes or undoes interrupted work (references, then retirements). */
export function registerRecover(r: Registrar, program: Command): void {
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
          .option(...MAX_DELETES_FLAG)
          .option(...DELETE_CONCURRENCY_FLAG)
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
      recoverCommand,
    ),
  );
}

/** `holdfast recover`. */
async function recoverCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const t = parseTarget(url!, opts, cx.io);
  const abandonId = typeof opts.abandon === "string" ? parseAbandonId(opts.abandon) : undefined;
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(t, cx.io));
  const { resolved } = await openFormatDataset(ctx, forced);
  if (abandonId !== undefined) return abandonOne(ctx, abandonId, t.display, cx.out);
  const wait = opts.wait !== false;
  // Before anything is written: a held lock is explained, then waited for or refused.
  const waited =
    opts.concurrent === true ? null : await waitForLockHolder(ctx, wait, cx.out, cx.interrupt);
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
  for (const warning of stats.warnings) cx.out.line(cx.out.paint("yellow", `warning: ${warning}`));
  return ExitCode.ok;
}

// --- utils ---

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
