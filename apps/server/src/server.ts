import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import fastifyRateLimit from "@fastify/rate-limit";
import fastifyStatic from "@fastify/static";
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import { isHoldfastError, systemClock } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import Fastify, { type FastifyServerOptions } from "fastify";
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { type AppDeps, sendProblem, type ZodApp } from "./app.js";
import { matchToken, roleAllows, type TokenEntry } from "./auth.js";
import {
  DEFAULT_FAILED_AUTH_LIMIT,
  type FailedAuthLimit,
  FailedAuthLimiter,
} from "./auth-limit.js";
import { type DatasetSource, openDatasets } from "./datasets.js";
import { JobHistory } from "./job-history.js";
import { JobRunner } from "./jobs.js";
import { ServerMetrics } from "./metrics.js";
import { PROBLEM_TYPE, problem, problemFor } from "./problem.js";
import { RevokedTokens } from "./revocations.js";
import { registerBranchRoutes } from "./routes/branches.js";
import { registerCleanupRoutes } from "./routes/cleanup.js";
import { registerDatasetRoutes } from "./routes/datasets.js";
import { registerFileRoutes } from "./routes/files.js";
import { registerLeaseRoutes } from "./routes/leases.js";
import { registerOpsRoutes } from "./routes/ops.js";
import { registerTagRoutes } from "./routes/tags.js";
import { registerUsageRoutes } from "./routes/usage.js";
import { registerVersionRoutes } from "./routes/versions.js";
import { type ScheduleEntry, startSchedules, validateSchedules } from "./schedule.js";

/** Everything `buildServer` needs. Only `datasets` and `tokens` are required. */
export interface ServerConfig {
  /** The datasets to serve, each with its (already opened) store. */
  readonly datasets: readonly DatasetSource[];
  /** Accepted bearer tokens (hashes), e.g. from `loadTokens(file)`. */
  readonly tokens: readonly TokenEntry[];
  /** Name of this replica in job records and the cleanup lock. @default a random UUID */
  readonly replicaId?: string | undefined;
  /** Largest data file `POST .../files` takes, in bytes. @default 64 MiB */
  readonly uploadLimitBytes?: number | undefined;
  /** Largest request body, in bytes (JSON routes). @default 65536 */
  readonly bodyLimitBytes?: number | undefined;
  /** Requests per token (or per address without one) per window; `false` turns limits off. @default 600 per minute */
  readonly rateLimit?: { readonly max: number; readonly windowMs: number } | false | undefined;
  /** Origins allowed by CORS. @default none (CORS off) */
  readonly corsOrigins?: readonly string[] | undefined;
  /** TLS key and certificate (PEM); without them the server speaks plain HTTP. */
  readonly https?: { readonly key: string | Buffer; readonly cert: string | Buffer } | undefined;
  /** pino logger options, or false. @default { level: "info" } */
  readonly logger?: FastifyServerOptions["logger"] | undefined;
  /** Scheduled cleanup and recovery per dataset. @default none */
  readonly schedules?: readonly ScheduleEntry[] | undefined;
  /** Storage-time bound of the cleanup lock and run records (a dead holder's lock is taken over after it). @default the cleanup package's, 60 s */
  readonly lockBoundMs?: number | undefined;
  /**
   * Most objects a cleanup job deletes per second, whatever its concurrency (Amazon S3
   * answers 503 SlowDown past about 3,500 per prefix): the cleanup's `maxDeletesPerSecond`.
   * @default no limit
   */
  readonly maxDeletesPerSecond?: number | undefined;
  /** Batch deletes a cleanup job has in flight at once: the cleanup's `deleteConcurrency`. @default 8 */
  readonly deleteConcurrency?: number | undefined;
  /** Cleanup jobs kept per dataset in the history on the store (older ones are deleted). @default 50 */
  readonly historySize?: number | undefined;
  /** Directory of the built dashboard. @default the package's `dist/web`, when built */
  readonly dashboardDir?: string | null | undefined;
  /**
   * Failed authentications (unknown or malformed bearer tokens) allowed per client address
   * per window; past it every authenticated request from the address is a 429 until the
   * window ends. `false` turns it off. @default 10 per minute
   */
  readonly failedAuthLimit?: FailedAuthLimit | false | undefined;
  /** How often the revoked-token list is re-read from each dataset's store, at most. @default 10000 */
  readonly revocationRefreshMs?: number | undefined;
  /** Clock, ids and sleep for the protocol (tests). @default production ones */
  readonly context?: Partial<Omit<ProtocolContext, "store">> | undefined;
}

