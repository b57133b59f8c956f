import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Problem } from "@holdfast/api-shapes";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import type { Role } from "./auth.js";
import type { DatasetEntry } from "./datasets.js";
import type { JobHistory } from "./job-history.js";
import type { JobRunner } from "./jobs.js";
import type { ServerMetrics } from "./metrics.js";
import { problem } from "./problem.js";

/** The Fastify instance with the zod type provider, as every route module receives it. */
export type ZodApp = FastifyInstance<
  Server,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** What route modules share. */
export interface AppDeps {
  readonly datasets: ReadonlyMap<string, DatasetEntry>;
  readonly metrics: ServerMetrics;
  readonly jobs: JobRunner;
  /** Job history and the last plan, on each dataset's store (shared by every replica). */
  readonly history: JobHistory;
  /** Open server-sent-event streams, ended on shutdown. */
  readonly streams: Set<ServerResponse>;
}

/** Per-route options: the least role that may call it (absent: public). */
export interface RouteAccess {
  role?: Role;
}

declare module "fastify" {
  interface FastifyContextConfig {
    role?: Role;
  }
  interface FastifyInstance {
    /** Every route registered (method, URL pattern, least role or null when public). */
    holdfastRoutes: readonly { method: string; url: string; role: string | null }[];
  }
  interface FastifyRequest {
    tokenName?: string;
  }
}

/** Finds the dataset a route names, or answers 404 (nothing is opened or written). */
export function datasetOf(deps: AppDeps, request: FastifyRequest): DatasetEntry {
  const name = (request.params as { dataset?: string }).dataset ?? "";
  const entry = deps.datasets.get(name);
  if (!entry) {
    throw Object.assign(new Error(`no dataset named ${JSON.stringify(name)}`), {
      problem: problem(
        404,
        "not-found",
        `no dataset named ${JSON.stringify(name)} on this server`,
        {
          hint: "list the served datasets with GET /v1/datasets",
        },
      ),
    });
  }
  return entry;
}

/** Sends a problem document with its status and media type. */
export function sendProblem(reply: FastifyReply, body: Problem): FastifyReply {
  return reply.code(body.status).type("application/problem+json").send(body);
}
