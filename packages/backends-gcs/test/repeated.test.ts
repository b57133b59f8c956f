// The repeated-request part of the contract on fake-gcs-server: each chosen write reaches the
// emulator twice through @holdfast/fault-proxy (`repeat`), as when an intermediary retries an
// upload whose answer it lost (docs/guarantees.md, "Conditional requests").
import { listAll } from "@holdfast/conditional-store";
import { repeatWrites, startFaultProxy } from "@holdfast/fault-proxy";
import { describeRepeatedRequestContract } from "@holdfast/store-contract";
import { createGcsStore } from "../src/index.js";
import { ensureBucket, freshPrefix, gcsEmulator } from "./emulator.js";

const emulator = gcsEmulator();
// Top-level: a missing emulator fails the file outright instead of skipping its tests.
await ensureBucket(emulator);

for (const client of ["single-attempt", "repeating"] as const) {
  describeRepeatedRequestContract(`gcs on fake-gcs-server, ${client} client`, {
    create: async () => {
      const proxy = await startFaultProxy({ target: emulator.endpoint });
      const prefix = freshPrefix(`rr${client === "repeating" ? "r" : "s"}`);
      const store = createGcsStore({
        bucket: emulator.bucket,
        prefix,
        endpoint: proxy.url,
        client,
        // fake-gcs-server ignores ifGenerationMatch on delete (see contract.test.ts).
        conditionalDelete: false,
        retry: { maxRetries: 2, retryDelayMultiplier: 1, maxRetryDelay: 1 },
      });
      return {
        store,
        repeat: (kinds) => {
          for (const kind of kinds) proxy.addRule(repeatWrites("gcs", kind));
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
