import { isHoldfastError } from "@holdfast/conditional-store";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { DEFAULT_ORPHAN_GRACE_MS, policyRetires, validatePolicy } from "../src/policy.js";
import { TaskPool } from "../src/pool.js";
import { seedDataset, versionsOf, world } from "./helpers.js";

describe("policy", () => {
  it("defaults the orphan grace to 7 days", () => {
    expect(validatePolicy({ retainVersions: 1 }).orphanGraceMs).toBe(DEFAULT_ORPHAN_GRACE_MS);
    expect(DEFAULT_ORPHAN_GRACE_MS).toBe(7 * 24 * 3600 * 1000);
  });

  it("olderThan is strict and whole-second: a manifest stamped in the same second is never older", () => {
    const now = new Date(Date.UTC(2026, 0, 1, 0, 0, 10, 900));
    const at = (ms: number) => ({ version: 1, lastModified: new Date(now.getTime() - ms) });
    expect(policyRetires({ olderThanMs: 0 }, at(500), now)).toBe(false);
    expect(policyRetires({ olderThanMs: 0 }, at(1_000), now)).toBe(true);
    expect(policyRetires({ olderThanMs: 5_000 }, at(5_000), now)).toBe(false);
    expect(policyRetires({ olderThanMs: 5_000 }, at(6_000), now)).toBe(true);
    expect(policyRetires({ beforeVersion: 1 }, at(0), now)).toBe(false);
  });

  it("retainVersions larger than the branch keeps everything", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const stats = await cleanup(ctx, { retainVersions: 10 }, { format: holdfastFormat });
    expect(stats.retired).toEqual([]);
    expect(versionsOf(store)).toEqual([1, 2, 3]);
    // The cleanup lock only: its Last-Modified is the run's storage time (no probe).
    expect(stats.requests.put).toBe(1);
  });

  it("rejects unknown shapes", () => {
    const error = (() => {
      try {
        validatePolicy(null as never);
      } catch (e) {
        return e;
      }
    })();
    expect(isHoldfastError(error, "invalid-input")).toBe(true);
  });
});

describe("TaskPool", () => {
  it("never runs more than its limit and reports the first failure", async () => {
    const pool = new TaskPool(2);
    let running = 0;
    let peak = 0;
    const task = (fail: boolean) => async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 2));
      running -= 1;
      if (fail) throw new Error("boom");
    };
    for (let i = 0; i < 6; i += 1) await pool.run(task(false));
    await pool.drain();
    expect(peak).toBe(2);
    await pool.run(task(true));
    await expect(pool.drain()).rejects.toThrow("boom");
  });
});
