import {
  assertStoreSupported,
  type ObjectStore,
  type ProbeOptions,
} from "@holdfast/conditional-store";
import { type AzureStoreOptions, createAzureStore } from "./azure.js";

export interface OpenAzureStoreOptions extends AzureStoreOptions {
  /** Options of the capability probe (probe key ids, sleep between re-issues, signal). @default {} */
  probe?: ProbeOptions | undefined;
}

/**
 * Creates an Azure store and probes it before any protocol runs (docs/guarantees.md, conditional requests): a create-only put
 * on an existing blob, an if-match put and an if-match delete with a stale ETag must all be
 * refused. A store (or a proxy in between) that ignores them is `unsupported` (invariant 3).
 */
export async function openAzureStore(options: OpenAzureStoreOptions): Promise<ObjectStore> {
  const { probe, ...storeOptions } = options;
  const store = createAzureStore(storeOptions);
  await assertStoreSupported(store, probe);
  return store;
}
