import { holdfastError } from "@holdfast/conditional-store";
import {
  type DatasetFormat,
  defaultFormat,
  openDataset,
  type ProtocolContext,
} from "@holdfast/dataset";
import type { ReferenceCensus } from "@holdfast/retirement";

/** Formats the CLI knows: holdfast's own, and Lance tables as LanceDB writes them. */
export const FORMAT_NAMES = ["holdfast", "lance"] as const;
export type FormatName = (typeof FORMAT_NAMES)[number];

/** The format of an existing dataset and what cleanup needs with it. */
export interface ResolvedFormat {
  readonly name: FormatName;
  readonly format: DatasetFormat;
  /** Lance tables keep Lance's tags and branch fork points; holdfast's census otherwise. */
  readonly referenceCensus?: ReferenceCensus | undefined;
  /** Lance details for doctor/status (naming, versions, Lance's automatic cleanup). */
  readonly lance?: Awaited<
    ReturnType<typeof import("@holdfast/format-lance").describeLanceDataset>
  >;
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
 * (`--format`) skips detection. The Lance package loads only for a Lance table.
 */
export async function resolveFormat(
  ctx: ProtocolContext,
  forced?: FormatName,
): Promise<ResolvedFormat> {
  const name = forced ?? (await detect(ctx));
  if (name === "holdfast") return { name, format: defaultFormat };
  const lance = await import("@holdfast/format-lance");
  const format = await lance.openLanceFormat(ctx);
  return {
    name,
    format,
    referenceCensus: lance.censusLanceReferences(ctx),
    lance: await lance.describeLanceDataset(ctx, format),
  };
}

/**
 * Opens an existing dataset of either format: holdfast's checks its identity object and
 * names its default branch; a Lance table's versions live on `main`.
 */
export async function openFormatDataset(
  ctx: ProtocolContext,
  forced?: FormatName,
): Promise<{ resolved: ResolvedFormat; defaultBranch: string }> {
  const resolved = await resolveFormat(ctx, forced);
  if (resolved.name === "lance") return { resolved, defaultBranch: "main" };
  const info = await openDataset(ctx);
  return { resolved, defaultBranch: info.defaultBranch };
}

// --- utils ---

async function detect(ctx: ProtocolContext): Promise<FormatName> {
  // Lance names manifests `_versions/{digits}.manifest`; holdfast's live one folder deeper
  // (`_versions/{branch}/{version}.json`), so one name decides. One short page is enough:
  // only `.tmp*` leftovers of failed Lance commits sort before the manifests.
  const page = await ctx.store.list("_versions/", { pageSize: 64 });
  return page.objects.some((meta) => /^_versions\/\d+\.manifest$/.test(meta.key))
    ? "lance"
    : "holdfast";
}
