import { CleanupJobShape } from "@holdfast/api-shapes";
import { realSleep, type Sleep } from "@holdfast/conditional-store";
import { afterEach, describe, expect, it } from "vitest";
import { as, freshStore, seedDataset, testServer } from "./support.js";

const POLL = { timeout: 60_000, interval: 200 };

// A cleanup job paces its batch deletes by the server's `maxDeletesPerSecond` (docs/protocol.md
// §6, Cleanup 9): the pause it takes goes through the protocol context's sleep, so the test
// sees the pacing as the pause asked for, not as time passed.
describe("cleanup jobs pace their deletes by the server's maxDeletesPerSecond", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const runJob = async (limit: number | undefined) => {
    const fresh = await freshStore("local");
    cleanups.push(fresh.dispose);
    await seedDataset(fresh.store, 4);
    const pauses: number[] = [];
    // Pauses are recorded; every pause but the pacing's (1 s or more here) still waits.
    const sleep: Sleep = (ms, signal) => {
      pauses.push(ms);
      return ms >= 1_000 ? Promise.resolve() : realSleep(ms, signal);
    };
    const app = await testServer([{ name: "ds", store: fresh.store }], {
      context: { sleep },
      ...(limit === undefined ? {} : { maxDeletesPerSecond: limit, deleteConcurrency: 1 }),
    });
    cleanups.push(() => app.close());
    const started = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/cleanup/jobs",
      headers: as("admin"),
      payload: { policy: { retainVersions: 1, minVersionAgeMs: 0 } },
    });
    expect(started.statusCode, started.body).toBe(202);
    const { id } = CleanupJobShape.parse(started.json().job);
    await expect
      .poll(async () => {
        const one = await app.inject({
          url: `/v1/datasets/ds/cleanup/jobs/${id}`,
          headers: as("reader"),
        });
        return CleanupJobShape.parse(one.json().job).state;
      }, POLL)
      .toBe("succeeded");
    return pauses;
  };

  it("1 object per second: the batches after the first wait their objects' share", async () => {
    // 3 retired versions: a batch of 3 data files and one of 3 manifests, in one record.
    const pauses = await runJob(1);
    expect(pauses.filter((ms) => ms >= 1_000).length).toBeGreaterThan(0);
  });

  it("no limit: no batch waits", async () => {
    const pauses = await runJob(undefined);
    expect(pauses.filter((ms) => ms >= 1_000)).toEqual([]);
  });
});
