// The Azure backend's answers and failures, translated into holdfast's terms.
import {
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  type Precondition,
  type StorageErrorContext,
  type StorageOperation,
} from "@holdfast/conditional-store";

/**
 * The one place Azure failures become holdfast errors (docs/guarantees.md, conditional requests):
 * 412 and 409 BlobAlreadyExists → conflict; a 409 answering an if-match (reported from some
 * emulators) → conflict; 404 BlobNotFound → not-found (conflict under if-match);
 * ContainerNotFound → refused; 401/403 → auth; other 4xx → refused; 408, 429, 5xx, timeouts
 * and resets → ambiguous (the request may have applied).
 */
export function toHoldfastError(error: unknown, context: StorageErrorContext): HoldfastError {
  if (isHoldfastError(error)) return error;
  const { operation, key, precondition } = context;
  const where = key === undefined ? operation : `${operation} ${key}`;
  const failure = (error ?? {}) as {
    name?: unknown;
    statusCode?: unknown;
    code?: unknown;
    details?: { errorCode?: unknown } | undefined;
    message?: unknown;
  };
  const fields = (status: number | undefined, code: string | undefined, hint?: string) => ({
    key,
    precondition,
    status,
    code,
    cause: error,
    ...(hint === undefined ? {} : { hint }),
  });
  if (failure.name === "AbortError") {
    return holdfastError("aborted", operation, `${where}: aborted`, fields(undefined, undefined));
  }
  const status = typeof failure.statusCode === "number" ? failure.statusCode : undefined;
  // HEAD answers carry the code only in x-ms-error-code, which the SDK puts in `details`.
  const rawCode = failure.details?.errorCode ?? failure.code;
  const code = typeof rawCode === "string" ? rawCode : undefined;
  const message = typeof failure.message === "string" ? failure.message.split("\n")[0] : "";
  const describe = `${where}: ${status ?? "no answer"}${code ? ` ${code}` : ""}${message ? ` (${message})` : ""}`;

  if (status === undefined) {
    // Reset, timeout, refused connection, DNS: the request may or may not have reached Azure.
    return holdfastError("ambiguous", operation, describe, fields(status, code));
  }
  if (status === 412) return holdfastError("conflict", operation, describe, fields(status, code));
  if (status === 409) {
    if (code === "BlobAlreadyExists" || precondition !== undefined) {
      return holdfastError("conflict", operation, describe, fields(status, code));
    }
    return holdfastError("refused", operation, describe, fields(status, code));
  }
  if (status === 404) {
    if (code === "ContainerNotFound") {
      return holdfastError(
        "refused",
        operation,
        describe,
        fields(status, code, "create the container first; holdfast never creates containers"),
      );
    }
    // An if-match on an absent blob is a failed precondition.
    if (precondition !== undefined && "ifMatch" in precondition) {
      return holdfastError("conflict", operation, describe, fields(status, code));
    }
    return holdfastError("not-found", operation, describe, fields(status, code));
  }
  if (status === 401 || status === 403) {
    return holdfastError(
      "auth",
      operation,
      describe,
      fields(status, code, "check the account key, SAS or token and its permissions"),
    );
  }
  if (status === 408 || status === 429 || status >= 500) {
    return holdfastError("ambiguous", operation, describe, fields(status, code));
  }
  return holdfastError("refused", operation, describe, fields(status, code));
}

/** Azure conditions for a precondition; ETags are sent quoted, as the service documents. */
export function toConditions(
  precondition: Precondition | undefined,
): { conditions: { ifNoneMatch: string } | { ifMatch: string } } | Record<string, never> {
  if (precondition === undefined) return {};
  if ("ifNoneMatch" in precondition) return { conditions: { ifNoneMatch: "*" } };
  return { conditions: { ifMatch: `"${bareEtag(precondition.ifMatch)}"` } };
}

/** The SDK's options reject an explicit `abortSignal: undefined`. */
export function withSignal(
  signal: AbortSignal | undefined,
): { abortSignal: AbortSignal } | Record<string, never> {
  return signal === undefined ? {} : { abortSignal: signal };
}

/** Headers quote ETags and listings do not; holdfast hands out the bare form everywhere. */
export function bareEtag(etag: string | undefined): string {
  if (etag === undefined) return "";
  return etag.replace(/^W\//, "").replace(/^"|"$/g, "");
}

/** The Last-Modified of an answer, or an `ambiguous` error when the answer carried none. */
export function requireDate(
  value: Date | undefined,
  operation: StorageOperation,
  key: string,
): Date {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value;
  throw holdfastError("ambiguous", operation, `${operation} ${key}: answer lacked Last-Modified`, {
    key,
  });
}
