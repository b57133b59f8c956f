// The repeated-request part of the contract on Azurite: each chosen write reaches Azurite
// twice through @holdfast/fault-proxy (`repeat`), as when an intermediary retries a request
// whose answer it lost (docs/guarantees.md, "Conditional requests").
import { listAll } from "@holdfast/conditional-store";
import { repeatWrites, startFaultProxy } from "@holdfast/fault-proxy";
import { describeRepeatedRequestContract } from "@holdfast/store-contract";
import { createAzureStore } from "../src/index.js";
import { azuriteTarget, ensureContainer, freshPrefix, withOrigin } from "./azurite.js";

const target = azuriteTarget();
// Top-level: a missing Azurite fails the file outright instead of skipping its tests.
await ensureContainer(target);

for (const client of ["repeating", "single-attempt"] as const) {
  describeRepeatedRequestContract(`azure on Azurite, ${client} client`, {
    create: async () => {
      const proxy = await startFaultProxy({ target: target.origin });
      const store = createAzureStore({
        container: target.container,
        prefix: freshPrefix(`repeated-${client}`),
        connectionString: withOrigin(target.connectionString, proxy.url),
        client,
        retry: { retryDelayInMs: 50, maxRetryDelayInMs: 200 },
      });
      return {
        store,
        repeat: (kinds) => {
          for (const kind of kinds) proxy.addRule(repeatWrites("azure", kind));
        },
        stop: () => proxy.clearRules(),
        repeated: () => proxy.requests.filter((r) => r.action === "repeat").length,
        close: async () => {
          proxy.clearRules();
          const keys: string[] = [];
          for await (const meta of listAll(store, "")) keys.push(meta.key);
          if (keys.length > 0) await store.deleteMany(keys);
          await proxy.close();
        },
      };
    },
  });
}
