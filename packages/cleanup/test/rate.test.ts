import { isHoldfastError, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { seedDataset } from "./helpers.js";

/** 30 versions x 2 files on a store taking 10 keys per batch delete; sleeps recorded. */
async function smallBatches() {
  const time = new FakeTime(Date.UTC(2026, 5, 1));
  const store = new MemoryStore({ clock: time, maxBatchDelete: 10 });
  const sleep = recordingSleep();
  const ctx = { store, clock: time, ids: seededIds(7), sleep };
  await seedDataset(ctx, time, { versions: 30 });
  sleep.pauses.length = 0;
  return { ctx, sleep };
}

describe("delete rate (CleanupOptions.maxDeletesPerSecond)", () => {
  it("paces every batch delete of the run: each waits for the objects reserved before it", async () => {
    const { ctx, sleep } = await smallBatches();
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      { format: holdfastFormat, maxDeletesPerSecond: 20, deleteConcurrency: 2 },
    );
    // 29 retired versions: 58 data files then 29 manifests, 10 keys per batch.
    expect(stats.objectsDeleted).toMatchObject({ dataFiles: 58, manifests: 29 });
    expect(stats.requests.deleteMany).toBe(6 + 3);
    // The clock does not move here, so each batch waits for every object reserved before
    // it at 20 per second (50 ms each): the first goes at once, the last (9 manifests)
    // after the other 78 objects.
    expect(sleep.pauses).toHaveLength(8);
    expect(Math.max(...sleep.pauses)).toBe(78 * 50);
    expect([...sleep.pauses].sort((a, b) => a - b)).toEqual(sleep.pauses);
  });

  it("without a limit no batch waits", async () => {
    const { ctx, sleep } = await smallBatches();
    const stats = await cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.objectsDeleted.total).toBe(87);
    expect(sleep.pauses).toEqual([]);
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY, "10"])(
    "maxDeletesPerSecond %s is refused before any request",
    async (rate) => {
      const { ctx } = await smallBatches();
      const error = await cleanup(
        ctx,
        { retainVersions: 1 },
        { format: holdfastFormat, maxDeletesPerSecond: rate as number },
      ).catch((e: unknown) => e);
      expect(isHoldfastError(error, "invalid-input")).toBe(true);
      expect(error).toMatchObject({ code: "INVALID_OPTION" });
    },
  );
});
