import {
  CleanupJobAcceptedShape,
  CleanupJobsShape,
  type CleanupPolicyBody,
  CleanupRequest,
  JsonShapes,
  UlidParam,
} from "@holdfast/api-shapes";
import { recoverAndCleanup } from "@holdfast/cleanup";
import { holdfastError } from "@holdfast/conditional-store";
import type { FastifyReply } from "fastify";
import { z } from "zod";
import { type AppDeps, datasetOf, sendProblem, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { type JobEvent, statsBody } from "../jobs.js";
import { problemFor } from "../problem.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

const JobParams = DatasetParams.extend({ jobId: UlidParam });

/** Cleanup: plan, run as a job (progress over SSE), history; recover. */
export function registerCleanupRoutes(app: ZodApp, deps: AppDeps): void {
  app.post(
    "/v1/datasets/:dataset/cleanup/plan",
    {
      config: { role: "admin" },
      schema: {
        summary:
          "Plan a cleanup: what would be retired and why each kept version stays (no writes)",
        tags: ["cleanup"],
        security: BEARER,
        params: DatasetParams,
        body: CleanupRequest,
        response: withProblems({ 200: JsonShapes.cleanup }),
      },
    },
    (request) => planRoute(deps, datasetOf(deps, request), request.body.policy),
  );

  app.get(
    "/v1/datasets/:dataset/cleanup/plan",
    {
      config: { role: "reader" },
      schema: {
        summary: "The last plan made through any replica (kept on the store)",
        tags: ["cleanup"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes.cleanup }),
      },
    },
    (request) => lastPlanRoute(deps, datasetOf(deps, request)),
  );

  app.post(
    "/v1/datasets/:dataset/cleanup/jobs",
    {
      config: { role: "admin" },
      schema: {
        summary: "Start a cleanup job (one per dataset across replicas); follow it over SSE",
        tags: ["cleanup"],
        security: BEARER,
        params: DatasetParams,
        body: CleanupRequest,
        response: withProblems({ 202: CleanupJobAcceptedShape }),
      },
    },
    async (request, reply) => {
      const ds = datasetOf(deps, request);
      const answer = await startJobRoute(deps, ds, request.body.policy);
      return reply
        .code(202)
        .header("location", `/v1/datasets/${ds.name}/cleanup/jobs/${answer.job.id}`)
        .send(answer);
    },
  );

  app.get(
    "/v1/datasets/:dataset/cleanup/jobs",
    {
      config: { role: "reader" },
      schema: {
        summary: "Cleanup and recovery runs through any replica (kept on the store), newest first",
        tags: ["cleanup"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: CleanupJobsShape }),
      },
    },
    (request) => listJobsRoute(deps, datasetOf(deps, request)),
  );

  app.get(
    "/v1/datasets/:dataset/cleanup/jobs/:jobId",
    {
      config: { role: "reader" },
      schema: {
        summary: "One cleanup job",
        tags: ["cleanup"],
        security: BEARER,
        params: JobParams,
        response: withProblems({ 200: CleanupJobAcceptedShape }),
      },
    },
    (request) => getJobRoute(deps, datasetOf(deps, request), request.params.jobId),
  );

  app.get(
    "/v1/datasets/:dataset/cleanup/jobs/:jobId/events",
    {
      config: { role: "reader" },
      schema: {
        summary:
          "A job's progress as server-sent events: `progress` events, then one `done` (data: the job). Through the replica running it, every step; through another, its stored state until it ends",
        tags: ["cleanup"],
        security: BEARER,
        params: JobParams,
        produces: ["text/event-stream"],
        response: withProblems({ 200: z.string().describe("text/event-stream") }),
      },
    },
    (request, reply) => followJobRoute(deps, datasetOf(deps, request), request.params.jobId, reply),
  );

  app.post(
    "/v1/datasets/:dataset/recover",
    {
      config: { role: "admin" },
      schema: {
        summary: "Finish or undo interrupted work: retirements, tag and branch operations",
        tags: ["cleanup"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes.recover }),
      },
    },
    async (request, reply) => {
      const answer = await recoverRoute(deps, datasetOf(deps, request));
      return "status" in answer ? sendProblem(reply, answer) : answer;
    },
  );
}

/** `POST .../cleanup/plan`: a dry run (no writes but its clock probe), kept as the last plan. */
async function planRoute(deps: AppDeps, ds: DatasetEntry, policy: CleanupPolicyBody) {
  const { resolved } = await openServed(ds);
  const { stats } = await recoverAndCleanup(
    ds.ctx,
    { ...policy, dryRun: true },
    { format: resolved.format },
  );
  const answer = {
    ok: true as const,
    command: "cleanup" as const,
    location: ds.store.location,
    policy: { ...policy, dryRun: true },
    stats: statsBody(stats),
  };
  await deps.history.savePlan(ds, ds.ctx.ids.next(), {
    ...answer,
    plannedAt: new Date().toISOString(),
  });
  return answer;
}

