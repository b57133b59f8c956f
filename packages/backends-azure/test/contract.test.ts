import { BlobServiceClient } from "@azure/storage-blob";
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

let singlePrefix = "";
describeObjectStoreContract("azure (Azurite, single-attempt client)", {
  create: () => {
    singlePrefix = freshPrefix("contract-single");
    return createAzureStore({
      container: target.container,
      prefix: singlePrefix,
      connectionString: target.connectionString,
      client: "single-attempt",
    });
  },
  capabilities: { ...expected, requestMode: "single-attempt" },
  // A blob under an infinite lease cannot be deleted without the lease id: Azure answers
  // that blob's part of the batch with 412 LeaseIdMissing while the others are deleted.
  arrangeDeleteFailure: async (_store, key) => {
    const blob = BlobServiceClient.fromConnectionString(target.connectionString)
      .getContainerClient(target.container)
      .getBlobClient(`${singlePrefix}/${key}`);
    const lease = blob.getBlobLeaseClient();
    await lease.acquireLease(-1);
    return async () => {
      await lease.releaseLease();
    };
  },
});
