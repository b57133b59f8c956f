import { holdfastError } from "@holdfast/conditional-store";
import {
  type DatasetFormat,
  defaultFormat,
  openDataset,
  type ProtocolContext,
} from "@holdfast/dataset";
import type { ReferenceCensus } from "@holdfast/retirement";
import type { Command } from "commander";
import type { Output } from "./output.js";

/** Formats the CLI knows: holdfast's own, and Lance tables as LanceDB writes them. */
export const FORMAT_NAMES = ["holdfast", "lance"] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** The format of an existing dataset and what cleanup needs with it. */
export interface ResolvedFormat {
  readonly name: FormatName;
  readonly format: DatasetFormat;
  /** Lance tables keep Lance's tags and branch fork points; holdfast's census otherwise. */
  readonly referenceCensus?: ReferenceCensus | undefined;
  /** Lance details for cleanup, doctor and status (naming, versions, Lance's automatic cleanup). */
  readonly lance?: LanceDetails;
}

/** What `describeLanceDataset` reports about a Lance table. */
export type LanceDetails = Awaited<
  ReturnType<typeof import("@holdfast/format-lance").describeLanceDataset>
>;

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
 * Detects the dataset's format: Lance manifests (`_versions/{N}.manifest`) mean a Lance
 * table, anything else holdfast's own format (whose open reports a missing dataset). `forced`
 * (`--format`) skips detection. The Lance package loads only for a Lance table; `describe`
 * also reads its details (every manifest name, the latest manifest, `_refs/`) for
 * cleanup, status and doctor.
 */
export async function resolveFormat(
  ctx: ProtocolContext,
  forced?: FormatName,
  options: { describe?: boolean } = {},
): Promise<ResolvedFormat> {
  const name = forced ?? (await detectFormat(ctx));
  if (name === "holdfast") return { name, format: defaultFormat };
  const lance = await import("@holdfast/format-lance");
  const format = await lance.openLanceFormat(ctx);
  return {
    name,
    format,
    referenceCensus: lance.censusLanceReferences(ctx),
    ...(options.describe ? { lance: await lance.describeLanceDataset(ctx, format) } : {}),
  };
}

/** An existing dataset of either format, opened. */
export interface OpenedDataset {
  readonly resolved: ResolvedFormat;
  readonly defaultBranch: string;
  /** holdfast's dataset identity; `null` for a Lance table (which has none). */
  readonly datasetId: string | null;
}

/**
 * Opens an existing dataset of either format: holdfast's checks its identity object and
 * names its default branch; a Lance table's versions live on `main`. Every command that
 * reads or writes an existing dataset opens it here, so the format is honoured everywhere.
 */
export async function openFormatDataset(
  ctx: ProtocolContext,
  forced?: FormatName,
  options: { describe?: boolean } = {},
): Promise<OpenedDataset> {
  const resolved = await resolveFormat(ctx, forced, options);
  if (resolved.name === "lance") return { resolved, defaultBranch: "main", datasetId: null };
  const info = await openDataset(ctx);
  return { resolved, defaultBranch: info.defaultBranch, datasetId: info.datasetId };
}

/**
 * The warning for a Lance table whose config turns on Lance's automatic cleanup (a second
 * cleaner that ignores holdfast's leases), or `null`.
 */
export function lanceAutoCleanupWarning(resolved: ResolvedFormat): string | null {
  const auto = resolved.lance?.autoCleanup;
  if (!auto) return null;
  const settings = Object.entries(auto)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");
  return `this Lance table turns on Lance's automatic cleanup (${settings}): writers run a second cleaner that ignores holdfast's leases; turn it off`;
}

/** The format of the dataset at the store's root, from one short listing of `_versions/`. */
export async function detectFormat(ctx: ProtocolContext): Promise<FormatName> {
  // Lance names manifests `_versions/{digits}.manifest`; holdfast's live one folder deeper
  // (`_versions/{branch}/{version}.json`), so one name decides. One short page is enough:
  // only `.tmp*` leftovers of failed Lance commits sort before the manifests.
  const page = await ctx.store.list("_versions/", { pageSize: 64 });
  return page.objects.some((meta) => /^_versions\/\d+\.manifest$/.test(meta.key))
    ? "lance"
    : "holdfast";
}
