import { CleanupJobShape } from "@holdfast/api-shapes";
import { CLEANUP_LOCK_KEY } from "@holdfast/retirement";
import { afterEach, describe, expect, it } from "vitest";
import { ServerConfigFileSchema, type ZodApp } from "../src/index.js";
import { auditAfterRecovery, versionIsWhole } from "./audit.js";
import { as, freshStore, seedDataset, testServer } from "./support.js";

describe("operations: schedules and graceful shutdown", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it("the config file is validated: bad cron, bad interval, empty policy and unknown fields are refused", () => {
    const ok = {
      schedules: [
        {
          dataset: "ds",
          cleanup: { when: { cron: "0 3 * * *" }, policy: { retainVersions: 10 } },
          recover: { when: { everyMs: 60_000 } },
        },
      ],
    };
    expect(ServerConfigFileSchema.safeParse(ok).success).toBe(true);
    const bad = [
      { schedules: [{ dataset: "ds", recover: { when: { cron: "every day" } } }] },
      { schedules: [{ dataset: "ds", recover: { when: { everyMs: 10 } } }] },
      { schedules: [{ dataset: "ds", cleanup: { when: { everyMs: 60_000 }, policy: {} } }] },
      { schedules: [{ dataset: "ds", extra: true }] },
    ];
    for (const config of bad)
      expect(ServerConfigFileSchema.safeParse(config).success, JSON.stringify(config)).toBe(false);
  });

  it("S1 two replicas with the same schedule: cleanups run one at a time through the store lock, protected versions stay", async () => {
    const fresh = await freshStore("local");
    cleanups.push(fresh.dispose);
    await seedDataset(fresh.store, 8);
    const schedules = [
      {
        dataset: "ds",
        cleanup: { when: { everyMs: 1000 }, policy: { retainVersions: 2, minVersionAgeMs: 0 } },
      },
    ];
    const replicas: ZodApp[] = [];
    for (const id of ["s1", "s2"]) {
      const app = await testServer([{ name: "ds", store: fresh.store }], {
        replicaId: id,
        schedules,
      });
      replicas.push(app);
      cleanups.push(() => app.close());
    }
    await replicas[0]!.inject({
      method: "POST",
      url: "/v1/datasets/ds/tags",
      headers: as("writer"),
      payload: { name: "keep", version: 1 },
    });
    const jobs = async () =>
      (
        await Promise.all(
          replicas.map(
            async (app) =>
              (
                await app.inject({ url: "/v1/datasets/ds/cleanup/jobs", headers: as("reader") })
              ).json().jobs as unknown[],
          ),
        )
      )
        .flat()
        .map((j) => CleanupJobShape.parse(j));
    await expect
      .poll(async () => (await jobs()).filter((j) => j.state === "succeeded").length, {
        timeout: 30_000,
        interval: 500,
      })
      .toBeGreaterThanOrEqual(2);
    const done = await jobs();
    expect(done.every((j) => j.trigger === "schedule" && j.state !== "failed")).toBe(true);
    for (const app of replicas) await app.close();
    expect(await versionIsWhole(fresh.store, "main", 1)).toBe(true);
    expect(await versionIsWhole(fresh.store, "main", 8)).toBe(true);
    expect(await versionIsWhole(fresh.store, "main", 3)).toBe(false);
    expect(await auditAfterRecovery(fresh.store)).toEqual([]);
  });

  it("G1 shutdown lets an in-flight request finish and stops a running cleanup at a safe point, releasing its lock", async () => {
    const fresh = await freshStore("local");
    cleanups.push(fresh.dispose);
    await seedDataset(fresh.store, 150);
    const app = await testServer([{ name: "ds", store: fresh.store }]);
    const started = await app.inject({
      method: "POST",
      url: "/v1/datasets/ds/cleanup/jobs",
      headers: as("admin"),
      payload: { policy: { retainVersions: 1, minVersionAgeMs: 0 } },
    });
    expect(started.statusCode).toBe(202);
    const job = CleanupJobShape.parse(started.json().job);
    const inFlight = app.inject({ url: "/v1/datasets/ds/status", headers: as("reader") });
    let final: ReturnType<typeof CleanupJobShape.parse> | undefined;
    const events = app.inject({
      url: `/v1/datasets/ds/cleanup/jobs/${job.id}/events`,
      headers: as("reader"),
    });
    await app.close();
    expect((await inFlight).statusCode).toBe(200);
    const body = (await events).body;
    const doneBlock = body.split("\n\n").find((b) => b.startsWith("event: done"));
    if (doneBlock) final = CleanupJobShape.parse(JSON.parse(doneBlock.split("data: ")[1]!));
    // Stopped at a safe point: aborted with CLEANUP_INTERRUPTED, its partial stats kept.
    expect(final?.state).toBe("failed");
    expect(final?.error).toMatchObject({ kind: "aborted", code: "CLEANUP_INTERRUPTED" });
    expect(await fresh.store.head(CLEANUP_LOCK_KEY)).toBeNull();
    const survivor = await testServer([{ name: "ds", store: fresh.store }]);
    cleanups.push(() => survivor.close());
    expect(
      (
        await survivor.inject({
          method: "POST",
          url: "/v1/datasets/ds/recover",
          headers: as("admin"),
        })
      ).statusCode,
    ).toBe(200);
    expect(await auditAfterRecovery(fresh.store)).toEqual([]);
    expect(await versionIsWhole(fresh.store, "main", 150)).toBe(true);
  });
});
