import { holdfastError } from "@holdfast/conditional-store";
import {
  type DatasetFormat,
  defaultFormat,
  openDataset,
  type ProtocolContext,
} from "@holdfast/dataset";
import type { FormatEntry } from "@holdfast/refs-lifecycle";
import type { ReferenceCensus } from "@holdfast/retirement";
import { LANCE_FORMAT, openLanceFormat } from "./format.js";
import { classifyVersionsKey, LANCE_VERSIONS_PREFIX } from "./naming.js";
import { censusLanceReferences, LANCE_MAIN_BRANCH } from "./refs.js";

/**
 * The dataset formats an application serving existing datasets knows (the CLI and the
 * server): holdfast's own, and Lance tables as LanceDB writes them (docs/lance.md).
 */
export const DATASET_FORMAT_NAMES = ["holdfast", "lance"] as const;
export type DatasetFormatName = (typeof DATASET_FORMAT_NAMES)[number];

/** The format of an existing dataset and what cleanup needs with it. */
export interface ResolvedFormat {
  readonly name: DatasetFormatName;
  readonly format: DatasetFormat;
  /** Lance tables keep Lance's tags and branch fork points; holdfast's census otherwise. */
  readonly referenceCensus?: ReferenceCensus | undefined;
}

/** An existing dataset of either format, opened. */
export interface OpenedDataset {
  readonly resolved: ResolvedFormat;
  /** holdfast's default branch; `main` on a Lance table. */
  readonly defaultBranch: string;
  /** holdfast's dataset identity; `null` for a Lance table (which has none). */
  readonly datasetId: string | null;
}

/** Code of the `unsupported` error a write of holdfast's own layout into a Lance table gets. */
export const FORMAT_READ_ONLY = "FORMAT_READ_ONLY";

/**
 * The format of the dataset at the store's root, from one short listing of `_versions/`:
 * Lance names manifests `_versions/{digits}.manifest`, holdfast one folder deeper
 * (`_versions/{branch}/{version}.json`), so one name decides. One page is enough: only
 * `.tmp*` leftovers of failed Lance commits sort before the manifests. Anything else is
 * holdfast's format, whose open reports a missing dataset.
 */
export async function detectDatasetFormat(ctx: ProtocolContext): Promise<DatasetFormatName> {
  const page = await ctx.store.list(LANCE_VERSIONS_PREFIX, { pageSize: 64 });
  return page.objects.some((meta) => classifyVersionsKey(meta.key).kind === "manifest")
    ? "lance"
    : "holdfast";
}

/** Resolves the dataset's format: `forced` (a `--format` flag) or detected. */
export async function resolveDatasetFormat(
  ctx: ProtocolContext,
  forced?: DatasetFormatName,
): Promise<ResolvedFormat> {
  const name = forced ?? (await detectDatasetFormat(ctx));
  if (name === "holdfast") return { name, format: defaultFormat };
  return {
    name,
    format: await openLanceFormat(ctx),
    referenceCensus: censusLanceReferences(ctx),
  };
}

/**
 * Opens an existing dataset of either format: holdfast's checks its identity object and
 * names its default branch; a Lance table's versions live on `main`. Every command and
 * route that reads or writes an existing dataset opens it here, so the format is
 * honoured everywhere.
 */
export async function openDatasetOfFormat(
  ctx: ProtocolContext,
  forced?: DatasetFormatName,
): Promise<OpenedDataset> {
  const resolved = await resolveDatasetFormat(ctx, forced);
  if (resolved.name === "lance") {
    return { resolved, defaultBranch: LANCE_MAIN_BRANCH, datasetId: null };
  }
  const info = await openDataset(ctx);
  return { resolved, defaultBranch: info.defaultBranch, datasetId: info.datasetId };
}

/**
 * Refuses a write of holdfast's own layout (a commit, a data file upload) into a dataset
 * whose format holdfast only reads: `unsupported`, code FORMAT_READ_ONLY, before any
 * request. A Lance table is written by LanceDB; holdfast never writes Lance manifests.
 */
export function requireWritableFormat(resolved: ResolvedFormat, operation: string): void {
  if (resolved.name === "holdfast") return;
  throw holdfastError(
    "unsupported",
    operation,
    "this is a Lance table: its versions are written by LanceDB, and holdfast never writes Lance manifests; nothing was written",
    {
      code: FORMAT_READ_ONLY,
      hint: "commit with LanceDB (table.add, table.delete, ...); holdfast leases, tags and cleans the versions it writes",
    },
  );
}

/**
 * Lance tables as an application registers the format:
 * `new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry)`. Detection is
 * {@link detectDatasetFormat}'s one listing of `_versions/`; opening reads the manifest
 * naming; a Lance table's versions live on `main` and it has no holdfast identity.
 */
export const lanceFormatEntry: FormatEntry = {
  name: LANCE_FORMAT,
  detect: async (ctx) => (await detectDatasetFormat(ctx)) === "lance",
  resolve: async (ctx) => ({ name: LANCE_FORMAT, format: await openLanceFormat(ctx) }),
  async open(ctx) {
    return {
      resolved: { name: LANCE_FORMAT, format: await openLanceFormat(ctx) },
      defaultBranch: LANCE_MAIN_BRANCH,
      datasetId: null,
    };
  },
};
