import {
  holdfastError,
  type ObjectStore,
  type ProbeOptions,
  probeStore,
  type StoreProbeReport,
} from "@holdfast/conditional-store";
import { createGcsStore, type GcsStoreOptions } from "./gcs.js";

/** Options of {@link openGcsStore}: the store's options plus the probe's. */
export interface OpenGcsStoreOptions extends GcsStoreOptions {
  /** Options of the capability probe (probe key ids, sleep between re-issues, signal). @default {} */
  probe?: ProbeOptions | undefined;
}

/**
 * Probes the bucket, then creates a GCS store whose capabilities are what the store really
 * does (docs/guarantees.md, conditional requests): one that ignores `ifGenerationMatch` on
 * uploads is refused as `unsupported` before any protocol runs (invariant 3); conditional
 * delete is kept only if a stale `ifGenerationMatch` delete was refused (fake-gcs-server
 * ignores it), and a `conditionalDelete: true` the store does not honour is refused.
 */
export async function openGcsStore(options: OpenGcsStoreOptions): Promise<ObjectStore> {
  const { probe, ...storeOptions } = options;
  // Declare the most for the probe, so the store's own answers decide.
  const candidate = createGcsStore({
    ...storeOptions,
    conditionalDelete: storeOptions.conditionalDelete !== false,
  });
  const report = await probeStore(candidate, probe);
  refuseUnsupported(candidate, report, storeOptions.conditionalDelete);
  if (report.conditionalDelete !== "ignored") return candidate;
  return createGcsStore({ ...storeOptions, conditionalDelete: false });
}

// --- utils ---

function refuseUnsupported(
  store: ObjectStore,
  report: StoreProbeReport,
  conditionalDelete: boolean | undefined,
): void {
  const fail = (message: string, hint: string) =>
    holdfastError("unsupported", "probe", `${store.location}: ${message}`, { hint });
  if (report.createOnly === "ignored") {
    throw fail(
      "the store ignores ifGenerationMatch=0 (a create-only upload overwrote an existing object)",
      "holdfast needs atomic create-only uploads: use Google Cloud Storage, or an emulator that enforces upload preconditions (fake-gcs-server v1.56.1 or later)",
    );
  }
  if (report.conditionalUpdate === "ignored") {
    throw fail(
      "the store ignores ifGenerationMatch=<generation> on uploads",
      "holdfast needs compare-and-swap uploads: use Google Cloud Storage, or fake-gcs-server v1.56.1 or later",
    );
  }
  if (report.currentEtagUpdate === "refused") {
    throw fail(
      "the store refused an upload whose ifGenerationMatch carried the current generation",
      "check that nothing between holdfast and the store rewrites the query string",
    );
  }
  if (report.conditionalDelete === "ignored" && conditionalDelete === true) {
    throw fail(
      "the store ignores ifGenerationMatch on delete, but conditionalDelete: true was requested",
      "drop conditionalDelete (holdfast then never relies on conditional delete), or use Google Cloud Storage",
    );
  }
}
