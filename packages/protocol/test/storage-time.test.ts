import { MemoryStore } from "@holdfast/conditional-store";
import { FakeTime } from "@holdfast/conditional-store/testing";
import {
  createContext,
  isActiveAt,
  leaseExpiresAt,
  PRECISION_FLOOR_MS,
  precisionIntervalMs,
  storageNow,
  truncSec,
} from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

const S = 1_000;
const T0 = Date.UTC(2026, 0, 1, 0, 0, 100); // a whole storage second

describe("storage-time arithmetic", () => {
  it("truncates to whole seconds", () => {
    expect(truncSec(T0 + 999)).toBe(T0);
    expect(truncSec(new Date(T0 + 1000))).toBe(T0 + 1000);
    expect(truncSec(T0)).toBe(T0);
  });

  it("adds the TTL plus at least one second of precision", () => {
    expect(leaseExpiresAt(T0, 60 * S, 1000).getTime()).toBe(T0 + 61 * S);
    expect(leaseExpiresAt(T0 + 500, 60 * S, 1).getTime()).toBe(T0 + 61 * S);
    expect(leaseExpiresAt(T0, 60 * S, 2000).getTime()).toBe(T0 + 62 * S);
    expect(PRECISION_FLOOR_MS).toBe(1000);
  });

  it("counts a precision that is not whole seconds conservatively", () => {
    expect(precisionIntervalMs(0)).toBe(1000);
    expect(precisionIntervalMs(1)).toBe(1000);
    expect(precisionIntervalMs(1000)).toBe(1000);
    expect(precisionIntervalMs(2000)).toBe(2000);
    expect(precisionIntervalMs(1500)).toBe(3000);
  });

  it("is active strictly before the boundary, expired exactly at it and after", () => {
    const ttl = 10 * S;
    const boundary = T0 + ttl + S; // truncSec(lm) + ttl + 1 s
    expect(isActiveAt(T0, ttl, 1000, boundary - S)).toBe(true);
    expect(isActiveAt(T0, ttl, 1000, boundary)).toBe(false);
    expect(isActiveAt(T0, ttl, 1000, boundary + 1)).toBe(false);
    // One ms before the boundary truncates to the second before it: still active.
    expect(isActiveAt(T0, ttl, 1000, boundary - 1)).toBe(true);
  });

  it("with a TTL that is not whole seconds, one ms either side of the boundary", () => {
    const ttl = 10_500;
    // expiresAt = T0 + 11.5 s; the reference is truncated to seconds.
    expect(isActiveAt(T0, ttl, 1000, T0 + 11_000 - 1)).toBe(true);
    expect(isActiveAt(T0, ttl, 1000, T0 + 11_000)).toBe(true);
    expect(isActiveAt(T0, ttl, 1000, T0 + 11_999)).toBe(true);
    expect(isActiveAt(T0, ttl, 1000, T0 + 12_000)).toBe(false);
  });

  it("L4 a sub-second TTL survives whole-second Last-Modified truncation", () => {
    // The seed's reproducer: acquired at 100.9 s real time with a 900 ms TTL; the
    // cleaner's marker is written at 101.001 s, when the TTL still runs in real time.
    const acquiredAt = T0 + 900;
    const ttl = 900;
    const cleanupAt = T0 + 1_001;
    expect(cleanupAt < acquiredAt + ttl).toBe(true);
    const leaseLastModified = truncSec(acquiredAt); // HTTP Last-Modified: 100 s
    const markerLastModified = truncSec(cleanupAt); // 101 s
    expect(isActiveAt(leaseLastModified, ttl, 1000, markerLastModified)).toBe(true);
    // And it does expire once the TTL has certainly passed in real time.
    expect(isActiveAt(leaseLastModified, ttl, 1000, T0 + 2_000)).toBe(false);
  });

  it("gives the same answer whether timestamps come from a ms listing or a whole-second HEAD", () => {
    // RGW: ListObjectsV2 reports ms, HEAD whole seconds, for one object.
    const leaseListed = T0 + 900;
    const leaseHeaded = T0;
    const refListed = T0 + 5_999;
    const refHeaded = T0 + 5_000;
    const ttl = 4_100;
    const answers = [
      isActiveAt(leaseListed, ttl, 1, refListed),
      isActiveAt(leaseHeaded, ttl, 1000, refListed),
      isActiveAt(leaseListed, ttl, 1000, refHeaded),
      isActiveAt(leaseHeaded, ttl, 1000, refHeaded),
    ];
    expect(new Set(answers)).toEqual(new Set([true]));
  });

  it("never calls a lease expired while its TTL runs in real time (exhaustive over ms offsets)", () => {
    for (const ttl of [1, 100, 999, 1_000, 1_001, 2_500]) {
      for (let writeOffset = 0; writeOffset < 1_000; writeOffset += 37) {
        const realWrite = T0 + writeOffset;
        for (let realRef = realWrite; realRef < realWrite + ttl; realRef += 53) {
          // Stores stamp at or before the real time, at whole-second precision.
          expect(isActiveAt(truncSec(realWrite), ttl, 1000, truncSec(realRef))).toBe(true);
        }
      }
    }
  });

  it("rejects a negative TTL and a bad timestamp", () => {
    expect(() => leaseExpiresAt(T0, -1, 1000)).toThrow();
    expect(() => truncSec(Number.NaN)).toThrow();
  });
});

describe("storageNow", () => {
  it("returns the store's Last-Modified for a probe and leaves nothing behind", async () => {
    const time = new FakeTime(T0 + 1_234);
    const store = new MemoryStore({ clock: time });
    const ctx = createContext(store, { clock: new FakeTime(0) });
    const now = await storageNow(ctx);
    expect(now.getTime()).toBe(T0 + 1_000);
    expect(store.keys()).toEqual([]);
  });
});