/** `GET .../cleanup/plan`: the last plan made through any replica. */
async function lastPlanRoute(deps: AppDeps, ds: DatasetEntry) {
  const last = await deps.history.lastPlan(ds);
  if (!last) {
    throw holdfastError("not-found", "cleanup", `no plan of ${ds.name} yet`, {
      hint: "POST .../cleanup/plan with a policy",
    });
  }
  return last;
}

/** `POST .../cleanup/jobs`: answers once the job holds the dataset's cleanup lock. */
async function startJobRoute(deps: AppDeps, ds: DatasetEntry, policy: CleanupPolicyBody) {
  await openServed(ds);
  const { job } = await deps.jobs.start(ds, "cleanup", "api", policy);
  return { ok: true as const, command: "cleanup job" as const, job };
}

/** `GET .../cleanup/jobs`: newest first, from the store. */
async function listJobsRoute(deps: AppDeps, ds: DatasetEntry) {
  return { ok: true as const, command: "cleanup jobs" as const, jobs: await deps.jobs.list(ds) };
}

/** `GET .../cleanup/jobs/:jobId`. */
async function getJobRoute(deps: AppDeps, ds: DatasetEntry, jobId: string) {
  const job = await deps.jobs.get(ds, jobId);
  if (!job) throw noJob(jobId);
  return { ok: true as const, command: "cleanup job" as const, job };
}

/**
 * `GET .../cleanup/jobs/:jobId/events`: server-sent events, every step through the replica
 * running the job, its stored state until it ends through another.
 */
async function followJobRoute(deps: AppDeps, ds: DatasetEntry, jobId: string, reply: FastifyReply) {
  const job = await deps.jobs.get(ds, jobId);
  if (!job) throw noJob(jobId);
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const send = (event: JobEvent) => {
    raw.write(`event: ${event.type}\ndata: ${JSON.stringify(event.job)}\n\n`);
  };
  if (job.state !== "running") {
    send({ type: "done", job });
    raw.end();
    return;
  }
  deps.streams.add(raw);
  send({ type: "progress", job });
  const unsubscribe = deps.jobs.isLive(job.id)
    ? deps.jobs.subscribe(job.id, (event) => {
        send(event);
        if (event.type === "done") close();
      })
    : followStored(deps, ds, job.id, (event) => {
        send(event);
        if (event.type === "done") close();
      });
  const close = () => {
    unsubscribe();
    deps.streams.delete(raw);
    if (!raw.writableEnded) raw.end();
  };
  raw.on("close", close);
}

/** `POST .../recover`: a recovery job, answered when it ends (a failure as its problem). */
async function recoverRoute(deps: AppDeps, ds: DatasetEntry) {
  await openServed(ds);
  const { finished } = await deps.jobs.start(ds, "recover", "api", null);
  const job = await finished;
  if (job.stats === null) {
    return job.error ?? problemFor(new Error("recovery failed"));
  }
  const stats = job.stats;
  return {
    ok: true as const,
    command: "recover" as const,
    location: ds.store.location,
    references: job.references ?? {},
    referenceKeys: job.referenceKeys ?? {},
    retirements: stats.recovered,
    retired: stats.retired,
    finished: (stats as { finished?: { branch: string; version: number }[] }).finished ?? [],
    objectsDeleted: stats.objectsDeleted,
    bytesDeleted: stats.bytesDeleted,
    warnings: stats.warnings,
  };
}

// --- utils ---

function noJob(id: string): Error {
  return holdfastError("not-found", "cleanup", `no cleanup job ${id}`, {
    hint: "only the newest jobs are kept: list them with GET .../cleanup/jobs",
  });
}

/** How often a job running on another replica is re-read from the store. */
const FOLLOW_EVERY_MS = 1000;

/**
 * Follows a job another replica runs, through its records on the store: a `progress` event
 * when its stored state changes, then `done` once it ended (or was found lost). Returns the
 * function that stops following.
 */
function followStored(
  deps: AppDeps,
  ds: DatasetEntry,
  id: string,
  listener: (event: JobEvent) => void,
): () => void {
  let stopped = false;
  const timer = setInterval(() => {
    void deps.jobs.get(ds, id).then(
      (job) => {
        if (stopped || !job || job.state === "running") return;
        stopped = true;
        clearInterval(timer);
        listener({ type: "done", job });
      },
      () => undefined,
    );
  }, FOLLOW_EVERY_MS);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
