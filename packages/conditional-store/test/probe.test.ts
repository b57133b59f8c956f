import {
  assertStoreSupported,
  CountingStore,
  holdfastError,
  MemoryStore,
  type ObjectMeta,
  PROBE_PREFIX,
  probeStore,
  seededIds,
} from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import { rejection } from "./helpers.js";

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/** Reports head/get times in whole seconds while listings keep ms, as Ceph RGW does. */
class SecondsInHead extends CountingStore {
  override async head(key: string): Promise<ObjectMeta | null> {
    const meta = await this.inner.head(key);
    if (!meta) return meta;
    const t = meta.lastModified.getTime();
    return { ...meta, lastModified: new Date(t - (t % 1000)) };
  }
}

describe("probeStore", () => {
  it("reports an honest store as honouring every precondition and removes its probe", async () => {
    const time = new FakeTime(T0);
    const store = new MemoryStore({ clock: time });
    const report = await probeStore(store, { ids: seededIds(1), clock: time });
    expect(report).toMatchObject({
      backend: "memory",
      createOnly: "honoured",
      conditionalUpdate: "honoured",
      currentEtagUpdate: "applied",
      conditionalDelete: "honoured",
      cleanedUp: true,
      clockSkewMs: 0,
      warnings: [],
    });
    expect(report.key.startsWith(`${PROBE_PREFIX}/`)).toBe(true);
    expect(report.timestamps).toMatchObject({
      headPrecisionMs: 1000,
      listPrecisionMs: 1000,
      declaredPrecisionMs: 1000,
    });
    expect(store.size).toBe(0);
  });

  it("measures Last-Modified against the local clock (skew is informational)", async () => {
    const storeTime = new FakeTime(T0 + 5000);
    const localTime = new FakeTime(T0);
    const store = new MemoryStore({ clock: storeTime });
    const report = await probeStore(store, { ids: seededIds(2), clock: localTime });
    expect(report.clockSkewMs).toBe(5000);
    expect(report.warnings).toEqual([]);
  });

  it("notices head and list precision differ and a declaration finer than observed", async () => {
    const time = new FakeTime(T0 + 123);
    const store = new SecondsInHead(new MemoryStore({ clock: time, timestampPrecisionMs: 1 }));
    const report = await probeStore(store, { ids: seededIds(3), clock: time });
    expect(report.timestamps).toMatchObject({ headPrecisionMs: 1000, listPrecisionMs: 1 });
    expect(report.timestamps.listLastModified?.getTime()).toBe(T0 + 123);
    expect(report.warnings).toHaveLength(2);
  });

  it("does not check conditional delete on a store that does not declare it", async () => {
    const store = new MemoryStore({ conditionalDelete: false });
    const report = await assertStoreSupported(store, { ids: seededIds(4) });
    expect(report.conditionalDelete).toBe("not-declared");
    expect(store.size).toBe(0);
  });

  it("removes its probe object when a step fails", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory, {
      rules: [{ operation: "head", fault: { type: "refuse" } }],
    });
    const error = await rejection(probeStore(store, { ids: seededIds(12) }));
    expect(error.kind).toBe("refused");
    expect(memory.size).toBe(0);
    expect(store.requestCounts().delete).toBe(1);
  });

  it("a lost answer on the probe's own delete is a warning in the report, not the caller's failure", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory, {
      rules: [
        {
          operation: "delete",
          precondition: "none",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "lose-before-apply" },
        },
      ],
    });
    const report = await probeStore(store, { ids: seededIds(13) });
    expect(report).toMatchObject({ createOnly: "honoured", cleanedUp: false });
    expect(report.warnings).toEqual([expect.stringMatching(/may be left behind/)]);
    // Tried once by the probe; not again by its clean-up path.
    expect(store.requestCounts().delete).toBe(2);
  });

  it("a probe whose every write reaches the store twice finds the store supported and removes its object", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory, {
      rules: [{ operation: "put", times: Number.POSITIVE_INFINITY, fault: { type: "repeat" } }],
    });
    const report = await probeStore(store, { ids: seededIds(14) });
    expect(report).toMatchObject({
      createOnly: "honoured",
      conditionalUpdate: "honoured",
      currentEtagUpdate: "applied",
      cleanedUp: true,
    });
    expect(memory.size).toBe(0);
  });

  it("works through lost answers and a repeating client", async () => {
    const memory = new MemoryStore();
    const store = new FaultStore(memory, {
      requestMode: "repeating",
      rules: [{ operation: "put", precondition: "create", fault: { type: "apply-then-lose" } }],
    });
    const report = await probeStore(store, { ids: seededIds(5), sleep: recordingSleep() });
    expect(report.createOnly).toBe("honoured");
    expect(report.conditionalUpdate).toBe("honoured");
    expect(memory.size).toBe(0);
  });
});

