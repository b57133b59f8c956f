import { JsonShapes, TagCreateRequest, TagUpdateRequest } from "@holdfast/api-shapes";
import { createTag, deleteTag, listTags, updateTag } from "@holdfast/refs-lifecycle";
import type { z } from "zod";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { BEARER, DatasetParams, DeleteQuery, NamedParams, withProblems } from "./common.js";

/** Tags, their whole lifecycle (create, move, delete, list); a tagged version is never cleaned up. */
export function registerTagRoutes(app: ZodApp, deps: AppDeps): void {
  app.get(
    "/v1/datasets/:dataset/tags",
    {
      config: { role: "reader" },
      schema: {
        summary: "Tags",
        tags: ["tags"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes["tag list"] }),
      },
    },
    (request) => listTagsRoute(datasetOf(deps, request)),
  );

  app.post(
    "/v1/datasets/:dataset/tags",
    {
      config: { role: "writer" },
      schema: {
        summary: "Create a tag on a version (a tagged version is never cleaned up)",
        tags: ["tags"],
        security: BEARER,
        params: DatasetParams,
        body: TagCreateRequest,
        response: withProblems({ 201: JsonShapes["tag create"] }),
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createTagRoute(datasetOf(deps, request), request.body)),
  );

  app.put(
    "/v1/datasets/:dataset/tags/:name",
    {
      config: { role: "writer" },
      schema: {
        summary: "Move an existing tag to another version",
        tags: ["tags"],
        security: BEARER,
        params: NamedParams,
        body: TagUpdateRequest,
        response: withProblems({ 200: JsonShapes["tag update"] }),
      },
    },
    (request) => updateTagRoute(datasetOf(deps, request), request.params.name, request.body),
  );

  app.delete(
    "/v1/datasets/:dataset/tags/:name",
    {
      config: { role: "writer" },
      schema: {
        summary: "Delete a tag (its version becomes eligible for cleanup)",
        tags: ["tags"],
        security: BEARER,
        params: NamedParams,
        querystring: DeleteQuery,
        response: withProblems({ 200: JsonShapes["tag delete"] }),
      },
    },
    (request) => deleteTagRoute(datasetOf(deps, request), request.params.name),
  );
}

/** `GET .../tags`. */
async function listTagsRoute(ds: DatasetEntry) {
  const { format } = (await openServed(ds)).resolved;
  const tags = (await listTags(ds.ctx, { format })).map((t) => ({
    name: t.name,
    target: t.target,
  }));
  return { ok: true as const, command: "tag list" as const, location: ds.store.location, tags };
}

/** `POST .../tags`: a version without a branch is on the default branch. */
async function createTagRoute(ds: DatasetEntry, body: z.infer<typeof TagCreateRequest>) {
  const { resolved, defaultBranch } = await openServed(ds);
  const tag = await createTag(
    ds.ctx,
    { name: body.name, target: { branch: body.branch ?? defaultBranch, version: body.version } },
    { format: resolved.format },
  );
  return {
    ok: true as const,
    command: "tag create" as const,
    location: ds.store.location,
    tag: { name: tag.name, target: tag.target },
  };
}

/** `PUT .../tags/:name`. */
async function updateTagRoute(
  ds: DatasetEntry,
  name: string,
  body: z.infer<typeof TagUpdateRequest>,
) {
  const { resolved, defaultBranch } = await openServed(ds);
  const tag = await updateTag(
    ds.ctx,
    { name, target: { branch: body.branch ?? defaultBranch, version: body.version } },
    { format: resolved.format },
  );
  return {
    ok: true as const,
    command: "tag update" as const,
    location: ds.store.location,
    tag: { name: tag.name, target: tag.target },
  };
}

/** `DELETE .../tags/:name`: finishes an interrupted deletion of the same tag. */
async function deleteTagRoute(ds: DatasetEntry, name: string) {
  const { format } = (await openServed(ds)).resolved;
  const result = await deleteTag(ds.ctx, name, { format });
  return {
    ok: true as const,
    command: "tag delete" as const,
    location: ds.store.location,
    deleted: { name: result.name, resumed: result.resumed },
  };
}
