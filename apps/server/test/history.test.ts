import { CleanupJobShape, CleanupJobsShape, JsonShapes } from "@holdfast/api-shapes";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { afterEach, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { JOBS_PREFIX, PLANS_PREFIX } from "../src/job-history.js";
import { as, BACKENDS, freshStore, seedDataset, testServer } from "./support.js";

// Job history and the last plan live on the store: every replica sees them, restarts keep them.
for (const backend of BACKENDS) {
  describe(`job history on the store (${backend})`, () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c();
    });
    const serve = async (store: ObjectStore, replicaId: string, historySize?: number) => {
      const app = await testServer([{ name: "ds", store }], { replicaId, historySize });
      cleanups.push(() => app.close());
      return app;
    };
    const jobsOf = async (app: ZodApp) =>
      CleanupJobsShape.parse(
        (await app.inject({ url: "/v1/datasets/ds/cleanup/jobs", headers: as("reader") })).json(),
      ).jobs;

    it("H1 a job and a plan made through replica A are seen by replica B and after both restart", async () => {
      const fresh = await freshStore(backend);
      cleanups.push(fresh.dispose);
      await seedDataset(fresh.store, 4);
      const a = await serve(fresh.store, "a");
      const b = await serve(fresh.store, "b");
      const policy = { retainVersions: 2, minVersionAgeMs: 0 };

      const planned = await a.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/plan",
        headers: as("admin"),
        payload: { policy },
      });
      expect(planned.statusCode, planned.body).toBe(200);
      const planB = await b.inject({ url: "/v1/datasets/ds/cleanup/plan", headers: as("reader") });
      expect(planB.statusCode, planB.body).toBe(200);
      expect(JsonShapes.cleanup.parse(planB.json()).stats.retired).toEqual(
        planned.json().stats.retired,
      );

      const started = await a.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/jobs",
        headers: as("admin"),
        payload: { policy },
      });
      expect(started.statusCode, started.body).toBe(202);
      const id = CleanupJobShape.parse(started.json().job).id;
      // Listed through B while it runs or after: the record is on the store.
      expect((await jobsOf(b)).map((j) => j.id)).toContain(id);
      // B follows A's job through the store until its end.
      const followed = await b.inject({
        url: `/v1/datasets/ds/cleanup/jobs/${id}/events`,
        headers: as("reader"),
      });
      const done = followed.body.split("\n\n").find((block) => block.startsWith("event: done"));
      expect(done, followed.body).toBeDefined();
      expect(CleanupJobShape.parse(JSON.parse(done!.split("data: ")[1]!))).toMatchObject({
        id,
        state: "succeeded",
        replica: "a",
      });
      const one = await b.inject({
        url: `/v1/datasets/ds/cleanup/jobs/${id}`,
        headers: as("reader"),
      });
      expect(one.json().job).toMatchObject({ id, state: "succeeded", replica: "a" });
      expect(one.json().job.stats.retired).toEqual([
        { branch: "main", version: 1 },
        { branch: "main", version: 2 },
      ]);

      await a.close();
      await b.close();
      const c = await serve(fresh.store, "c");
      expect(await jobsOf(c)).toEqual([expect.objectContaining({ id, state: "succeeded" })]);
      const planC = await c.inject({ url: "/v1/datasets/ds/cleanup/plan", headers: as("reader") });
      expect(planC.json().stats.retired).toEqual(planned.json().stats.retired);
    });

    it("H2 history is bounded: only the newest jobs are kept and older records are deleted", async () => {
      const fresh = await freshStore(backend);
      cleanups.push(fresh.dispose);
      await seedDataset(fresh.store, 1);
      const app = await serve(fresh.store, "bounded", 2);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await app.inject({
          method: "POST",
          url: "/v1/datasets/ds/recover",
          headers: as("admin"),
        });
        expect(res.statusCode, res.body).toBe(200);
        const jobs = await jobsOf(app);
        ids.push(jobs[0]!.id);
      }
      expect((await jobsOf(app)).map((j) => j.id)).toEqual([ids[2], ids[1]]);
      const keys: string[] = [];
      for await (const meta of listAll(fresh.store, JOBS_PREFIX)) keys.push(meta.key);
      expect(keys.sort()).toEqual(
        [ids[1], ids[2]].flatMap((id) => [
          `${JOBS_PREFIX}${id}.end.json`,
          `${JOBS_PREFIX}${id}.json`,
        ]),
      );
    });

    it("H3 a job or plan record that is not JSON, or JSON of another schema, is skipped: the job shows its last readable stage, the plan route the newest readable plan", async () => {
      const fresh = await freshStore(backend);
      cleanups.push(fresh.dispose);
      await seedDataset(fresh.store, 2);
      const app = await serve(fresh.store, "skips");
      for (let i = 0; i < 2; i++) {
        const res = await app.inject({
          method: "POST",
          url: "/v1/datasets/ds/recover",
          headers: as("admin"),
        });
        expect(res.statusCode, res.body).toBe(200);
      }
      const [newer, older] = await jobsOf(app);
      expect([newer?.state, older?.state]).toEqual(["succeeded", "succeeded"]);
      const bytes = (text: string) => new TextEncoder().encode(text);
      await fresh.store.put(`${JOBS_PREFIX}${newer!.id}.end.json`, bytes("{not json"));
      await fresh.store.put(
        `${JOBS_PREFIX}${older!.id}.end.json`,
        bytes(JSON.stringify({ schema: 99, id: older!.id })),
      );
      expect((await jobsOf(app)).map((j) => [j.id, j.state])).toEqual([
        [newer!.id, "running"],
        [older!.id, "running"],
      ]);

      const planned = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/plan",
        headers: as("admin"),
        payload: { policy: { retainVersions: 1, minVersionAgeMs: 0 } },
      });
      expect(planned.statusCode, planned.body).toBe(200);
      // Newer keys than the real plan (ULIDs sort by time): one not JSON, one another schema.
      await fresh.store.put(`${PLANS_PREFIX}7ZZZZZZZZZZZZZZZZZZZZZZZZZ.json`, bytes("{not json"));
      await fresh.store.put(
        `${PLANS_PREFIX}7ZZZZZZZZZZZZZZZZZZZZZZZZY.json`,
        bytes(JSON.stringify({ schema: 99 })),
      );
      const plan = await app.inject({ url: "/v1/datasets/ds/cleanup/plan", headers: as("reader") });
      expect(plan.statusCode, plan.body).toBe(200);
      expect(JsonShapes.cleanup.parse(plan.json()).stats.retired).toEqual(
        planned.json().stats.retired,
      );
    });
  });
}
