import type { IdSource, ObjectStore } from "@holdfast/conditional-store";
import { encodeJson, isHoldfastError, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { type RetirementRecord, readAdmission, retirementKey } from "../src/index.js";

function ctxOf(store: ObjectStore, ids: IdSource): ProtocolContext {
  return createContext(store, { ids });
}

function setup() {
  let now = 1_800_000_000_000;
  const clock = { now: () => now };
  const store = new MemoryStore({ clock });
  const ids = seededIds(7);
  return { store, ids, advance: (ms: number) => (now += ms) };
}

function record(fields: Partial<RetirementRecord> = {}): RetirementRecord {
  return {
    schema: 1,
    opId: "01OP",
    writerId: "01W",
    owner: "01OWNER",
    branch: "main",
    state: "draining",
    ownershipBoundMs: 60_000,
    versions: [
      { version: 3, manifestEtag: "e3", cancelled: false },
      { version: 5, manifestEtag: "e5", cancelled: true, reason: "lease" },
    ],
    ...fields,
  };
}

describe("readAdmission", () => {
  it("is open without records, in one request", async () => {
    const { store, ids } = setup();
    let calls = 0;
    const counted = new Proxy(store, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        return typeof value === "function"
          ? (...args: unknown[]) => {
              calls += 1;
              return value.apply(target, args);
            }
          : value;
      },
    });
    expect(await readAdmission(ctxOf(counted, ids), "main", 3)).toEqual({ state: "open" });
    expect(calls).toBe(1);
  });

  it("reports draining, sealed and committed for covered, uncancelled versions", async () => {
    const { store, ids } = setup();
    const key = retirementKey("main", 3, 5, "01OP");
    await store.put(key, encodeJson(record()));
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("draining");
    // cancelled entry, uncovered version, not-named version inside the range
    expect((await readAdmission(ctxOf(store, ids), "main", 5)).state).toBe("open");
    expect((await readAdmission(ctxOf(store, ids), "main", 4)).state).toBe("open");
    expect((await readAdmission(ctxOf(store, ids), "main", 6)).state).toBe("open");
    expect((await readAdmission(ctxOf(store, ids), "other", 3)).state).toBe("open");
    const sealed = await store.put(key, encodeJson(record({ state: "sealed" })));
    expect(await readAdmission(ctxOf(store, ids), "main", 3)).toEqual({
      state: "sealed",
      record: { key, etag: sealed.etag },
    });
    await store.put(key, encodeJson(record({ state: "committed" })));
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("committed");
    await store.put(key, encodeJson(record({ state: "cancelled" })));
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("open");
  });

  it("L1 reopened: open only because a committed or cancelled record names the version cancelled (docs/protocol.md §5.4)", async () => {
    const { store, ids } = setup();
    const ctx = ctxOf(store, ids);
    const key = retirementKey("main", 3, 5, "01OP");
    // Version 5 is cancelled in the record: reopened once the record is committed or cancelled.
    for (const state of ["draining", "sealed"] as const) {
      await store.put(key, encodeJson(record({ state })));
      expect(await readAdmission(ctx, "main", 5)).toEqual({ state: "open" });
    }
    for (const state of ["committed", "cancelled"] as const) {
      await store.put(key, encodeJson(record({ state })));
      expect(await readAdmission(ctx, "main", 5)).toEqual({ state: "open", reopened: true });
    }
    // Version 3 of a cancelled record (cancelled with it), but not version 4 (not named).
    expect(await readAdmission(ctx, "main", 3)).toEqual({ state: "open", reopened: true });
    expect(await readAdmission(ctx, "main", 4)).toEqual({ state: "open" });
    // A refusing record wins: no reopened beside a non-open state.
    await store.put(key, encodeJson(record({ state: "committed" })));
    await store.put(
      retirementKey("main", 5, 5, "01OQ"),
      encodeJson(
        record({
          opId: "01OQ",
          state: "sealed",
          versions: [{ version: 5, manifestEtag: "e5", cancelled: false }],
        }),
      ),
    );
    const refused = await readAdmission(ctx, "main", 5);
    expect(refused.state).toBe("sealed");
    expect(refused.reopened).toBeUndefined();
  });

  it("L5 a drain past its ownership bound in storage time counts as open", async () => {
    const { store, ids, advance } = setup();
    await store.put(retirementKey("main", 3, 5, "01OP"), encodeJson(record()));
    advance(60_000);
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("draining");
    advance(999);
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("draining");
    advance(1);
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("open");
    // the probe leaves nothing behind
    expect(store.keys().filter((k) => k.startsWith("_holdfast/clock/"))).toEqual([]);
  });

  it("takes the most severe of several covering records", async () => {
    const { store, ids } = setup();
    await store.put(retirementKey("main", 1, 3, "01A"), encodeJson(record({ opId: "01A" })));
    await store.put(
      retirementKey("main", 3, 9, "01B"),
      encodeJson(record({ opId: "01B", state: "sealed" })),
    );
    expect((await readAdmission(ctxOf(store, ids), "main", 3)).state).toBe("sealed");
  });

  it("fails closed on an unreadable record", async () => {
    const { store, ids } = setup();
    await store.put(retirementKey("main", 1, 3, "01A"), encodeJson({ schema: 2 }));
    const error = await readAdmission(ctxOf(store, ids), "main", 2).catch((e: unknown) => e);
    expect(isHoldfastError(error, "unsupported")).toBe(true);
  });
});
