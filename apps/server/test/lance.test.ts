import { JsonShapes, LeaseHeldShape, ProblemShape, VersionsPageShape } from "@holdfast/api-shapes";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import {
  type LanceHistory,
  type LanceSite,
  lanceTags,
  lanceVersions,
  localLanceSite,
  readVersion,
  rgwLanceSite,
  writeLanceTable,
} from "./lance.js";
import { as, testServer } from "./support.js";

const SITES = { local: localLanceSite, rgw: rgwLanceSite } as const;

// A table LanceDB 0.31.0 wrote, served over HTTP: every route reads it as Lance
// (docs/lance.md, "The server"), on local disk and on Ceph RGW.
for (const [siteName, makeSite] of Object.entries(SITES)) {
  describe(`a LanceDB table served over HTTP (${siteName})`, { timeout: 300_000 }, () => {
    let site: LanceSite;
    let store: ObjectStore;
    let history: LanceHistory;
    let app: ZodApp;

    beforeAll(async () => {
      site = await makeSite();
      history = await writeLanceTable(site);
      store = await site.store();
      app = await testServer([{ name: "events", store }]);
    }, 300_000);
    afterAll(async () => {
      await app?.close();
      await site?.dispose();
    });

    const get = (url: string) =>
      app.inject({ url: `/v1/datasets/events${url}`, headers: as("reader") });
    const post = (url: string, payload: object, role: "reader" | "writer" | "admin" = "writer") =>
      app.inject({ method: "POST", url: `/v1/datasets/events${url}`, headers: as(role), payload });
    const keys = async () => {
      const out: string[] = [];
      for await (const meta of listAll(store, "")) out.push(`${meta.key} ${meta.etag}`);
      return out.sort();
    };
    const runJob = async (policy: object) => {
      const started = await post("/cleanup/jobs", { policy }, "admin");
      expect(started.statusCode, started.body).toBe(202);
      const id = (started.json() as { job: { id: string } }).job.id;
      await expect
        .poll(async () => (await get(`/cleanup/jobs/${id}`)).json().job.state, {
          timeout: 120_000,
          interval: 200,
        })
        .not.toBe("running");
      return (await get(`/cleanup/jobs/${id}`)).json().job as {
        state: string;
        stats: {
          retired: { branch?: string; version: number }[];
          retained: { branch?: string; version: number; reason: string }[];
        };
        error: unknown;
      };
    };

    it("versions, status and branches are LanceDB's: its versions, its tags, its branch with its latest version", async () => {
      expect(history.versions).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const versions = await get("/versions?limit=100");
      expect(versions.statusCode, versions.body).toBe(200);
      const page = VersionsPageShape.parse(versions.json());
      expect(page.versions.map((v) => v.version)).toEqual(history.versions);
      expect(versions.json().format).toBe("lance");
      expect(page.versions.find((v) => v.version === 2)?.tags).toEqual(["lance-2"]);

      const status = await get("/status");
      expect(status.statusCode, status.body).toBe(200);
      expect(JsonShapes.status.parse(status.json())).toMatchObject({
        format: "lance",
        datasetId: null,
        // Lance branches are the format's branches too (their versions retire by policy).
        branches: [
          { name: "main", latestVersion: 7 },
          { name: "dev", latestVersion: history.dev.latest },
        ],
        tags: [{ name: "lance-2", target: { branch: "main", version: 2 } }],
        lance: { naming: "v2", versions: 7, latest: 7, tags: 1, branches: 1 },
        warnings: [],
      });

      const branches = await get("/branches");
      expect(branches.statusCode, branches.body).toBe(200);
      expect(JsonShapes["branch list"].parse(branches.json()).branches).toMatchObject([
        { name: "main", parent: null, default: true, latestVersion: 7 },
        {
          name: "dev",
          parent: { branch: "main", version: 3 },
          default: false,
          latestVersion: history.dev.latest,
        },
      ]);
      expect(history.dev.latest).toBe(5);

      // Lance branches are LanceDB's to write.
      const branch = await post("/branches", { name: "exp", from: { version: 3 } });
      expect(branch.statusCode, branch.body).toBe(501);
      expect(branch.json()).toMatchObject({ code: "REFS_UNSUPPORTED" });

      const doctor = await get("/doctor");
      expect(doctor.statusCode, doctor.body).toBe(200);
      const report = JsonShapes.doctor.parse(doctor.json());
      expect(report).toMatchObject({ format: "lance", lance: { naming: "v2" } });
      expect(report.checks.find((c) => c.id === "lance")).toMatchObject({ status: "info" });
    });

    it("a commit or an upload is refused as FORMAT_READ_ONLY and writes nothing", async () => {
      const before = await keys();
      const commit = await post("/versions", { files: [{ key: "data/x.lance", size: 1 }] });
      expect(commit.statusCode, commit.body).toBe(501);
      const problem = ProblemShape.parse(commit.json());
      expect(problem).toMatchObject({ kind: "unsupported", code: "FORMAT_READ_ONLY" });
      expect(problem.detail).toContain("written by LanceDB");
      expect(problem.detail).toContain("never writes Lance manifests");
      const upload = await app.inject({
        method: "POST",
        url: "/v1/datasets/events/files",
        headers: { ...as("writer"), "content-type": "application/octet-stream" },
        payload: Buffer.from("bytes"),
      });
      expect(upload.statusCode, upload.body).toBe(501);
      expect(upload.json()).toMatchObject({ code: "FORMAT_READ_ONLY" });
      expect(await keys()).toEqual(before);
      expect(await lanceVersions(site)).toEqual(history.versions);
    });

    it("a lease and a tag keep their versions through a cleanup job; LanceDB reads every kept version in full", async () => {
      const acquired = await post("/leases", { version: 1, ttlMs: 120_000 }, "reader");
      expect(acquired.statusCode, acquired.body).toBe(201);
      const held = LeaseHeldShape.parse(acquired.json());
      expect(held.lease).toMatchObject({ branch: "main", version: 1, active: true });
      const renewed = await post(
        `/leases/${held.handle.leaseId}/renew`,
        { handle: held.handle },
        "reader",
      );
      expect(renewed.statusCode, renewed.body).toBe(200);
      const handle = LeaseHeldShape.parse(renewed.json()).handle;

      const tagged = await post("/tags", { name: "keep-5", version: 5 });
      expect(tagged.statusCode, tagged.body).toBe(201);
      expect(await lanceTags(site)).toEqual({
        "lance-2": { branch: null, version: 2 },
        "keep-5": { branch: null, version: 5 },
      });
      expect((await readVersion(site, "keep-5")).checksum).toBe(history.reads.get(5)!.checksum);

      const job = await runJob({ retainVersions: 1, minVersionAgeMs: 0 });
      expect(job.state, JSON.stringify(job.error)).toBe("succeeded");
      const onMain = <T extends { branch?: string }>(list: T[]) =>
        list.filter((r) => (r.branch ?? "main") === "main");
      expect(
        onMain(job.stats.retired)
          .map((r) => r.version)
          .sort(),
      ).toEqual([4, 6]);
      const reasons = Object.fromEntries(
        onMain(job.stats.retained).map((r) => [r.version, r.reason]),
      );
      expect(reasons).toMatchObject({ 1: "lease", 2: "tag", 3: "branch-lineage", 5: "tag" });
      expect(await lanceVersions(site)).toEqual([1, 2, 3, 5, 7]);
      for (const version of [1, 2, 3, 5, 7]) {
        expect(await readVersion(site, version)).toEqual(history.reads.get(version));
      }
      await expect(readVersion(site, 4)).rejects.toThrow();

      // The lease ends: the next job retires version 1; the tags and the fork point stay.
      const released = await post(`/leases/${handle.leaseId}/release`, { handle }, "reader");
      expect(released.statusCode, released.body).toBe(200);
      const second = await runJob({ retainVersions: 1, minVersionAgeMs: 0 });
      expect(second.state, JSON.stringify(second.error)).toBe("succeeded");
      expect(onMain(second.stats.retired).map((r) => r.version)).toEqual([1]);
      expect(await lanceVersions(site)).toEqual([2, 3, 5, 7]);
      for (const version of [2, 3, 5, 7]) {
        expect(await readVersion(site, version)).toEqual(history.reads.get(version));
      }
    });
  });
}
