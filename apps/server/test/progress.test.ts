import { CleanupJobShape } from "@holdfast/api-shapes";
import { FakeTime, FaultStore } from "@holdfast/conditional-store/testing";
import { afterEach, describe, expect, it } from "vitest";
import { as, freshStore, seedDataset, testServer } from "./support.js";

const POLL = { timeout: 60_000, interval: 100 };

/**
 * A job's progress (docs/operations.md, "Reading progress"): the job document and the
 * metrics show phase, done, total, left, rate and ETA while it runs, and its last progress
 * after it ends. The server's clock is a fake one, advanced inside the store hook, so rate
 * and ETA are exact.
 */
describe("cleanup job progress", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("P1 a job paused in its delete phase shows done, total, left, rate and ETA; /metrics shows objects left and deleted; the ended job keeps its last progress", async () => {
    const fresh = await freshStore("local");
    cleanups.push(fresh.dispose);
    // 4 versions of one data file each: retain 1 retires 3 manifests and 3 data files.
    await seedDataset(fresh.store, 4);
    const time = new FakeTime(Date.now());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let deletes = 0;
    let paused!: () => void;
    const atSecond = new Promise<void>((resolve) => {
      paused = resolve;
    });
    const gated = new FaultStore(fresh.store).on(
      { operation: "deleteMany", times: Number.POSITIVE_INFINITY },
      {
        type: "before",
        run: async () => {
          deletes += 1;
          // The first batch (the 3 data files) takes 3 s of the server's clock; the
          // second (the 3 manifests) waits for the test.
          if (deletes === 1) time.set(time.now() + 3_000);
          if (deletes === 2) {
            paused();
            await gate;
          }
        },
      },
    );
    const app = await testServer([{ name: "ds", store: gated }], { context: { clock: time } });
    cleanups.push(() => app.close());
    cleanups.push(async () => release());
    const started = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/cleanup/jobs",
      headers: as("admin"),
      payload: { policy: { retainVersions: 1, minVersionAgeMs: 0 } },
    });
    expect(started.statusCode, started.body).toBe(202);
    const { id } = CleanupJobShape.parse(started.json().job);
    const jobOf = async () =>
      CleanupJobShape.parse(
        (
          await app.inject({ url: `/v1/datasets/ds/cleanup/jobs/${id}`, headers: as("reader") })
        ).json().job,
      );
    // A job that ends before its second batch fails here with its document, not by timeout.
    const ended = (async () => {
      await expect.poll(async () => (await jobOf()).state, POLL).not.toBe("running");
      return jobOf();
    })();
    const first = await Promise.race([atSecond.then(() => null), ended]);
    expect(first).toBeNull();
    const running = await jobOf();
    expect(running.state).toBe("running");
    // 3 of 6 objects in 3 s: 1/s, 3 left, 3 s to go.
    expect(running.progress).toEqual({
      phase: "delete",
      done: 3,
      total: 6,
      left: 3,
      ratePerSec: 1,
      etaMs: 3_000,
      elapsedMs: 3_000,
    });
    const metrics = (await app.inject({ url: "/metrics", headers: as("reader") })).body;
    expect(metrics).toContain(`holdfast_cleanup_job_objects_left{dataset="ds",job="${id}"} 3`);
    expect(metrics).toContain(
      `holdfast_cleanup_job_objects_deleted_total{dataset="ds",job="${id}",phase="delete"} 3`,
    );
    expect(metrics).toContain(
      `holdfast_cleanup_job_eta_seconds{dataset="ds",job="${id}",phase="delete"} 3`,
    );

    release();
    const done = await ended;
    expect(done.state).toBe("succeeded");
    expect(done.stats?.objectsDeleted.manifests).toBe(3);
    expect(done.stats?.objectsDeleted.dataFiles).toBe(3);
    // The last event: the sweep, whose total is known at its end.
    expect(done.progress).toMatchObject({ phase: "orphans", left: 0, etaMs: 0 });
    const after = (await app.inject({ url: "/metrics", headers: as("reader") })).body;
    // The per-job series end with the job; the per-dataset counter keeps the totals.
    expect(after).not.toContain(`job="${id}"`);
    expect(after).toMatch(/holdfast_objects_deleted_total\{dataset="ds",kind="manifests"\} 3/);
  });
});
