import {
  BranchCreateRequest,
  JsonShapes,
  NameParam,
  TagCreateRequest,
  TagUpdateRequest,
} from "@holdfast/api-shapes";
import { holdfastError } from "@holdfast/conditional-store";
import type { VersionRef } from "@holdfast/dataset";
import { describeBranches } from "@holdfast/format-lance";
import {
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  listTags,
  updateTag,
} from "@holdfast/refs-lifecycle";
import { z } from "zod";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { openServed } from "../datasets.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

const NamedParams = DatasetParams.extend({ name: NameParam });
/** `force=true` deletes a branch even while leases pin its versions (they end with it). */
const DeleteQuery = z.strictObject({ force: z.enum(["true", "false"]).optional() });

/** Tags and branches, their whole lifecycle (create, update, delete, list). */
export function registerRefRoutes(app: ZodApp, deps: AppDeps): void {
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
    async (request) => {
      const ds = datasetOf(deps, request);
      const { format } = (await openServed(ds)).resolved;
      const tags = (await listTags(ds.ctx, { format })).map((t) => ({
        name: t.name,
        target: t.target,
      }));
      return { ok: true as const, command: "tag list" as const, location: ds.store.location, tags };
    },
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
    async (request, reply) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      const { name, version, branch } = request.body;
      const tag = await createTag(
        ds.ctx,
        { name, target: { branch: branch ?? defaultBranch, version } },
        { format: resolved.format },
      );
      return reply.code(201).send({
        ok: true as const,
        command: "tag create" as const,
        location: ds.store.location,
        tag: { name: tag.name, target: tag.target },
      });
    },
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
    async (request) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      const tag = await updateTag(
        ds.ctx,
        {
          name: request.params.name,
          target: { branch: request.body.branch ?? defaultBranch, version: request.body.version },
        },
        { format: resolved.format },
      );
      return {
        ok: true as const,
        command: "tag update" as const,
        location: ds.store.location,
        tag: { name: tag.name, target: tag.target },
      };
    },
  );

  for (const [kind, plural] of [
    ["tag", "tags"],
    ["branch", "branches"],
  ] as const) {
    app.delete(
      `/v1/datasets/:dataset/${plural}/:name`,
      {
        config: { role: "writer" },
        schema: {
          summary:
            kind === "tag"
              ? "Delete a tag (its version becomes eligible for cleanup)"
              : "Delete a branch with its versions, leases and retirement state",
          tags: [plural],
          security: BEARER,
          params: NamedParams,
          querystring: DeleteQuery,
          response: withProblems({ 200: JsonShapes[`${kind} delete`] }),
        },
      },
      async (request) => {
        const ds = datasetOf(deps, request);
        const { format } = (await openServed(ds)).resolved;
        const result =
          kind === "tag"
            ? await deleteTag(ds.ctx, request.params.name, { format })
            : await deleteBranch(ds.ctx, request.params.name, {
                force: request.query.force === "true",
                format,
              });
        return {
          ok: true as const,
          command: `${kind} delete` as const,
          location: ds.store.location,
          deleted: { name: result.name, resumed: result.resumed },
        };
      },
    );
  }

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
    async (request) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      const branches = await describeBranches(ds.ctx, { format: resolved.format, defaultBranch });
      return {
        ok: true as const,
        command: "branch list" as const,
        location: ds.store.location,
        branches,
      };
    },
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
    async (request, reply) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      const { format } = resolved;
      let parent: VersionRef;
      const from = request.body.from;
      if (from === undefined) {
        const latest = await format.latestVersion(ds.ctx, defaultBranch);
        if (latest === null) {
          throw holdfastError(
            "not-found",
            "createBranch",
            `branch ${defaultBranch} has no versions to fork from`,
            { hint: "commit a version first, or pass from: { branch, version }" },
          );
        }
        parent = { branch: defaultBranch, version: latest };
      } else {
        parent = { branch: from.branch ?? defaultBranch, version: from.version };
      }
      const created = await createBranch(ds.ctx, { name: request.body.name, parent }, { format });
      return reply.code(201).send({
        ok: true as const,
        command: "branch create" as const,
        location: ds.store.location,
        branch: { name: created.name, parent: created.parent, metadata: created.metadata },
      });
    },
  );
}
