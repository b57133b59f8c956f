import { holdfastError } from "@holdfast/conditional-store";
import {
  describeLanceDataset,
  type LanceDatasetReport,
  type LanceFormat,
  lanceFormatEntry,
  lanceAutoCleanupWarning as lanceReportWarning,
} from "@holdfast/format-lance";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  FormatRegistry,
  holdfastFormatEntry,
  type OpenedDataset,
  type ResolvedFormat as SharedResolvedFormat,
} from "@holdfast/refs-lifecycle";
import type { Command } from "commander";
import type { Output } from "./output.js";

/**
 * The formats the CLI knows, bound once per dataset by detection or `--format`: holdfast's
 * own, and Lance tables as LanceDB writes them (docs/lance.md). A new format is one
 * `register` line here; nothing else in the CLI names a format's layout.
 */
export const formats = new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry);

/** The names `--format` takes, holdfast's first. */
export const FORMAT_NAMES = formats.names;
export type FormatName = string;

/** The format of an existing dataset, with the Lance details `describe` asked for. */
export interface ResolvedFormat extends SharedResolvedFormat<FormatName> {
  /** Lance details for cleanup, doctor and status (naming, versions, Lance's automatic cleanup). */
  readonly lance?: LanceDetails;
}

/** What `describeLanceDataset` reports about a Lance table. */
export type LanceDetails = LanceDatasetReport;

/** Prints a Lance table's details (status, doctor). */
export function printLanceDetails(out: Output, lance: LanceDetails): void {
  out.line(out.paint("bold", "Lance table"));
  out.table(
    ["MANIFEST NAMING", "VERSIONS", "LATEST", "FILE FORMAT", "READER FLAGS", "TAGS", "BRANCHES"],
    [
      [
        lance.naming.toUpperCase(),
        String(lance.versions),
        lance.latest === null ? "-" : String(lance.latest),
        lance.formatVersion ?? "-",
        lance.readerFeatureFlags ?? "-",
        String(lance.tags),
        String(lance.branches),
      ],
    ],
  );
  out.line(
    lance.autoCleanup
      ? "Lance's automatic cleanup: ON (ignores holdfast's leases)"
      : "Lance's automatic cleanup: off",
  );
}

/** Adds `--format` to a command that opens an existing dataset. */
export function withFormatOption(command: Command): Command {
  return command.option(
    "--format <name>",
    "dataset format: holdfast or lance (default: detected from the dataset)",
  );
}

/** Checks `--format`; throws `invalid-input` before any request. */
export function parseFormatOption(value: unknown): FormatName | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string" && (FORMAT_NAMES as readonly string[]).includes(value)) {
    return value as FormatName;
  }
  throw holdfastError("invalid-input", "parse", `unknown --format ${String(value)}`, {
    hint: `use one of: ${FORMAT_NAMES.join(", ")}`,
  });
}

/**
 * The dataset's format (`forced` by `--format`, else detected by {@link formats}, as the
 * server's registry does); `describe` also reads a Lance
 * table's details (every manifest name, the latest manifest, `_refs/`) for cleanup,
 * status and doctor.
 */
export async function resolveFormat(
  ctx: ProtocolContext,
  forced?: FormatName,
  options: { describe?: boolean } = {},
): Promise<ResolvedFormat> {
  return withDetails(ctx, await formats.resolve(ctx, forced), options);
}

/** An existing dataset of either format, opened. */
export interface OpenedFormatDataset extends OpenedDataset<FormatName> {
  readonly resolved: ResolvedFormat;
}

/**
 * Opens an existing dataset in its format ({@link formats}: `forced` or detected). Every
 * command that reads or writes an existing dataset opens it here, so the format is bound
 * once and honoured everywhere.
 */
export async function openFormatDataset(
  ctx: ProtocolContext,
  forced?: FormatName,
  options: { describe?: boolean } = {},
): Promise<OpenedFormatDataset> {
  const opened = await formats.open(ctx, forced);
  return { ...opened, resolved: await withDetails(ctx, opened.resolved, options) };
}

/**
 * The warning for a Lance table whose config turns on Lance's automatic cleanup (a second
 * cleaner that ignores holdfast's leases), or `null`.
 */
export function lanceAutoCleanupWarning(resolved: ResolvedFormat): string | null {
  return resolved.lance ? lanceReportWarning(resolved.lance) : null;
}

// --- utils ---

async function withDetails(
  ctx: ProtocolContext,
  resolved: SharedResolvedFormat<FormatName>,
  options: { describe?: boolean },
): Promise<ResolvedFormat> {
  if (!options.describe || resolved.name !== "lance") return resolved;
  return { ...resolved, lance: await describeLanceDataset(ctx, resolved.format as LanceFormat) };
}
