import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { describeObjectStoreContract } from "@holdfast/store-contract";
import { afterAll } from "vitest";

const base = mkdtempSync(join(tmpdir(), "holdfast-local-contract-"));
let n = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

const capabilities = {
  atomicConditionalUpdate: true,
  atomicConditionalDelete: true,
  requestMode: "completes-before-answer",
  etagIsContentHash: false,
  timestampPrecisionMs: 1,
  maxBatchDelete: 1000,
} as const;

describeObjectStoreContract("local", {
  create: () => {
    n += 1;
    return createLocalStore({ root: join(base, `store-${n}`) });
  },
  capabilities,
});

// The same contract when every folder is read in windows of 2 entries (docs/protocol.md §1,
// "On a local file system"): every page and nested folder crosses window boundaries.
describeObjectStoreContract("local, listing windows of 2 entries", {
  create: () => {
    n += 1;
    return createLocalStore({ root: join(base, `store-${n}`), listWindow: 2 });
  },
  capabilities,
});
