import {
  JsonShapes,
  LeaseAcquireRequest,
  LeaseHandleRequest,
  LeaseHeldShape,
  LeasesQuery,
  UlidParam,
} from "@holdfast/api-shapes";
import { holdfastError } from "@holdfast/conditional-store";
import { describeLeases } from "@holdfast/leases";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { openServed } from "../datasets.js";
import { acquireHandle, checkHandle, releaseHandle, renewHandle } from "../lease-handles.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

const LeaseParams = DatasetParams.extend({ leaseId: UlidParam });

/** Leases: acquire, renew, release (by handle, through any replica), list. */
export function registerLeaseRoutes(app: ZodApp, deps: AppDeps): void {
  app.get(
    "/v1/datasets/:dataset/leases",
    {
      config: { role: "reader" },
      schema: {
        summary: "Leases with their expiry in storage time",
        tags: ["leases"],
        security: BEARER,
        params: DatasetParams,
        querystring: LeasesQuery,
        response: withProblems({ 200: JsonShapes["lease list"] }),
      },
    },
    async (request) => {
      const ds = datasetOf(deps, request);
      const { defaultBranch } = await openServed(ds);
      const { version } = request.query;
      const branch = request.query.branch ?? (version === undefined ? undefined : defaultBranch);
      const leases = await describeLeases(ds.ctx, {
        ...(branch === undefined ? {} : { branch }),
        ...(version === undefined ? {} : { version }),
      });
      return {
        ok: true as const,
        command: "lease list" as const,
        location: ds.store.location,
        leases,
      };
    },
  );

  app.post(
    "/v1/datasets/:dataset/leases",
    {
      config: { role: "reader" },
      schema: {
        summary: "Acquire a lease on a version (storage-timed; renew it before its TTL runs out)",
        tags: ["leases"],
        security: BEARER,
        params: DatasetParams,
        body: LeaseAcquireRequest,
        response: withProblems({ 201: LeaseHeldShape }),
      },
    },
    async (request, reply) => {
      const ds = datasetOf(deps, request);
      const { resolved, defaultBranch } = await openServed(ds);
      const held = await acquireHandle(ds.ctx, {
        branch: request.body.branch ?? defaultBranch,
        version: request.body.version,
        ttlMs: request.body.ttlMs,
        format: resolved.format,
      });
      return reply.code(201).send({
        ok: true as const,
        command: "lease acquire" as const,
        location: ds.store.location,
        ...held,
      });
    },
  );

  app.post(
    "/v1/datasets/:dataset/leases/:leaseId/renew",
    {
      config: { role: "reader" },
      schema: {
        summary: "Renew a lease from its handle (through any replica)",
        tags: ["leases"],
        security: BEARER,
        params: LeaseParams,
        body: LeaseHandleRequest,
        response: withProblems({ 200: LeaseHeldShape }),
      },
    },
    async (request) => {
      const ds = datasetOf(deps, request);
      sameLease(request.params.leaseId, request.body.handle.leaseId);
      // A forged handle is refused before any request, the format's detection included.
      checkHandle(request.body.handle);
      const { resolved } = await openServed(ds);
      const held = await renewHandle(ds.ctx, request.body.handle, resolved.format);
      return {
        ok: true as const,
        command: "lease renew" as const,
        location: ds.store.location,
        ...held,
      };
    },
  );

  app.post(
    "/v1/datasets/:dataset/leases/:leaseId/release",
    {
      config: { role: "reader" },
      schema: {
        summary: "Release a lease from its handle (idempotent)",
        tags: ["leases"],
        security: BEARER,
        params: LeaseParams,
        body: LeaseHandleRequest,
        response: withProblems({ 200: JsonShapes["lease release"] }),
      },
    },
    async (request) => {
      const ds = datasetOf(deps, request);
      const { handle } = request.body;
      sameLease(request.params.leaseId, handle.leaseId);
      await releaseHandle(ds.ctx, handle);
      return {
        ok: true as const,
        command: "lease release" as const,
        location: ds.store.location,
        released: { leaseId: handle.leaseId, branch: handle.branch, version: handle.version },
      };
    },
  );
}

// --- utils ---

function sameLease(pathId: string, handleId: string): void {
  if (pathId.toUpperCase() !== handleId.toUpperCase()) {
    throw holdfastError(
      "invalid-input",
      "validate",
      "the handle is for another lease than the URL",
      {
        code: "BAD_HANDLE",
      },
    );
  }
}