describe("assertStoreSupported", () => {
  it("refuses a store that ignores If-None-Match before any protocol runs", async () => {
    const memory = new MemoryStore();
    const garage = new FaultStore(memory, {
      rules: [
        {
          operation: "put",
          precondition: "create",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "strip-precondition" },
        },
      ],
    });
    const report = await probeStore(garage, { ids: seededIds(6) });
    expect(report.createOnly).toBe("ignored");

    const error = await rejection(assertStoreSupported(garage, { ids: seededIds(7) }));
    expect(error).toMatchObject({ kind: "unsupported", operation: "probe" });
    expect(error.hint).toMatch(/If-None-Match/);
    expect(memory.size).toBe(0);
  });

  it("refuses a store that ignores If-Match on put while its backend declares it atomic", async () => {
    const store = new FaultStore(new MemoryStore(), {
      rules: [
        {
          operation: "put",
          precondition: "if-match",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "strip-precondition" },
        },
      ],
    });
    const error = await rejection(assertStoreSupported(store, { ids: seededIds(8) }));
    expect(error.kind).toBe("unsupported");
    expect(error.message).toMatch(/If-Match on put/);
  });

  it("refuses a store that refuses If-Match even with the current ETag", async () => {
    const refuseAll = holdfastError("conflict", "put", "412 (ETag compared quoted)", {
      status: 412,
    });
    const store = new FaultStore(new MemoryStore(), {
      rules: [
        {
          operation: "put",
          precondition: "if-match",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "throw", error: refuseAll },
        },
      ],
    });
    const report = await probeStore(store, { ids: seededIds(13) });
    expect(report).toMatchObject({ conditionalUpdate: "honoured", currentEtagUpdate: "refused" });
    const error = await rejection(assertStoreSupported(store, { ids: seededIds(14) }));
    expect(error.kind).toBe("unsupported");
    expect(error.message).toMatch(/current ETag/);
  });

  it("accepts a store without atomic if-match when it says so", async () => {
    const store = new FaultStore(new MemoryStore(), {
      capabilities: { atomicConditionalUpdate: false },
      rules: [
        {
          operation: "put",
          precondition: "if-match",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "strip-precondition" },
        },
      ],
    });
    const report = await assertStoreSupported(store, { ids: seededIds(9) });
    expect(report.conditionalUpdate).toBe("ignored");
  });

  it("refuses a store that ignores If-Match on delete while declaring it (as RGW would)", async () => {
    const store = new FaultStore(new MemoryStore(), {
      rules: [
        {
          operation: "delete",
          precondition: "if-match",
          times: Number.POSITIVE_INFINITY,
          fault: { type: "strip-precondition" },
        },
      ],
    });
    const error = await rejection(assertStoreSupported(store, { ids: seededIds(10) }));
    expect(error.kind).toBe("unsupported");
    expect(error.hint).toMatch(/atomicConditionalDelete: false/);
  });

  it("accepts an honest store and returns the report", async () => {
    const report = await assertStoreSupported(new MemoryStore(), { ids: seededIds(11) });
    expect(report.createOnly).toBe("honoured");
  });
});
