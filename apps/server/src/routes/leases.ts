import {
  JsonShapes,
  LeaseAcquireRequest,
  LeaseHandleRequest,
  LeaseHeldShape,
  LeasesQuery,
  UlidParam,
} from "@holdfast/api-shapes";
import {
  acquireLease,
  checkLeaseHandle,
  describeLease,
  describeLeases,
  releaseLeaseHandle,
  renewLeaseHandle,
  toLeaseHandle,
} from "@holdfast/leases";
import type { z } from "zod";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

const LeaseParams = DatasetParams.extend({ leaseId: UlidParam });

/**
 * Leases: acquire, renew, release (by handle, through any replica), list. The server keeps
 * nothing: the client holds the handle (its secret is the capability) and the leases
 * package judges every term by the store's clock (docs/protocol.md §4).
 */
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
    (request) => listLeasesRoute(datasetOf(deps, request), request.query),
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
    async (request, reply) =>
      reply.code(201).send(await acquireLeaseRoute(datasetOf(deps, request), request.body)),
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
    (request) =>
      renewLeaseRoute(datasetOf(deps, request), request.params.leaseId, request.body.handle),
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
    (request) =>
      releaseLeaseRoute(datasetOf(deps, request), request.params.leaseId, request.body.handle),
  );
}

/** `GET .../leases`: a version without a branch is on the default branch (as `lease list`). */
async function listLeasesRoute(ds: DatasetEntry, query: z.infer<typeof LeasesQuery>) {
  const { defaultBranch } = await openServed(ds);
  const leases = await describeLeases(ds.ctx, { ...query, defaultBranch });
  return { ok: true as const, command: "lease list" as const, location: ds.store.location, leases };
}

/** `POST .../leases`: the handle (with its secret) and the lease as the CLI shows it. */
async function acquireLeaseRoute(ds: DatasetEntry, body: z.infer<typeof LeaseAcquireRequest>) {
  const { resolved, defaultBranch } = await openServed(ds);
  const lease = await acquireLease(ds.ctx, {
    branch: body.branch ?? defaultBranch,
    version: body.version,
    ttlMs: body.ttlMs,
    holder: body.holder,
    format: resolved.format,
  });
  return {
    ok: true as const,
    command: "lease acquire" as const,
    location: ds.store.location,
    handle: toLeaseHandle(lease),
    lease: await describeLease(ds.ctx, lease),
  };
}

/** `POST .../leases/:leaseId/renew`: a forged handle is refused before any request. */
async function renewLeaseRoute(ds: DatasetEntry, leaseId: string, handle: unknown) {
  const checked = checkLeaseHandle(handle, "renewLease", leaseId);
  await openServed(ds);
  const held = await renewLeaseHandle(ds.ctx, checked);
  return {
    ok: true as const,
    command: "lease renew" as const,
    location: ds.store.location,
    ...held,
  };
}

/** `POST .../leases/:leaseId/release`: idempotent; a forged handle is refused before any request. */
async function releaseLeaseRoute(ds: DatasetEntry, leaseId: string, handle: unknown) {
  const checked = checkLeaseHandle(handle, "releaseLease", leaseId);
  await releaseLeaseHandle(ds.ctx, checked);
  return {
    ok: true as const,
    command: "lease release" as const,
    location: ds.store.location,
    released: { leaseId: checked.leaseId, branch: checked.branch, version: checked.version },
  };
}
