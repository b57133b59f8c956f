import { isHoldfastError, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import {
  commitVersion,
  initDataset,
  manifestKey,
  openDataset,
  readManifest,
} from "@holdfast/dataset";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

const DATASET_KEY = "_holdfast/dataset.json";

/** Two writers (distinct id sources) on one store that retries by itself (unscoped S3/Azure). */
function twoWriters(memory = new MemoryStore()) {
  const store = new FaultStore(memory, { requestMode: "repeating" });
  const writer = (seed: number): ProtocolContext =>
    createContext(store, { ids: seededIds(seed), sleep: recordingSleep() });
  return { memory, store, a: writer(1), b: writer(2) };
}

// Lost answers and equal bytes (docs/guarantees.md, C1 and C2) at the callers that use an exclusive create.
describe("exclusive creates under lost answers and equal bytes (dataset)", () => {
  it("C1 an init whose create applied but whose answer was lost succeeds", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory, { requestMode: "single-attempt" });
    store.on(
      { operation: "put", key: DATASET_KEY, precondition: "create" },
      {
        type: "apply-then-lose",
      },
    );
    const ctx = createContext(store, { ids: seededIds(3), sleep: recordingSleep() });
    const info = await initDataset(ctx);
    expect((await openDataset(ctx)).writerId).toBe(info.writerId);
    expect(store.requestCounts().put).toBe(2);
  });

  it("C2 a second initializer on a repeating client is refused, not told it won", async () => {
    const { a, b } = twoWriters();
    const first = await initDataset(a);
    // The repeating client's first conflict is read back by bytes; the claim names its
    // writer, so the second initializer's bytes differ and it is refused.
    const second = await initDataset(b).catch((e: unknown) => e);
    expect(isHoldfastError(second, "conflict")).toBe(true);
    expect((await openDataset(a)).writerId).toBe(first.writerId);
  });

  it("C2 a second initializer whose answer was lost is still refused", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory, { requestMode: "single-attempt" });
    const a = createContext(store, { ids: seededIds(1), sleep: recordingSleep() });
    const b = createContext(store, { ids: seededIds(2), sleep: recordingSleep() });
    const first = await initDataset(a);
    store.on(
      { operation: "put", key: DATASET_KEY, precondition: "create" },
      {
        type: "lose-before-apply",
      },
    );
    const second = await initDataset(b).catch((e: unknown) => e);
    expect(isHoldfastError(second, "conflict")).toBe(true);
    expect((await openDataset(a)).writerId).toBe(first.writerId);
  });

  it("C2 two commits with identical content racing for one version take distinct versions", async () => {
    const { store, a, b } = twoWriters();
    await initDataset(a);
    let y: Awaited<ReturnType<typeof commitVersion>> | undefined;
    // Writer b commits version 1 while writer a's create of version 1 is on its way.
    store.on(
      { operation: "put", key: manifestKey("main", 1), nth: 1 },
      {
        type: "before",
        run: async () => {
          y = await commitVersion(b, { branch: "main", files: [] });
        },
      },
    );
    const x = await commitVersion(a, { branch: "main", files: [] });
    expect(y?.version).toBe(1);
    // a's first conflict is read back (repeating client); the txnId says it is b's.
    expect(x.version).toBe(2);
    expect((await readManifest(a, "main", 1)).manifest.txnId).toBe(y?.txnId);
    expect((await readManifest(a, "main", 2)).manifest.txnId).toBe(x.txnId);
  });
});
