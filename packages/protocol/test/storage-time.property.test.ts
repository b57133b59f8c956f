import { isActiveAt, leaseExpiresAt, precisionIntervalMs, truncSec } from "@holdfast/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";

/** A store stamps a write at or before its real time, floored to its precision. */
const stamp = (real: number, precision: number) => Math.floor(real / precision) * precision;

const precision = fc.constantFrom(1, 10, 1000, 2000, 1500);
const ttl = fc.integer({ min: 100, max: 24 * 60 * 60 * 1000 });
const realTime = fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 });

describe("storage-time arithmetic, properties", () => {
  it("never calls a lease expired while its TTL still runs in real time (invariant 1)", () => {
    fc.assert(
      fc.property(
        realTime,
        ttl,
        precision,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (w, t, p, f) => {
          const r = w + Math.floor(f * (t - 1)); // any reference write with r < w + t
          expect(isActiveAt(stamp(w, p), t, p, stamp(r, p))).toBe(true);
          // The cleaner's listing may report a finer stamp than the lease's HEAD (RGW): still active.
          expect(isActiveAt(stamp(w, p), t, p, r)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("expires within a bounded time after the TTL (no lease protects forever)", () => {
    fc.assert(
      fc.property(realTime, ttl, precision, (w, t, p) => {
        // The reference stamp itself can lag its real time by up to one precision interval.
        const bound = w + t + 2 * precisionIntervalMs(p);
        expect(isActiveAt(stamp(w, p), t, p, stamp(bound, p))).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it("is monotone: once expired at a reference time, expired at every later one", () => {
    fc.assert(
      fc.property(realTime, ttl, precision, fc.nat(100_000), fc.nat(100_000), (lm, t, p, a, b) => {
        const early = lm + Math.min(a, b);
        const late = lm + Math.max(a, b);
        if (!isActiveAt(lm, t, p, early)) expect(isActiveAt(lm, t, p, late)).toBe(false);
      }),
    );
  });

  it("expiry depends on the lease stamp only through its whole second", () => {
    fc.assert(
      fc.property(realTime, ttl, precision, (lm, t, p) => {
        expect(leaseExpiresAt(lm, t, p).getTime()).toBe(
          leaseExpiresAt(truncSec(lm), t, p).getTime(),
        );
      }),
    );
  });
});