/**
 * Builds the holdfast HTTP server (not yet listening: call `listen`, or `inject` in tests).
 * It keeps no state of its own: leases, references, retirements and even cleanup job history
 * live on the store, so any number of replicas can serve one bucket.
 */
export async function buildServer(config: ServerConfig): Promise<ZodApp> {
  validateSchedules(config.schedules ?? [], new Set(config.datasets.map((d) => d.name)));
  const https = config.https;
  const app = Fastify({
    logger: config.logger ?? { level: "info" },
    bodyLimit: config.bodyLimitBytes ?? 64 * 1024,
    // find-my-way refuses longer path parameters (default 100, then 414): every name a route
    // takes is documented up to 128 characters (tags, branches, datasets).
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    // Errors the router raises before any route or hook runs, as problem documents too.
    frameworkErrors: (error, _request, reply) => {
      sendProblem(reply, frameworkProblem(error));
    },
    // A request Node's HTTP parser refuses (bad request line, oversized headers): the
    // socket still gets a problem document before it is closed.
    clientErrorHandler: answerClientError,
    ...(https === undefined ? {} : { https: { key: https.key, cert: https.cert } }),
    // In-flight requests finish on close; idle keep-alive connections are closed at once.
    forceCloseConnections: "idle",
  }).withTypeProvider<ZodTypeProvider>() as unknown as ZodApp;
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // Bodies are JSON only: any other media type is a 415 before a handler runs.
  app.removeContentTypeParser("text/plain");

  const metrics = new ServerMetrics();
  const replica = config.replicaId ?? randomUUID();
  const history = new JobHistory({ jobs: config.historySize ?? 50, plans: 5 }, (error, what) =>
    app.log.warn({ err: error }, `job history: ${what} failed`),
  );
  const deps: AppDeps = {
    datasets: openDatasets(config.datasets, metrics, config.context),
    metrics,
    jobs: new JobRunner(replica, metrics, history, {
      lockBoundMs: config.lockBoundMs,
      maxDeletesPerSecond: config.maxDeletesPerSecond,
      deleteConcurrency: config.deleteConcurrency,
      onHistoryError: (error) => app.log.warn({ err: error }, "run history: summary not written"),
    }),
    history,
    streams: new Set<ServerResponse>(),
  };

  // Every route as registered, for the OpenAPI coverage test and the dashboard's API list.
  const routes: { method: string; url: string; role: string | null }[] = [];
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method === "HEAD") continue;
      routes.push({ method, url: route.url, role: route.config?.role ?? null });
    }
  });
  app.decorate("holdfastRoutes", routes);
  installErrorHandling(app, deps);
  const clock = config.context?.clock ?? systemClock;
  const revoked = new RevokedTokens(
    deps.datasets,
    clock,
    config.revocationRefreshMs ?? 10_000,
    (error) => app.log.warn({ err: error }, "reading the revoked tokens failed"),
  );
  // First read at start, so requests do not wait for it (a failure is retried on use).
  await revoked.current().catch(() => undefined);
  const failedAuth =
    config.failedAuthLimit === false
      ? null
      : new FailedAuthLimiter(config.failedAuthLimit ?? DEFAULT_FAILED_AUTH_LIMIT, clock);
  installAuth(app, config.tokens, revoked, failedAuth);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "holdfast",
        version: "1",
        description:
          "Leases, tags, branches and safe cleanup of versioned datasets on object storage. Every data route takes `Authorization: Bearer <token>`; errors are RFC 9457 problem documents.",
      },
      components: {
        securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } },
      },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(fastifySwaggerUi, { routePrefix: "/docs" });
  if (config.rateLimit !== false) {
    const limit = config.rateLimit ?? { max: 600, windowMs: 60_000 };
    await app.register(fastifyRateLimit, {
      global: true,
      max: limit.max,
      timeWindow: limit.windowMs,
      // After authentication, so each token has its own budget.
      hook: "preHandler",
      keyGenerator: (request) =>
        request.tokenName === undefined ? `ip:${request.ip}` : `token:${request.tokenName}`,
      errorResponseBuilder: (_request, context) =>
        Object.assign(new Error("rate limited"), {
          statusCode: 429,
          problem: problem(
            429,
            "rate-limited",
            `more than ${context.max} requests in ${context.after}`,
            {
              hint: `retry after ${context.after}`,
            },
          ),
        }),
    });
  }
  if (config.corsOrigins !== undefined && config.corsOrigins.length > 0) {
    const { default: fastifyCors } = await import("@fastify/cors");
    await app.register(fastifyCors, { origin: [...config.corsOrigins] });
  }

  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  // One module per route group, each route's handler a named function beside it.
  registerOpsRoutes(app, deps);
  registerFileRoutes(app, deps, config.uploadLimitBytes ?? 64 * 1024 * 1024);
  registerDatasetRoutes(app, deps);
  registerVersionRoutes(app, deps);
  registerLeaseRoutes(app, deps);
  registerTagRoutes(app, deps);
  registerBranchRoutes(app, deps);
  registerCleanupRoutes(app, deps);
  registerUsageRoutes(app, deps);
  await serveDashboard(app, config.dashboardDir);

  const schedules = startSchedules(config.schedules ?? [], deps, app.log);
  app.addHook("preClose", async () => {
    schedules.stop();
    for (const stream of deps.streams) stream.end();
    deps.streams.clear();
  });
  app.addHook("onClose", async () => {
    await deps.jobs.drain();
  });
  return app;
}

