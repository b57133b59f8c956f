import {
  FileUploadedShape,
  JsonShapes,
  ProblemShape,
  VersionsPageShape,
} from "@holdfast/api-shapes";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import {
  COMMIT_INTENT_PREFIX,
  latestVersion,
  manifestKey,
  tryReadManifest,
  writeDataFile,
} from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { versionIsWhole } from "./audit.js";
import { as, BACKENDS, freshStore, seedDataset, testServer } from "./support.js";

// The writer's commit route (POST .../versions) on every real backend.
for (const backend of BACKENDS) {
  describe(`commit on ${backend}`, () => {
    let app: ZodApp;
    let store: ObjectStore;
    let ctx: ProtocolContext;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      const fresh = await freshStore(backend);
      dispose = fresh.dispose;
      store = fresh.store;
      ctx = await seedDataset(store, 2);
      app = await testServer([{ name: "ds", store }]);
    });
    afterAll(async () => {
      await app?.close();
      await dispose?.();
    });

    const commit = (payload: object) =>
      app.inject({
        method: "POST",
        url: "/v1/datasets/ds/versions",
        headers: as("writer"),
        payload,
      });
    const intentsLeft = async () => {
      const keys: string[] = [];
      for await (const meta of listAll(store, COMMIT_INTENT_PREFIX)) keys.push(meta.key);
      return keys;
    };

    it("commits a version naming a file of version 1 (declared as a source) and a file a writer put on the store", async () => {
      const v1 = await tryReadManifest(ctx, "main", 1);
      const written = await writeDataFile(ctx, new TextEncoder().encode("from a writer"));
      const files = [...v1!.manifest.files, { key: written.key, size: written.size }];
      const res = await commit({ files, sources: [{ branch: "main", version: 1 }] });
      expect(res.statusCode, res.body).toBe(201);
      const body = JsonShapes.commit.parse(res.json());
      expect(body).toMatchObject({ branch: "main", version: 3, key: manifestKey("main", 3) });
      expect(body.files).toEqual(files);
      const stored = await tryReadManifest(ctx, "main", 3);
      expect(stored?.manifest.files.map((f) => f.key)).toEqual(files.map((f) => f.key));
      expect(stored?.manifest.parent).toEqual({ branch: "main", version: 2 });
      expect(await versionIsWhole(store, "main", 3)).toBe(true);
      const page = VersionsPageShape.parse(
        (await app.inject({ url: "/v1/datasets/ds/versions", headers: as("reader") })).json(),
      );
      expect(page.versions.map((v) => v.version)).toEqual([1, 2, 3]);
      // The reuse cover (commit intent) is gone once the manifest landed.
      expect(await intentsLeft()).toEqual([]);
    });

    it("a fork's first version descends from its fork point; a branch that does not exist is 404 and gets no version", async () => {
      const created = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/branches",
        headers: as("writer"),
        payload: { name: "exp", from: { version: 1 } },
      });
      expect(created.statusCode, created.body).toBe(201);
      const v1 = await tryReadManifest(ctx, "main", 1);
      const res = await commit({
        branch: "exp",
        files: v1!.manifest.files,
        sources: [{ branch: "main", version: 1 }],
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ branch: "exp", version: 1 });
      expect((await tryReadManifest(ctx, "exp", 1))?.manifest.parent).toEqual({
        branch: "main",
        version: 1,
      });

      const missing = await commit({ branch: "nope", files: v1!.manifest.files });
      expect(missing.statusCode).toBe(404);
      expect(ProblemShape.parse(missing.json())).toMatchObject({ code: "BRANCH_NOT_FOUND" });
      expect(await store.head(manifestKey("nope", 1))).toBeNull();
    });

    it("a client with only HTTP uploads a data file, then commits it", async () => {
      const bytes = Buffer.from("rows uploaded over HTTP");
      const uploaded = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/files",
        headers: { ...as("writer"), "content-type": "application/octet-stream" },
        payload: bytes,
      });
      expect(uploaded.statusCode, uploaded.body).toBe(201);
      const { file } = FileUploadedShape.parse(uploaded.json());
      expect(file.size).toBe(bytes.byteLength);
      expect(Buffer.from((await store.get(file.key))!.body).equals(bytes)).toBe(true);
      const res = await commit({ files: [file] });
      expect(res.statusCode, res.body).toBe(201);
      const version = JsonShapes.commit.parse(res.json()).version;
      expect(await versionIsWhole(store, "main", version)).toBe(true);
      // JSON sent to the upload route is refused, not stored as a file.
      const json = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/files",
        headers: as("writer"),
        payload: { rows: 1 },
      });
      expect(json.statusCode).toBe(415);
    });

    it("a commit naming a file that is not on the store is refused and leaves nothing behind", async () => {
      const latest = (await latestVersion(ctx, "main"))!;
      const res = await commit({
        files: [{ key: "data/01J9Z3K4V6W8X0Y2Z4A6B8C0D2.bin", size: 3 }],
      });
      expect(res.statusCode, res.body).toBe(404);
      expect(ProblemShape.parse(res.json())).toMatchObject({ kind: "not-found" });
      expect(await store.head(manifestKey("main", latest + 1))).toBeNull();
      expect(await intentsLeft()).toEqual([]);
    });
  });
}
