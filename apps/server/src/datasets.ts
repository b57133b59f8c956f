import type { ObjectStore } from "@holdfast/conditional-store";
import { createContext, type ProtocolContext } from "@holdfast/dataset";
import { MeteredStore, type ServerMetrics } from "./metrics.js";

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