/** The longest path parameter the router takes: the longest documented name (`NameParam`, `DatasetParams`). */
export const MAX_PATH_PARAM_LENGTH = 128;

// --- utils ---

/** A problem document for an error the router raised (malformed percent-encoding, a too long parameter). */
function frameworkProblem(error: Error & { code?: string }) {
  switch (error.code) {
    case "FST_ERR_BAD_URL":
      return problem(400, "invalid-input", "the path is not valid percent-encoding", {
        code: "BAD_URL",
        hint: "percent-encode each path segment as UTF-8",
      });
    case "FST_ERR_MAX_PARAM_LENGTH":
      return problem(
        414,
        "invalid-input",
        `a path parameter is longer than ${MAX_PATH_PARAM_LENGTH} characters`,
        {
          code: "PARAM_TOO_LONG",
          hint: `names are 1..${MAX_PATH_PARAM_LENGTH} characters`,
        },
      );
    default:
      return problem(500, "internal", "internal server error", {
        hint: "see the server log for the cause",
      });
  }
}

/** Answers a request the HTTP parser refused with a problem document, then closes the socket. */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  const [status, detail] =
    error.code === "HPE_HEADER_OVERFLOW"
      ? [431, "the request headers are too large"]
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "the request did not arrive in time"]
        : [400, "the request is not valid HTTP"];
  const body = JSON.stringify(problem(status, "invalid-input", detail));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_TYPE}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Bearer tokens on every route that names a role; 401/403 as problem documents. A token
 * revoked on any served dataset's store is unknown; an address past its failed-auth limit
 * gets a 429 with Retry-After, whatever token it sends, until its window ends.
 */
function installAuth(
  app: ZodApp,
  tokens: readonly TokenEntry[],
  revoked: RevokedTokens,
  failedAuth: FailedAuthLimiter | null,
): void {
  app.decorateRequest("tokenName", undefined);
  app.addHook("onRequest", async (request, reply) => {
    const needed = request.routeOptions.config.role;
    if (needed === undefined) return;
    const address = request.ip;
    const blockedMs = failedAuth?.blockedFor(address) ?? 0;
    if (blockedMs > 0) {
      const seconds = Math.ceil(blockedMs / 1000);
      reply.header("retry-after", String(seconds));
      return sendProblem(
        reply,
        problem(
          429,
          "rate-limited",
          `too many failed authentications from ${address}: refused for ${seconds} s`,
          {
            code: "AUTH_RATE_LIMITED",
            hint: `retry after ${seconds} s with a valid token (holdfast token create)`,
          },
        ),
      );
    }
    let revokedNow: ReadonlySet<string>;
    try {
      revokedNow = await revoked.current();
    } catch (error) {
      request.log.error({ err: error }, "revoked tokens unreadable");
      return sendProblem(
        reply,
        problem(
          503,
          "unavailable",
          "the revoked tokens could not be read, so no token is accepted",
          {
            code: "REVOCATIONS_UNREADABLE",
            hint: "check the store (GET /readyz); requests are accepted again once it answers",
          },
        ),
      );
    }
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    const found = match?.[1] === undefined ? null : matchToken(tokens, match[1]);
    const entry = found && !revokedNow.has(found.sha256) ? found : null;
    if (!entry) {
      // A request without the header guesses nothing; any token presented and refused counts.
      if (header !== undefined) failedAuth?.recordFailure(address);
      reply.header("www-authenticate", 'Bearer realm="holdfast"');
      return sendProblem(
        reply,
        problem(
          401,
          "unauthenticated",
          header === undefined
            ? "no bearer token"
            : found
              ? `token ${found.name} was revoked`
              : "unknown bearer token",
          {
            hint: "send Authorization: Bearer <token> (create one with holdfast token create)",
          },
        ),
      );
    }
    request.tokenName = entry.name;
    if (!roleAllows(entry.role, needed)) {
      return sendProblem(
        reply,
        problem(
          403,
          "forbidden",
          `token ${entry.name} (${entry.role}) may not call this route: it needs ${needed}`,
          {
            hint: `ask for a ${needed} token`,
          },
        ),
      );
    }
  });
}

