import { describeObjectStoreContract } from "@holdfast/store-contract";
import { createAzureStore } from "../src/index.js";
import { azuriteTarget, ensureContainer, freshPrefix } from "./azurite.js";

const target = azuriteTarget();
// Top-level: a missing Azurite fails the file outright instead of skipping its tests.
await ensureContainer(target);

const expected = {
  atomicConditionalUpdate: true,
  atomicConditionalDelete: true,
  timestampPrecisionMs: 1000,
  maxBatchDelete: 256,
  etagIsContentHash: false,
} as const;

describeObjectStoreContract("azure (Azurite, repeating client)", {
  create: () =>
    createAzureStore({
      container: target.container,
      prefix: freshPrefix("contract-repeating"),
      connectionString: target.connectionString,
      client: "repeating",
      retry: { retryDelayInMs: 50, maxRetryDelayInMs: 200 },
    }),
  capabilities: { ...expected, requestMode: "repeating" },
});

describeObjectStoreContract("azure (Azurite, single-attempt client)", {
  create: () =>
    createAzureStore({
      container: target.container,
      prefix: freshPrefix("contract-single"),
      connectionString: target.connectionString,
      client: "single-attempt",
    }),
  capabilities: { ...expected, requestMode: "single-attempt" },
});
