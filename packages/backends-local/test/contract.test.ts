import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { describeObjectStoreContract } from "@holdfast/store-contract";
import { afterAll } from "vitest";

const base = mkdtempSync(join(tmpdir(), "holdfast-local-contract-"));
let n = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeObjectStoreContract("local", {
  create: () => {
    n += 1;
    return createLocalStore({ root: join(base, `store-${n}`) });
  },
  capabilities: {
    atomicConditionalUpdate: true,
    atomicConditionalDelete: true,
    requestMode: "completes-before-answer",
    etagIsContentHash: false,
    timestampPrecisionMs: 1,
    maxBatchDelete: 1000,
  },
});
