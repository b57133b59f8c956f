// The repeated-request part of the contract on Ceph RGW: each chosen write reaches RGW twice
// through @holdfast/fault-proxy (`repeat`), as when an intermediary retries a request whose
// answer it lost (docs/guarantees.md, "Conditional requests"). SigV4 signatures stay valid:
// the second copy is the same request.
import { listAll } from "@holdfast/conditional-store";
import { repeatWrites, startFaultProxy } from "@holdfast/fault-proxy";
import { describeRepeatedRequestContract } from "@holdfast/store-contract";
import { openS3Store } from "../src/index.js";
import { rgwEnv, rgwOptions } from "./rgw-env.js";

for (const client of ["repeating", "single-attempt"] as const) {
  describeRepeatedRequestContract(`s3 on Ceph RGW, ${client} client`, {
    create: async () => {
      const proxy = await startFaultProxy({ target: rgwEnv().endpoint });
      const store = await openS3Store(rgwOptions({ client, endpoint: proxy.url }));
      return {
        store,
        repeat: (kinds) => {
          for (const kind of kinds) proxy.addRule(repeatWrites("s3", kind));
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
