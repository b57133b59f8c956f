import { collectStatus, type DatasetStatus } from "@holdfast/cleanup";
import { Command } from "commander";
import { ExitCode } from "../exit-codes.js";
import {
  type LanceDetails,
  lanceAutoCleanupWarning,
  openFormatDataset,
  parseFormatOption,
  printLanceDetails,
  withFormatOption,
} from "../format.js";
import type { Output } from "../output.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { formatRanges } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `status`: what a person checking on a dataset (or on something stuck) wants to know. */
export function registerStatus(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("status")
            .description(
              "show branches, tags, active leases, retirements in flight, the cleanup lock and pending reference intents; on a Lance table also its naming, versions, flags, tags, branches and whether Lance's own automatic cleanup is on (how to read it: docs/operations.md)",
            )
            .argument("<url>", "storage URL"),
        ),
      ),
      "status",
      [
        "holdfast status ./my-dataset",
        "holdfast status az://container/ds --json",
        "holdfast status s3://bucket/db/events.lance   # a Lance table (LanceDB)",
      ],
      statusCommand,
    ),
  );
}

/** `holdfast status`. */
async function statusCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const t = parseTarget(url!, opts, cx.io);
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(t, cx.io, { readOnly: true }));
  const { resolved, datasetId, defaultBranch } = await openFormatDataset(ctx, forced, {
    describe: true,
  });
  const status = await collectStatus(ctx, { format: resolved.format });
  const warning = lanceAutoCleanupWarning(resolved);
  cx.out.result(cx.command, {
    location: t.display,
    datasetId,
    defaultBranch,
    format: resolved.name,
    ...status,
    ...(resolved.lance ? { lance: resolved.lance } : {}),
    warnings: warning ? [warning] : [],
  });
  printStatus(cx.out, t.display, status, resolved.lance);
  if (warning) cx.out.line(cx.out.paint("yellow", `warning: ${warning}`));
  return ExitCode.ok;
}

// --- utils ---

function printStatus(
  out: Output,
  location: string,
  s: DatasetStatus,
  lance: LanceDetails | undefined,
): void {
  out.line(out.paint("bold", `holdfast status ${location}`));
  out.line();
  if (lance) {
    printLanceDetails(out, lance);
    out.line();
  }
  out.line(out.paint("bold", "Branches"));
  out.table(
    ["BRANCH", "LATEST VERSION"],
    s.branches.map((b) => [b.name, String(b.latestVersion ?? "-")]),
  );
  out.line();
  out.line(out.paint("bold", `Tags (${s.tags.length})`));
  if (s.tags.length > 0)
    out.table(
      ["TAG", "VERSION"],
      s.tags.map((t) => [t.name, `${t.target.branch}@${t.target.version}`]),
    );
  out.line();
  out.line(out.paint("bold", `Active leases (${s.leases.length})`));
  if (s.leases.length > 0) {
    out.table(
      ["LEASE", "VERSION", "EXPIRES (storage time)"],
      s.leases.map((l) => [l.leaseId, `${l.branch}@${l.version}`, l.expiresAt ?? "?"]),
    );
  }
  out.line();
  out.line(out.paint("bold", `Retirements in flight (${s.retirements.length})`));
  if (s.retirements.length > 0) {
    out.table(
      ["ID", "BRANCH", "STATE", "VERSIONS", "SINCE (storage time)"],
      s.retirements.map((r) => [
        r.opId,
        r.branch,
        r.abandoned
          ? `${r.state} (stale: its owner stopped renewing; holdfast recover, or recover --abandon ${r.opId})`
          : r.state,
        formatRanges(r.versions),
        r.lastModified,
      ]),
    );
  }
  out.line();
  out.line(out.paint("bold", "Cleanup lock"));
  out.line(
    s.cleanupLock
      ? `held by cleanup ${s.cleanupLock.owner} since ${s.cleanupLock.since ?? s.cleanupLock.lastModified}` +
          (s.cleanupLock.stale
            ? " (stale: its owner stopped renewing; the next cleanup takes it over)"
            : "")
      : "free",
  );
  out.line();
  out.line(out.paint("bold", `Pending reference intents (${s.intents.length})`));
  if (s.intents.length > 0) {
    out.table(
      ["KIND", "NAME", "OP", "STATE", "SINCE (storage time)"],
      s.intents.map((i) => [
        i.kind,
        i.name,
        i.op,
        i.expired ? `${i.state} (expired: run holdfast recover)` : i.state,
        i.lastModified,
      ]),
    );
  }
}
