import { describeObjectStoreContract } from "@holdfast/store-contract";
import { createGcsStore, openGcsStore } from "../src/index.js";
import { ensureBucket, freshPrefix, gcsEmulator } from "./emulator.js";

const emulator = gcsEmulator();
// Top-level: a missing emulator fails the file outright instead of skipping its tests.
await ensureBucket(emulator);

/**
 * fake-gcs-server v1.56.1 as the probe finds it: ifGenerationMatch enforced on uploads
 * (create-only and compare-and-swap), ignored on delete, so conditional delete is declared
 * off there. Google Cloud Storage honours it on objects.delete too (docs/backends.md, GCS).
 */
const emulatorCapabilities = {
  atomicConditionalUpdate: true,
  atomicConditionalDelete: false,
  timestampPrecisionMs: 1000,
  maxBatchDelete: 100,
  etagIsContentHash: false,
} as const;

describeObjectStoreContract("gcs on fake-gcs-server, single-attempt client (probed)", {
  create: () =>
    openGcsStore({
      bucket: emulator.bucket,
      prefix: freshPrefix("cs"),
      endpoint: emulator.endpoint,
    }),
  capabilities: { ...emulatorCapabilities, requestMode: "single-attempt" },
});

describeObjectStoreContract("gcs on fake-gcs-server, repeating client (client retries)", {
  create: () =>
    createGcsStore({
      bucket: emulator.bucket,
      prefix: freshPrefix("cr"),
      endpoint: emulator.endpoint,
      client: "repeating",
      conditionalDelete: false,
      retry: { maxRetries: 2, retryDelayMultiplier: 1, maxRetryDelay: 1 },
    }),
  capabilities: { ...emulatorCapabilities, requestMode: "repeating" },
});
