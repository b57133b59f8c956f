import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { describeObjectStoreContract } from "@holdfast/store-contract";

const base = mkdtempSync(join(tmpdir(), "holdfast-local-contract-"));
let n = 0;

describeObjectStoreContract("local", {
  create: () => createLocalStore({ root: join(base, `store-${(n += 1)}`) }),
  capabilities: {
    atomicConditionalUpdate: true,
    atomicConditionalDelete: true,
    requestMode: "completes-before-answer",
    etagIsContentHash: false,
    timestampPrecisionMs: 1,
    maxBatchDelete: 1000,
  },
});
