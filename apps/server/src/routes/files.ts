import { FileUploadedShape } from "@holdfast/api-shapes";
import { writeDataFile } from "@holdfast/dataset";
import { requireWritableFormat } from "@holdfast/format-lance";
import { type AppDeps, datasetOf, sendProblem, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { problem } from "../problem.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

/** Data file uploads (raw bytes, create-only under `data/`), named later by a commit. */
export function registerFileRoutes(app: ZodApp, deps: AppDeps, uploadLimitBytes: number): void {
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
        return reply.code(201).send(await uploadRoute(ds, request.body));
      },
    );
  });
}

/** `POST .../files`: a Lance table is LanceDB's to write, refused before anything is written. */
async function uploadRoute(ds: DatasetEntry, body: Buffer) {
  requireWritableFormat((await openServed(ds)).resolved, "upload");
  const file = await writeDataFile(ds.ctx, new Uint8Array(body));
  return {
    ok: true as const,
    command: "file upload" as const,
    location: ds.store.location,
    file: { key: file.key, size: file.size },
  };
}
