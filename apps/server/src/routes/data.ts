import {
  CommitRequest,
  DatasetsShape,
  FileUploadedShape,
  JsonShapes,
  VersionsPageShape,
  VersionsQuery,
} from "@holdfast/api-shapes";
import { collectStatus } from "@holdfast/cleanup";
import { commitVersion, writeDataFile } from "@holdfast/dataset";
import {
  describeLanceDataset,
  diagnoseStore,
  type LanceFormat,
  lanceAutoCleanupWarning,
  requireWritableFormat,
} from "@holdfast/format-lance";
import { firstCommitParent, listVersionsWithTags } from "@holdfast/refs-lifecycle";
import { type AppDeps, datasetOf, sendProblem, type ZodApp } from "../app.js";
import { openServed } from "../datasets.js";
import { problem } from "../problem.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

/** Datasets, versions (paged) and commits, data file uploads, status, doctor. */
export function registerDataRoutes(app: ZodApp, deps: AppDeps, uploadLimitBytes: number): void {
  // Raw bytes only on the upload route (its own context): JSON routes keep answering 415.
  void app.register(async (uploads) => {
    uploads.addContentTypeParser(
      "application/octet-stream",
      { parseAs: "buffer", bodyLimit: uploadLimitBytes },
      (_request, body, done) => done(null, body),
    );
    uploads.post(
      "/v1/datasets/:dataset/files",
      {
        config: { role: "writer" },
        bodyLimit: uploadLimitBytes,
        schema: {
          summary:
            "Write a data file from the request body (application/octet-stream, create-only under data/); name it in a commit",
          tags: ["datasets"],
          security: BEARER,
          params: DatasetParams,
          consumes: ["application/octet-stream"],
          response: withProblems({ 201: FileUploadedShape }),
        },
      },
      async (request, reply) => {
        const ds = datasetOf(deps, request);
        if (!Buffer.isBuffer(request.body)) {
          return sendProblem(
            reply,
            problem(
              415,
              "unsupported-media-type",
              "a data file is sent as application/octet-stream",
              {
                hint: "curl --data-binary @file -H 'content-type: application/octet-stream'",
              },
            ),
          );
        }
        // A Lance table is LanceDB's to write: refused before anything is written.
        requireWritableFormat((await openServed(ds)).resolved, "upload");
        const file = await writeDataFile(ds.ctx, new Uint8Array(request.body));
        return reply.code(201).send({
          ok: true as const,
          command: "file upload" as const,
          location: ds.store.location,
          file: { key: file.key, size: file.size },
        });
      },
    );
  });

  app.get(
    "/v1/datasets",
    {
      config: { role: "reader" },
      schema: {
        summary: "The datasets this server serves",
        tags: ["datasets"],
        security: BEARER,
        response: withProblems({ 200: DatasetsShape }),
      },
    },
    async () => ({
      ok: true as const,
      command: "datasets" as const,
      datasets: [...deps.datasets.values()].map((d) => ({
        name: d.name,
        location: d.store.location,
        backend: d.store.backend,
      })),
    }),
  );

  app.get(
    "/v1/datasets/:dataset/versions",
    {
      config: { role: "reader" },
      schema: {
        summary: "One page of a branch's versions, oldest first",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        querystring: VersionsQuery,
        response: withProblems({ 200: VersionsPageShape }),
      },
    },
    async (request) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      const branch = request.query.branch ?? defaultBranch;
      const page = await listVersionsWithTags(ds.ctx, {
        format: resolved.format,
        branch,
        after: request.query.after,
        limit: request.query.limit,
      });
      return {
        ok: true as const,
        command: "versions" as const,
        location: ds.store.location,
        format: resolved.name,
        branch,
        ...page,
      };
    },
  );

  app.post(
    "/v1/datasets/:dataset/versions",
    {
      config: { role: "writer" },
      schema: {
        summary:
          "Commit the next version of a branch, naming data files already on the store (create-only manifest)",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        body: CommitRequest,
        response: withProblems({ 201: JsonShapes.commit }),
      },
    },
    async (request, reply) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      // A Lance table is LanceDB's to write: refused before anything is written.
      requireWritableFormat(resolved, "commit");
      const { files, sources } = request.body;
      const branch = request.body.branch ?? defaultBranch;
      // A branch other than the default must exist; its first version descends from its fork point.
      const forkParent = await firstCommitParent(ds.ctx, { branch, defaultBranch });
      const parent = request.body.parent !== undefined ? request.body.parent : forkParent;
      const commit = await commitVersion(ds.ctx, {
        branch,
        files,
        ...(parent === undefined ? {} : { parent }),
        ...(sources === undefined ? {} : { sources }),
      });
      return reply
        .code(201)
        .header(
          "location",
          `/v1/datasets/${ds.name}/versions?branch=${branch}&after=${commit.version - 1}&limit=1`,
        )
        .send({
          ok: true as const,
          command: "commit" as const,
          location: ds.store.location,
          branch,
          version: commit.version,
          key: commit.key,
          txnId: commit.txnId,
          files: files.map((f) => ({ key: f.key, size: f.size })),
        });
    },
  );

  app.get(
    "/v1/datasets/:dataset/status",
    {
      config: { role: "reader" },
      schema: {
        summary: "Branches, tags, active leases, retirements and reference intents in flight",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes.status }),
      },
    },
    async (request) => {
      const ds = datasetOf(deps, request);
      const { resolved, datasetId, defaultBranch } = await openServed(ds);
      const status = await collectStatus(ds.ctx, { format: resolved.format });
      const lance =
        resolved.name === "lance"
          ? await describeLanceDataset(ds.ctx, resolved.format as LanceFormat)
          : null;
      const warning = lance ? lanceAutoCleanupWarning(lance) : null;
      return {
        ok: true as const,
        command: "status" as const,
        location: ds.store.location,
        datasetId,
        defaultBranch,
        format: resolved.name,
        ...status,
        ...(lance ? { lance } : {}),
        warnings: warning ? [warning] : [],
      };
    },
  );

  app.get(
    "/v1/datasets/:dataset/doctor",
    {
      config: { role: "reader" },
      schema: {
        summary: "Probe what the dataset's store enforces (writes and removes one probe object)",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes.doctor }),
      },
    },
    async (request) => {
      const ds = datasetOf(deps, request);
      // The doctor needs no dataset; on a Lance table it also reports the table (CLI doctor).
      const report = await diagnoseStore(ds.ctx);
      return {
        ok: true as const,
        command: "doctor" as const,
        location: ds.store.location,
        ...report,
      };
    },
  );
}