/** Every error becomes a problem document; unknown outcomes are counted. */
function installErrorHandling(app: ZodApp, deps: AppDeps): void {
  app.setErrorHandler((error: Error, request, reply) => {
    const route = request.routeOptions.url ?? "unknown";
    if (hasZodFastifySchemaValidationErrors(error)) {
      const issue = error.validation[0];
      const where = `${error.validationContext ?? "request"}${issue?.instancePath ?? ""}`;
      return sendProblem(
        reply,
        problem(400, "invalid-input", `${where}: ${issue?.message ?? "invalid"}`, {
          hint: "see the request schema in /openapi.json",
          code: validationCode(error.validation),
        }),
      );
    }
    const attached = (error as { problem?: ReturnType<typeof problem> }).problem;
    if (attached) return sendProblem(reply, attached);
    const status = (error as { statusCode?: number }).statusCode;
    if (!isHoldfastError(error) && status !== undefined && status >= 400 && status < 500) {
      const kind =
        status === 413 ? "too-large" : status === 415 ? "unsupported-media-type" : "invalid-input";
      return sendProblem(reply, problem(status, kind, error.message));
    }
    if (isHoldfastError(error, "unresolved") || isHoldfastError(error, "ambiguous")) {
      const dataset = (request.params as { dataset?: string } | undefined)?.dataset ?? "";
      deps.metrics.unresolved.inc({ dataset, route });
    }
    const body = problemFor(error, request.url);
    if (body.status >= 500) request.log.error({ err: error }, "request failed");
    return sendProblem(reply, body);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(
      reply,
      problem(404, "not-found", `no route ${request.method} ${request.url.split("?")[0]}`, {
        hint: "the routes are listed in /openapi.json",
      }),
    ),
  );
  app.addHook("onResponse", async (request, reply) => {
    deps.metrics.httpRequests.inc({
      route: request.routeOptions.url ?? "unmatched",
      method: request.method,
      status: String(reply.statusCode),
    });
  });
}

/**
 * The error code of a rejected request (`withErrorCode` in `@holdfast/api-shapes`): the
 * outermost coded schema around the first failure, so the problem carries the code the CLI
 * gives the same failure (INVALID_NAME, INVALID_TTL, INVALID_LEASE_HANDLE, ...).
 */
function validationCode(
  issues: readonly { instancePath: string; params: Record<string, unknown> }[],
): string | undefined {
  const first = issues[0]?.instancePath ?? "";
  let found: { path: string; code: string } | undefined;
  for (const issue of issues) {
    const code = (issue.params.params as { code?: unknown } | undefined)?.code;
    if (typeof code !== "string") continue;
    const path = issue.instancePath;
    const encloses = path === "/" || first === path || first.startsWith(`${path}/`);
    if (encloses && (found === undefined || path.length < found.path.length)) {
      found = { path, code };
    }
  }
  return found?.code;
}

/** Serves the built dashboard at `/` when it exists (it is public: it holds no data). */
async function serveDashboard(app: ZodApp, dir: string | null | undefined): Promise<void> {
  if (dir === null) return;
  const root = dir ?? fileURLToPath(new URL("../dist/web", import.meta.url));
  if (!existsSync(root)) return;
  await app.register(fastifyStatic, { root, prefix: "/", index: ["index.html"] });
}
