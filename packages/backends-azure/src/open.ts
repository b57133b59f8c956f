import {
  holdfastError,
  type IdSource,
  isHoldfastError,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type ResolveOptions,
  ulidIds,
} from "@holdfast/conditional-store";
import { type AzureStoreOptions, createAzureStore } from "./azure.js";

export interface OpenAzureStoreOptions extends AzureStoreOptions {
  /** Re-issue policy and sleep for the probe's conditional puts. @default DEFAULT_REISSUE_POLICY, realSleep */
  probe?: Pick<ResolveOptions, "policy" | "sleep"> | undefined;
  /** Names the probe object. @default ulidIds() */
  ids?: IdSource | undefined;
}

/** Folder (under the store's prefix) where the capability probe writes its short-lived object. */
export const AZURE_PROBE_FOLDER = "_holdfast/probe";

/**
 * Creates an Azure store and probes it before any protocol runs (SPEC §2): a create-only put
 * on an existing blob and an if-match put with a stale ETag must both be refused. A store
 * (or proxy) that ignores either precondition is reported as `unsupported` (invariant 3).
 */
export async function openAzureStore(options: OpenAzureStoreOptions): Promise<ObjectStore> {
  const store = createAzureStore(options);
  await probeConditionalWrites(store, options.ids ?? ulidIds(), options.probe ?? {});
  return store;
}

// --- utils ---

async function probeConditionalWrites(
  store: ObjectStore,
  ids: IdSource,
  resolve: Pick<ResolveOptions, "policy" | "sleep">,
): Promise<void> {
  const key = `${AZURE_PROBE_FOLDER}/${ids.next()}`;
  const encode = (text: string) => new TextEncoder().encode(text);
  const unsupported = (what: string) =>
    holdfastError("unsupported", "probe", `${store.location} ignores ${what}`, {
      key,
      hint: "holdfast needs a store that honours If-None-Match: * and If-Match on writes; check proxies or emulators in between",
    });
  try {
    const first = await putIfAbsent(store, key, encode(`probe ${ids.next()}`), resolve);
    if (first.status !== "applied") {
      throw holdfastError("unresolved", "probe", `probe key ${key} unexpectedly exists`, { key });
    }
    // Different bytes: a read-back can never mistake this copy for the first one.
    const second = await putIfAbsent(store, key, encode(`probe ${ids.next()}`), resolve);
    if (second.status === "applied") throw unsupported("If-None-Match: * (create-only)");
    const stale = await putIfMatch(
      store,
      key,
      encode(`probe ${ids.next()}`),
      "0x0000000000000000",
      resolve,
    );
    if (stale.status === "applied") throw unsupported("If-Match (compare-and-swap)");
  } finally {
    await store.delete(key).catch((error: unknown) => {
      // Leaving one tiny probe object behind is harmless; never mask the probe's own answer.
      if (!isHoldfastError(error)) throw error;
    });
  }
}
