import { CommitRequest, JsonShapes, VersionsPageShape, VersionsQuery } from "@holdfast/api-shapes";
import { commitVersion } from "@holdfast/dataset";
import { requireWritableFormat } from "@holdfast/format-lance";
import { firstCommitParent, listVersionsWithTags } from "@holdfast/refs-lifecycle";
import type { z } from "zod";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

/** Versions: one page of a branch's versions with their tags; commits. */
export function registerVersionRoutes(app: ZodApp, deps: AppDeps): void {
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
    (request) => listVersionsRoute(datasetOf(deps, request), request.query),
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
      const answer = await commitRoute(ds, request.body);
      return reply
        .code(201)
        .header(
          "location",
          `/v1/datasets/${ds.name}/versions?branch=${answer.branch}&after=${answer.version - 1}&limit=1`,
        )
        .send(answer);
    },
  );
}

/** `GET .../versions`: the page, through the dataset's format (as `holdfast versions`). */
async function listVersionsRoute(ds: DatasetEntry, query: z.infer<typeof VersionsQuery>) {
  const { resolved, defaultBranch } = await openServed(ds);
  const branch = query.branch ?? defaultBranch;
  const page = await listVersionsWithTags(ds.ctx, {
    format: resolved.format,
    branch,
    after: query.after,
    limit: query.limit,
  });
  return {
    ok: true as const,
    command: "versions" as const,
    location: ds.store.location,
    format: resolved.name,
    branch,
    ...page,
  };
}

/**
 * `POST .../versions`: a Lance table is LanceDB's to write (refused before anything is
 * written); a branch other than the default must exist, and its first version descends
 * from its fork point unless the body names a parent.
 */
async function commitRoute(ds: DatasetEntry, body: z.infer<typeof CommitRequest>) {
  const { resolved, defaultBranch } = await openServed(ds);
  requireWritableFormat(resolved, "commit");
  const { files, sources } = body;
  const branch = body.branch ?? defaultBranch;
  const forkParent = await firstCommitParent(ds.ctx, { branch, defaultBranch });
  const parent = body.parent !== undefined ? body.parent : forkParent;
  const commit = await commitVersion(ds.ctx, {
    branch,
    files,
    ...(parent === undefined ? {} : { parent }),
    ...(sources === undefined ? {} : { sources }),
  });
  return {
    ok: true as const,
    command: "commit" as const,
    location: ds.store.location,
    branch,
    version: commit.version,
    key: commit.key,
    txnId: commit.txnId,
    files: files.map((f) => ({ key: f.key, size: f.size })),
  };
}
