import type { ObjectStore } from "@holdfast/conditional-store";
import { lanceFormatEntry } from "@holdfast/format-lance";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { FormatRegistry, holdfastFormatEntry, type OpenedDataset } from "@holdfast/refs-lifecycle";
import { MeteredStore, type ServerMetrics } from "./metrics.js";

/**
 * The formats the server serves, bound once per dataset by detection: holdfast's own, and
 * Lance tables as LanceDB writes them (docs/lance.md). A new format is one `register` line
 * here; nothing else in the server names a format's layout.
 */
export const formats = new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry);

/** A dataset the server serves: its name in URLs and the store holding it (keys relative to its root). */
export interface DatasetSource {
  /** URL segment: letters, digits, `.`, `_`, `-`. */
  readonly name: string;
  readonly store: ObjectStore;
}

/** A served dataset: its metered store and protocol context. */
export interface DatasetEntry {
  readonly name: string;
  readonly store: MeteredStore;
  readonly ctx: ProtocolContext;
  /**
   * The dataset's format once an open found it (a holdfast identity object, or Lance
   * manifests): it never changes for an existing dataset, so later opens skip detection.
   * Unset while the dataset is missing, so a dataset created later is still detected.
   */
  formatName?: string | undefined;
}

/** Wraps each source's store in the metrics counter and builds its protocol context. */
export function openDatasets(
  sources: readonly DatasetSource[],
  metrics: ServerMetrics,
  context: Partial<Omit<ProtocolContext, "store">> = {},
): Map<string, DatasetEntry> {
  const entries = new Map<string, DatasetEntry>();
  for (const source of sources) {
    const store = new MeteredStore(source.store, metrics, source.name);
    entries.set(source.name, { name: source.name, store, ctx: createContext(store, context) });
  }
  return entries;
}

/**
 * Opens a served dataset in its format ({@link formats}), as the CLI does: a Lance
 * table LanceDB wrote is read as Lance (its manifests, tags, branches and census), holdfast's
 * own layout otherwise. The format found is remembered for the process; a Lance table's
 * manifest naming is still read on every open (a migration to V2 names changes it).
 */
export async function openServed(ds: DatasetEntry): Promise<OpenedDataset> {
  const opened = await formats.open(ds.ctx, ds.formatName);
  ds.formatName = opened.resolved.name;
  return opened;
}
