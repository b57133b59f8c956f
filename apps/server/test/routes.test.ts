import {
  CleanupJobShape,
  JsonShapes,
  LeaseHeldShape,
  ProblemShape,
  VersionsPageShape,
} from "@holdfast/api-shapes";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, BACKENDS, freshStore, seedDataset, testServer } from "./support.js";

// Every route against every real backend: local disk, Ceph RGW (S3) and Azurite.
for (const backend of BACKENDS) {
  describe(`routes on ${backend}`, () => {
    let app: ZodApp;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      const fresh = await freshStore(backend);
      dispose = fresh.dispose;
      await seedDataset(fresh.store, 5);
      app = await testServer([{ name: "ds", store: fresh.store }]);
    });
    afterAll(async () => {
      await app?.close();
      await dispose?.();
    });

    it("health, readiness and the dataset list", async () => {
      expect((await app.inject({ url: "/healthz" })).json()).toEqual({ ok: true });
      const ready = await app.inject({ url: "/readyz" });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().datasets[0]).toMatchObject({ name: "ds", ready: true });
      const list = await app.inject({ url: "/v1/datasets", headers: as("reader") });
      expect(list.json().datasets).toEqual([
        expect.objectContaining({ name: "ds", backend: expect.any(String) }),
      ]);
    });

    it("versions are paged oldest first", async () => {
      const first = await app.inject({
        url: "/v1/datasets/ds/versions?limit=2",
        headers: as("reader"),
      });
      const page1 = VersionsPageShape.parse(first.json());
      expect(page1.versions.map((v) => v.version)).toEqual([1, 2]);
      expect(page1.nextAfter).toBe(2);
      const rest = await app.inject({
        url: "/v1/datasets/ds/versions?limit=10&after=2",
        headers: as("reader"),
      });
      const page2 = VersionsPageShape.parse(rest.json());
      expect(page2.versions.map((v) => v.version)).toEqual([3, 4, 5]);
      expect(page2.nextAfter).toBeNull();
    });

    it("a lease is acquired, renewed from its handle, listed and released", async () => {
      const acquired = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/leases",
        headers: as("reader"),
        payload: { version: 2, ttlMs: 30_000 },
      });
      expect(acquired.statusCode).toBe(201);
      const held = LeaseHeldShape.parse(acquired.json());
      const renewed = await app.inject({
        method: "POST",
        url: `/v1/datasets/ds/leases/${held.handle.leaseId}/renew`,
        headers: as("reader"),
        payload: { handle: held.handle },
      });
      expect(renewed.statusCode).toBe(200);
      const again = LeaseHeldShape.parse(renewed.json());
      expect(again.handle.renewal).toBe(1);
      expect(again.handle.etag).not.toBe(held.handle.etag);
      const listed = JsonShapes["lease list"].parse(
        (await app.inject({ url: "/v1/datasets/ds/leases", headers: as("reader") })).json(),
      );
      expect(listed.leases).toEqual([
        expect.objectContaining({ leaseId: held.handle.leaseId, version: 2, active: true }),
      ]);
      const released = await app.inject({
        method: "POST",
        url: `/v1/datasets/ds/leases/${held.handle.leaseId}/release`,
        headers: as("reader"),
        payload: { handle: again.handle },
      });
      expect(released.json().released).toEqual({
        leaseId: held.handle.leaseId,
        branch: "main",
        version: 2,
      });
      const after = (
        await app.inject({ url: "/v1/datasets/ds/leases", headers: as("reader") })
      ).json();
      expect(after.leases).toEqual([]);
      // A released lease cannot be renewed: its object is gone.
      const late = await app.inject({
        method: "POST",
        url: `/v1/datasets/ds/leases/${held.handle.leaseId}/renew`,
        headers: as("reader"),
        payload: { handle: again.handle },
      });
      expect(late.statusCode).toBe(404);
      expect(ProblemShape.parse(late.json())).toMatchObject({
        kind: "not-found",
        code: "LEASE_LOST",
      });
    });

    it("tags: create, update, list, delete", async () => {
      const created = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/tags",
        headers: as("writer"),
        payload: { name: "gold", version: 1 },
      });
      expect(created.statusCode).toBe(201);
      expect(created.json().tag).toEqual({ name: "gold", target: { branch: "main", version: 1 } });
      const dup = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/tags",
        headers: as("writer"),
        payload: { name: "gold", version: 2 },
      });
      expect(dup.statusCode).toBe(409);
      const moved = await app.inject({
        method: "PUT",
        url: "/v1/datasets/ds/tags/gold",
        headers: as("writer"),
        payload: { version: 3 },
      });
      expect(moved.json().tag.target).toEqual({ branch: "main", version: 3 });
      const listed = (
        await app.inject({ url: "/v1/datasets/ds/tags", headers: as("reader") })
      ).json();
      expect(listed.tags).toEqual([{ name: "gold", target: { branch: "main", version: 3 } }]);
      const deleted = await app.inject({
        method: "DELETE",
        url: "/v1/datasets/ds/tags/gold",
        headers: as("writer"),
      });
      expect(deleted.json().deleted).toEqual({ name: "gold", resumed: false });
      expect(
        (await app.inject({ url: "/v1/datasets/ds/tags", headers: as("reader") })).json().tags,
      ).toEqual([]);
    });

    it("branches: create from a version, list, delete", async () => {
      const created = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/branches",
        headers: as("writer"),
        payload: { name: "exp", from: { version: 2 } },
      });
      expect(created.statusCode).toBe(201);
      expect(created.json().branch).toMatchObject({
        name: "exp",
        parent: { branch: "main", version: 2 },
      });
      const listed = JsonShapes["branch list"].parse(
        (await app.inject({ url: "/v1/datasets/ds/branches", headers: as("reader") })).json(),
      );
      expect(listed.branches.map((b) => b.name)).toEqual(["main", "exp"]);
      const deleted = await app.inject({
        method: "DELETE",
        url: "/v1/datasets/ds/branches/exp",
        headers: as("writer"),
      });
      expect(deleted.statusCode).toBe(200);
      const after = JsonShapes["branch list"].parse(
        (await app.inject({ url: "/v1/datasets/ds/branches", headers: as("reader") })).json(),
      );
      expect(after.branches.map((b) => b.name)).toEqual(["main"]);
    });

    it("cleanup: plan with reasons, then a job followed over SSE, then history; a leased version stays", async () => {
      const lease = LeaseHeldShape.parse(
        (
          await app.inject({
            method: "POST",
            url: "/v1/datasets/ds/leases",
            headers: as("reader"),
            payload: { version: 1, ttlMs: 60_000 },
          })
        ).json(),
      );
      const policy = { retainVersions: 2, minVersionAgeMs: 0 };
      const plan = JsonShapes.cleanup.parse(
        (
          await app.inject({
            method: "POST",
            url: "/v1/datasets/ds/cleanup/plan",
            headers: as("admin"),
            payload: { policy },
          })
        ).json(),
      );
      expect(plan.stats.retired).toEqual([
        { branch: "main", version: 2 },
        { branch: "main", version: 3 },
      ]);
      expect(plan.stats.retained).toContainEqual(
        expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
      );
      const last = await app.inject({ url: "/v1/datasets/ds/cleanup/plan", headers: as("reader") });
      expect(last.json().stats.retired).toHaveLength(2);

      const started = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/cleanup/jobs",
        headers: as("admin"),
        payload: { policy },
      });
      expect(started.statusCode).toBe(202);
      const job = CleanupJobShape.parse(started.json().job);
      const events = await app.inject({
        url: `/v1/datasets/ds/cleanup/jobs/${job.id}/events`,
        headers: as("reader"),
      });
      expect(events.headers["content-type"]).toBe("text/event-stream");
      const done = events.body
        .split("\n\n")
        .filter((block) => block.startsWith("event: done"))
        .map((block) => CleanupJobShape.parse(JSON.parse(block.split("data: ")[1]!)));
      expect(done).toHaveLength(1);
      expect(done[0]!.state).toBe("succeeded");
      expect(done[0]!.stats?.retired).toEqual([
        { branch: "main", version: 2 },
        { branch: "main", version: 3 },
      ]);
      const history = (
        await app.inject({ url: "/v1/datasets/ds/cleanup/jobs", headers: as("reader") })
      ).json();
      expect(history.jobs[0]).toMatchObject({ id: job.id, state: "succeeded", trigger: "api" });
      const versions = VersionsPageShape.parse(
        (await app.inject({ url: "/v1/datasets/ds/versions", headers: as("reader") })).json(),
      );
      expect(versions.versions.map((v) => v.version)).toEqual([1, 4, 5]);
      await app.inject({
        method: "POST",
        url: `/v1/datasets/ds/leases/${lease.handle.leaseId}/release`,
        headers: as("reader"),
        payload: { handle: lease.handle },
      });
    });

    it("recover, status and doctor", async () => {
      const recovered = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/recover",
        headers: as("admin"),
      });
      expect(recovered.statusCode).toBe(200);
      expect(JsonShapes.recover.parse(recovered.json()).warnings).toEqual([]);
      const status = JsonShapes.status.parse(
        (await app.inject({ url: "/v1/datasets/ds/status", headers: as("reader") })).json(),
      );
      expect(status.branches).toContainEqual({ name: "main", latestVersion: 5 });
      expect(status.retirements).toEqual([]);
      const doctor = JsonShapes.doctor.parse(
        (await app.inject({ url: "/v1/datasets/ds/doctor", headers: as("reader") })).json(),
      );
      expect(doctor.verdict).not.toBe("unsupported");
      expect(doctor.checks.find((c) => c.id === "create-only")?.status).toBe("pass");
    });

    it("metrics count requests by route and store requests by type", async () => {
      const res = await app.inject({ url: "/metrics", headers: as("reader") });
      expect(res.statusCode).toBe(200);
      expect(res.body).toMatch(
        /holdfast_http_requests_total\{route="\/v1\/datasets\/:dataset\/versions",method="GET",status="200"\} \d+/,
      );
      expect(res.body).toMatch(/holdfast_store_requests_total\{dataset="ds",type="put"\} [1-9]/);
      expect(res.body).toMatch(
        /holdfast_cleanup_duration_seconds_count\{dataset="ds",kind="cleanup",outcome="succeeded"\} 1/,
      );
      expect(res.body).toMatch(/holdfast_objects_deleted_total\{dataset="ds",kind="manifests"\} 2/);
      expect(res.body).toMatch(/holdfast_active_leases\{dataset="ds"\} 0/);
    });
  });
}
