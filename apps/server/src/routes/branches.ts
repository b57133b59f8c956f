import { BranchCreateRequest, JsonShapes } from "@holdfast/api-shapes";
import { describeBranches, resolveForkPoint } from "@holdfast/format-lance";
import { createBranch, deleteBranch } from "@holdfast/refs-lifecycle";
import type { z } from "zod";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { BEARER, DatasetParams, DeleteQuery, NamedParams, withProblems } from "./common.js";

/** Branches, their whole lifecycle (create, delete, list). */
export function registerBranchRoutes(app: ZodApp, deps: AppDeps): void {
  app.get(
    "/v1/datasets/:dataset/branches",
    {
      config: { role: "reader" },
      schema: {
        summary: "Branches with their fork point and latest version",
        tags: ["branches"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes["branch list"] }),
      },
    },
    (request) => listBranchesRoute(datasetOf(deps, request)),
  );

  app.post(
    "/v1/datasets/:dataset/branches",
    {
      config: { role: "writer" },
      schema: {
        summary: "Create a branch forked from a version",
        tags: ["branches"],
        security: BEARER,
        params: DatasetParams,
        body: BranchCreateRequest,
        response: withProblems({ 201: JsonShapes["branch create"] }),
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createBranchRoute(datasetOf(deps, request), request.body)),
  );

  app.delete(
    "/v1/datasets/:dataset/branches/:name",
    {
      config: { role: "writer" },
      schema: {
        summary: "Delete a branch with its versions, leases and retirement state",
        tags: ["branches"],
        security: BEARER,
        params: NamedParams,
        querystring: DeleteQuery,
        response: withProblems({ 200: JsonShapes["branch delete"] }),
      },
    },
    (request) =>
      deleteBranchRoute(datasetOf(deps, request), request.params.name, request.query.force),
  );
}

/** `GET .../branches`: the default branch first (as `holdfast branch list`). */
async function listBranchesRoute(ds: DatasetEntry) {
  const { resolved, defaultBranch } = await openServed(ds);
  const branches = await describeBranches(ds.ctx, { format: resolved.format, defaultBranch });
  return {
    ok: true as const,
    command: "branch list" as const,
    location: ds.store.location,
    branches,
  };
}

/** `POST .../branches`: forked from `from`, else the default branch's latest version. */
async function createBranchRoute(ds: DatasetEntry, body: z.infer<typeof BranchCreateRequest>) {
  const { resolved, defaultBranch } = await openServed(ds);
  const { format } = resolved;
  const parent = await resolveForkPoint(ds.ctx, { format, defaultBranch, from: body.from });
  const created = await createBranch(ds.ctx, { name: body.name, parent }, { format });
  return {
    ok: true as const,
    command: "branch create" as const,
    location: ds.store.location,
    branch: { name: created.name, parent: created.parent, metadata: created.metadata },
  };
}

/** `DELETE .../branches/:name`: refused while leases pin its versions unless `force=true`. */
async function deleteBranchRoute(
  ds: DatasetEntry,
  name: string,
  force: "true" | "false" | undefined,
) {
  const { format } = (await openServed(ds)).resolved;
  const result = await deleteBranch(ds.ctx, name, { force: force === "true", format });
  return {
    ok: true as const,
    command: "branch delete" as const,
    location: ds.store.location,
    deleted: { name: result.name, resumed: result.resumed },
  };
}
