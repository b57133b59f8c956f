import { holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/dataset";
import {
  type FormatEntry,
  FormatRegistry,
  holdfastFormatEntry,
  type OpenedDataset,
  type ResolvedFormat,
} from "@holdfast/refs-lifecycle";
import { LANCE_FORMAT, openLanceFormat } from "./format.js";
import { classifyVersionsKey, LANCE_VERSIONS_PREFIX } from "./naming.js";
import { LANCE_MAIN_BRANCH } from "./refs.js";

/**
 * The dataset formats an application serving existing datasets knows (the CLI and the
 * server): holdfast's own, and Lance tables as LanceDB writes them (docs/lance.md).
 */
export const DATASET_FORMAT_NAMES = ["holdfast", "lance"] as const;
export type DatasetFormatName = (typeof DATASET_FORMAT_NAMES)[number];

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

/**
 * Resolves the dataset's format: `forced` (a `--format` flag) or detected
 * ({@link datasetFormats}). Its `format` carries the reference codec and census (a Lance
 * table's tags and branch fork points), so nothing else needs passing.
 */
export async function resolveDatasetFormat(
  ctx: ProtocolContext,
  forced?: DatasetFormatName,
): Promise<ResolvedFormat<DatasetFormatName>> {
  return (await datasetFormats().resolve(ctx, forced)) as ResolvedFormat<DatasetFormatName>;
}

/**
 * Opens an existing dataset of either format ({@link datasetFormats}): holdfast's checks its
 * identity object and names its default branch; a Lance table's versions live on `main`.
 * Every command and route that reads or writes an existing dataset opens it here and passes
 * the handle's format on, so the format is bound once and honoured everywhere.
 */
export async function openDatasetOfFormat(
  ctx: ProtocolContext,
  forced?: DatasetFormatName,
): Promise<OpenedDataset<DatasetFormatName>> {
  return (await datasetFormats().open(ctx, forced)) as OpenedDataset<DatasetFormatName>;
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

/**
 * The formats an application serving existing datasets knows ({@link DATASET_FORMAT_NAMES}):
 * holdfast's own, and Lance tables, detected by one listing of `_versions/`. What the CLI
 * and the server open datasets with.
 */
export function datasetFormats(): FormatRegistry {
  // A fresh registry per call: an application may register more formats into its own.
  return new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry);
}
