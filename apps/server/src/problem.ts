import type { Problem } from "@holdfast/api-shapes";
import { type HoldfastErrorKind, isHoldfastError } from "@holdfast/conditional-store";

/** Media type of every error answer (RFC 9457). */
export const PROBLEM_TYPE = "application/problem+json";

/** Error codes the protocol packages use for "refused: the version is being retired". */
const RETIRING_CODES = new Set(["RETIRING", "SEALED", "COMMITTED", "DRAINING"]);

/**
 * HTTP status for a holdfast error kind. Unknown outcomes are 502 with kind `unresolved`:
 * never reported as success or failure (invariant 5), the client must recover first.
 */
export function statusForKind(kind: HoldfastErrorKind | "internal"): number {
  switch (kind) {
    case "invalid-input":
      return 400;
    case "not-found":
      return 404;
    case "conflict":
    case "in-flight":
    case "refused":
      return 409;
    case "unsupported":
      return 501;
    case "unresolved":
    case "ambiguous":
    case "auth":
      return 502;
    case "aborted":
      return 503;
    case "internal":
      return 500;
  }
}

/** Builds a problem document. */
export function problem(
  status: number,
  kind: string,
  detail: string,
  extra: { hint?: string | undefined; code?: string | undefined; instance?: string } = {},
): Problem {
  return {
    type: `https://holdfast.dev/problems/${kind}`,
    title: TITLES[status] ?? "Error",
    status,
    detail,
    kind,
    ...(extra.hint === undefined ? {} : { hint: extra.hint }),
    ...(extra.code === undefined ? {} : { code: extra.code }),
    ...(extra.instance === undefined ? {} : { instance: extra.instance }),
  };
}

/** Maps any thrown value to a problem document; messages of internal errors are not leaked. */
export function problemFor(error: unknown, instance?: string): Problem {
  if (isHoldfastError(error)) {
    const status =
      error.kind === "refused" && error.code !== undefined && RETIRING_CODES.has(error.code)
        ? 409
        : statusForKind(error.kind);
    return problem(status, error.kind, error.message, {
      hint: error.hint,
      code: error.code,
      ...(instance === undefined ? {} : { instance }),
    });
  }
  return problem(500, "internal", "internal server error", {
    hint: "see the server log for the cause",
    ...(instance === undefined ? {} : { instance }),
  });
}

const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
};
