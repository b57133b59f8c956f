// The S3 backend's answers and failures, translated into holdfast's terms.
import {
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  type StorageErrorContext,
  type StorageOperation,
  UNREACHABLE_HINT,
  wasNothingSent,
} from "@holdfast/conditional-store";

/**
 * The one translation of S3 SDK failures into holdfast's taxonomy. Classifies by the
 * error's `name` (S3's error code) and `$metadata.httpStatusCode`, never by message text:
 * RGW's error bodies can lack `<Message>`.
 */
export function toHoldfastError(error: unknown, context: StorageErrorContext): HoldfastError {
  if (isHoldfastError(error)) return error;
  const { operation, key, precondition } = context;
  const e = (typeof error === "object" && error !== null ? error : {}) as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  const name = typeof e.name === "string" ? e.name : "Error";
  const status =
    typeof e.$metadata?.httpStatusCode === "number" ? e.$metadata.httpStatusCode : undefined;
  const errno = typeof e.code === "string" ? e.code : undefined;
  const code = name !== "Error" ? name : errno;
  const fields = { key, precondition, status, code, cause: error };
  const where = key === undefined ? operation : `${operation} ${key}`;
  const detail = `${code ?? "error"}${status === undefined ? "" : ` (HTTP ${status})`}`;
  const make = (kind: HoldfastError["kind"], why: string, hint?: string) =>
    holdfastError(kind, operation, `${where}: ${why}: ${detail}`, {
      ...fields,
      ...(hint === undefined ? {} : { hint }),
    });

  if (name === "AbortError") return make("aborted", "aborted by the caller");
  // Every attempt failed to connect (refused, or the host not resolved): nothing reached
  // the store, so nothing was written (s3.ts and signed-request.ts record it per attempt).
  if (wasNothingSent(error)) return make("refused", "could not connect", UNREACHABLE_HINT);
  if (status === 412 || name === "PreconditionFailed") {
    return make("conflict", "precondition failed");
  }
  if (name === "ConditionalRequestConflict" || (status === 409 && operation === "put")) {
    // Another conditional write to this key is in flight, possibly our own earlier copy.
    return make("in-flight", "a conditional write to the key is in flight");
  }
  if (name === "NoSuchBucket") {
    return make(
      "refused",
      "the bucket does not exist",
      "create the bucket first; holdfast never creates buckets",
    );
  }
  if (status === 404 || name === "NoSuchKey" || name === "NotFound") {
    // AWS answers 404 to If-Match on an absent key: the precondition failed, nothing was written.
    if (precondition !== undefined) return make("conflict", "the object does not exist");
    return make("not-found", "no such object");
  }
  if (
    status === 401 ||
    status === 403 ||
    /^(AccessDenied|InvalidAccessKeyId|SignatureDoesNotMatch|ExpiredToken|InvalidToken|TokenRefreshRequired|CredentialsProviderError|InvalidClientTokenId)$/.test(
      name,
    )
  ) {
    return make(
      "auth",
      "not authorized",
      "check the credentials (AWS default chain or the credentials option) and the bucket policy",
    );
  }
  if (status === 501 || name === "NotImplemented") {
    return make("unsupported", "the store does not implement this request");
  }
  if (name === "RequestTimeout") {
    // S3 answers 400 RequestTimeout when the upload stalled: the outcome is unknown.
    return make("ambiguous", "the request timed out");
  }
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return make("refused", "the store refused the request");
  }
  // Throttling (503 SlowDown, 429), 5xx, timeouts, resets and socket errors after an
  // attempt connected: unknown outcome.
  return make("ambiguous", "no definite answer");
}

/** The SDK's send options for a caller's signal. */
export function sendOptions(signal: AbortSignal | undefined): { abortSignal?: AbortSignal } {
  return signal === undefined ? {} : { abortSignal: signal };
}

/** ETags travel quoted (and sometimes weak-prefixed); holdfast compares them bare. */
export function bareEtag(etag: string): string {
  return etag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}

/** The bare ETag of an answer, or an `ambiguous` error when the answer carried none. */
export function requireEtag(
  etag: string | undefined,
  operation: StorageOperation,
  key: string,
): string {
  if (etag === undefined || etag === "") {
    throw holdfastError("ambiguous", operation, `${operation} ${key}: the answer carried no ETag`, {
      key,
    });
  }
  return bareEtag(etag);
}

/** The Last-Modified of an answer, or an `ambiguous` error when the answer carried none. */
export function requireDate(
  date: Date | undefined,
  operation: StorageOperation,
  key: string,
): Date {
  if (!(date instanceof Date) || Number.isNaN(date.getTime())) {
    throw holdfastError(
      "ambiguous",
      operation,
      `${operation} ${key}: the answer carried no Last-Modified`,
      { key },
    );
  }
  return date;
}
