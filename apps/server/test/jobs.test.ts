import { CleanupJobShape, ProblemShape } from "@holdfast/api-shapes";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { CLEANUP_LOCK_KEY } from "@holdfast/retirement";
import { afterEach, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { JOBS_PREFIX } from "../src/job-history.js";
import { as, BACKENDS, freshStore, seedDataset, testServer } from "./support.js";

/** Jobs finish within seconds, more on a loaded machine. */
const POLL = { timeout: 60_000, interval: 200 };

/**
 * Cleanup jobs across replicas: a job is declared lost only by a run that held the dataset's
 * cleanup lock, and a policy the run would refuse is refused before the job exists.
 */
for (const backend of BACKENDS) {
  describe(`cleanup jobs across replicas (${backend})`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });

    /**
     * Replica A runs a cleanup job that stays running (its first batch delete waits for
     * `release`), so the test can act through replica B meanwhile.
     */
    const runningOnA = async () => {
      const fresh = await freshStore(backend);
      cleanups.push(fresh.dispose);
      await seedDataset(fresh.store, 4);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reachedDelete!: () => void;
      const atDelete = new Promise<void>((resolve) => {
        reachedDelete = resolve;
      });
      const gated = new FaultStore(fresh.store).on(
        { operation: "deleteMany" },
        {
          type: "before",
          run: async () => {
            reachedDelete();
            await gate;
          },
        },
      );
      const a = await serve(gated, "a");
      // Before A closes (cleanups run in reverse): a failed test must not leave A's run waiting.
      cleanups.push(async () => release());
      const started = await a.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/jobs",
        headers: as("admin"),
        payload: { policy: { retainVersions: 1, minVersionAgeMs: 0 } },
      });
      expect(started.statusCode, started.body).toBe(202);
      const job = CleanupJobShape.parse(started.json().job);
      await atDelete;
      return { store: fresh.store, a, job, release };
    };

    const serve = async (store: ObjectStore, replicaId: string) => {
      const app = await testServer([{ name: "ds", store }], { replicaId });
      cleanups.push(() => app.close());
      return app;
    };

    const jobOf = async (app: ZodApp, id: string) =>
      CleanupJobShape.parse(
        (
          await app.inject({ url: `/v1/datasets/ds/cleanup/jobs/${id}`, headers: as("reader") })
        ).json().job,
      );

    it("J1 a run through replica B that never held the lock (its read of the lock refused) does not mark A's running job lost", async () => {
      const { store, a, job, release } = await runningOnA();
      // B's store refuses its read of the lock A holds: its run fails without taking it.
      const refusing = new FaultStore(store).on(
        { operation: "get", key: CLEANUP_LOCK_KEY, times: Number.POSITIVE_INFINITY },
        { type: "refuse", kind: "refused" },
      );
      const b = await serve(refusing, "b");
      const other = await b.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/jobs",
        headers: as("admin"),
        payload: { policy: { retainVersions: 1, minVersionAgeMs: 0 } },
      });
      expect(other.statusCode, other.body).toBe(202);
      const failed = CleanupJobShape.parse(other.json().job);
      await expect.poll(async () => (await jobOf(b, failed.id)).state, POLL).toBe("failed");
      expect(await jobOf(b, job.id)).toMatchObject({ state: "running", error: null });
      expect(await store.head(`${JOBS_PREFIX}${job.id}.lost.json`)).toBeNull();
      release();
      await expect.poll(async () => (await jobOf(a, job.id)).state, POLL).toBe("succeeded");
      // B reads the end record, which A writes just after its live job says so.
      await expect.poll(async () => (await jobOf(b, job.id)).state, POLL).toBe("succeeded");
    });

    it("J2 a policy the run refuses is a 400 before any job exists, as the plan route answers; A's job stays running", async () => {
      const { store, a, job, release } = await runningOnA();
      const b = await serve(store, "b");
      // Below the orphan-grace floor without noWriterActive: the zod shape passes it, the run refuses it.
      const policy = { retainVersions: 1, orphanGraceMs: 1000 };
      const before = await allKeys(store);
      const refused = await b.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/jobs",
        headers: as("admin"),
        payload: { policy },
      });
      expect(refused.statusCode, refused.body).toBe(400);
      expect(refused.headers["content-type"]).toMatch(/^application\/problem\+json/);
      expect(ProblemShape.parse(refused.json())).toMatchObject({
        kind: "invalid-input",
        code: "ORPHAN_GRACE_BELOW_FLOOR",
      });
      const planned = await b.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/plan",
        headers: as("admin"),
        payload: { policy },
      });
      expect(planned.statusCode).toBe(400);
      expect(ProblemShape.parse(planned.json()).code).toBe("ORPHAN_GRACE_BELOW_FLOOR");
      // Nothing written: no job record, no lost record, no lock change.
      expect(await allKeys(store)).toEqual(before);
      expect((await jobOf(b, job.id)).state).toBe("running");
      release();
      await expect.poll(async () => (await jobOf(a, job.id)).state, POLL).toBe("succeeded");
    });
  });
}

describe("scheduled policies", () => {
  it("J3 a schedule whose cleanup policy the run would refuse fails the server's start (invalid-input)", async () => {
    const fresh = await freshStore("local");
    try {
      await expect(
        testServer([{ name: "ds", store: fresh.store }], {
          schedules: [
            {
              dataset: "ds",
              cleanup: {
                when: { everyMs: 60_000 },
                policy: { retainVersions: 1, orphanGraceMs: 1000 },
              },
            },
          ],
        }),
      ).rejects.toMatchObject({ kind: "invalid-input", code: "ORPHAN_GRACE_BELOW_FLOOR" });
      await expect(
        testServer([{ name: "ds", store: fresh.store }], {
          schedules: [{ dataset: "other", recover: { when: { everyMs: 60_000 } } }],
        }),
      ).rejects.toMatchObject({ kind: "invalid-input" });
    } finally {
      await fresh.dispose();
    }
  });
});

// --- utils ---

/** Every key but storage-time probes. */
async function allKeys(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const meta of listAll(store, ""))
    if (!meta.key.startsWith("_holdfast/clock/")) keys.push(meta.key);
  return keys.sort();
}
