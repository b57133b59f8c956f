// The GCS backend's answers and failures, translated into holdfast's terms.
import {
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  type Precondition,
  type StorageErrorContext,
  type StorageOperation,
} from "@holdfast/conditional-store";

/**
 * The one place GCS failures become holdfast errors (docs/guarantees.md, conditional requests):
 * 412 → conflict (a failed `ifGenerationMatch`); 404 → not-found, except that a 404 under an
 * if-match is a conflict (the object is absent) and a 404 on an upload or a listing is a
 * missing bucket, `refused`; 401/403 and missing credentials → auth; 408, 409, 429, 5xx,
 * timeouts and resets → ambiguous (the request may have applied); other 4xx → refused.
 */
export function toHoldfastError(error: unknown, context: StorageErrorContext): HoldfastError {
  if (isHoldfastError(error)) return error;
  const { operation, key, precondition } = context;
  const where = key === undefined ? operation : `${operation} ${key}`;
  const failure = (error ?? {}) as {
    name?: unknown;
    code?: unknown;
    status?: unknown;
    response?: { status?: unknown; statusCode?: unknown } | undefined;
    errors?: { reason?: unknown }[] | undefined;
    message?: unknown;
  };
  const message = typeof failure.message === "string" ? (failure.message.split("\n")[0] ?? "") : "";
  const status =
    typeof failure.code === "number"
      ? failure.code
      : typeof failure.status === "number"
        ? failure.status
        : typeof failure.response?.status === "number"
          ? failure.response.status
          : typeof failure.response?.statusCode === "number"
            ? failure.response.statusCode
            : undefined;
  const reason = failure.errors?.find((e) => typeof e.reason === "string")?.reason as
    | string
    | undefined;
  const code = typeof failure.code === "string" ? failure.code : reason;
  const describe = `${where}: ${status ?? "no answer"}${code ? ` ${code}` : ""}${message ? ` (${message})` : ""}`;
  const fields = (hint?: string) => ({
    key,
    precondition,
    status,
    code,
    cause: error,
    ...(hint === undefined ? {} : { hint }),
  });

  if (failure.name === "AbortError") {
    return holdfastError("aborted", operation, `${where}: aborted`, fields());
  }
  if (status === undefined) {
    // google-auth-library found no credentials: nothing was sent.
    if (/default credentials|Could not refresh access token|invalid_grant/i.test(message)) {
      return holdfastError(
        "auth",
        operation,
        describe,
        fields(
          "set up Application Default Credentials (gcloud auth application-default login, GOOGLE_APPLICATION_CREDENTIALS, or a service account), or STORAGE_EMULATOR_HOST for an emulator",
        ),
      );
    }
    // Reset, timeout, refused connection, DNS: the request may or may not have reached GCS.
    return holdfastError("ambiguous", operation, describe, fields());
  }
  if (status === 412) return holdfastError("conflict", operation, describe, fields());
  if (status === 404) {
    // An if-match on an absent object is a failed precondition.
    if (precondition !== undefined && "ifMatch" in precondition) {
      return holdfastError("conflict", operation, describe, fields());
    }
    // An upload or a listing answered 404 names a missing bucket: nothing was written.
    if (operation === "put" || operation === "list") {
      return holdfastError(
        "refused",
        operation,
        describe,
        fields("create the bucket first; holdfast never creates buckets"),
      );
    }
    return holdfastError("not-found", operation, describe, fields());
  }
  if (status === 401 || status === 403) {
    return holdfastError(
      "auth",
      operation,
      describe,
      fields("check the credentials and their roles (roles/storage.objectUser on the bucket)"),
    );
  }
  // 409: another request changed the object meanwhile; ours may or may not have applied.
  if (status === 408 || status === 409 || status === 429 || status >= 500) {
    return holdfastError("ambiguous", operation, describe, fields());
  }
  return holdfastError("refused", operation, describe, fields());
}

/**
 * The `ifGenerationMatch` value for a precondition: 0 for create-only, the generation for
 * if-match. An ETag that is no generation (GCS generations are positive integers) can never
 * match, so it fails as a conflict before anything is sent.
 */
export function toGenerationMatch(
  precondition: Precondition | undefined,
  operation: StorageOperation,
  key: string,
): number | undefined {
  if (precondition === undefined) return undefined;
  if ("ifNoneMatch" in precondition) return 0;
  const etag = precondition.ifMatch;
  if (!/^[1-9]\d{0,18}$/.test(etag)) {
    throw holdfastError(
      "conflict",
      operation,
      `${operation} ${key}: ETag ${JSON.stringify(etag)} is no GCS generation, so it matches no object`,
      { key, precondition, hint: "pass an ETag this store returned (the object's generation)" },
    );
  }
  // Generations are microsecond timestamps (16 digits), within Number's exact integers.
  const generation = Number(etag);
  if (!Number.isSafeInteger(generation)) {
    throw holdfastError("conflict", operation, `${operation} ${key}: generation out of range`, {
      key,
      precondition,
    });
  }
  return generation;
}

/** The generation of an answer as holdfast's ETag, or `ambiguous` when the answer carried none. */
export function requireGeneration(
  value: unknown,
  operation: StorageOperation,
  key: string,
): string {
  const text = typeof value === "number" ? String(value) : value;
  if (typeof text === "string" && /^[1-9]\d*$/.test(text)) return text;
  throw holdfastError("ambiguous", operation, `${operation} ${key}: answer lacked a generation`, {
    key,
  });
}

/** A timestamp of an answer (`updated` or Last-Modified), or `ambiguous` when it carried none. */
export function requireDate(value: unknown, operation: StorageOperation, key: string): Date {
  const date =
    value instanceof Date ? value : typeof value === "string" ? new Date(value) : undefined;
  if (date !== undefined && !Number.isNaN(date.getTime())) return date;
  throw holdfastError("ambiguous", operation, `${operation} ${key}: answer lacked its time`, {
    key,
  });
}

/**
 * Runs one client call under the caller's signal. The client takes no signal: an aborted
 * signal sends nothing, and one that fires in flight rejects at once with kind `aborted`
 * (the request itself may still complete, as a lost answer would).
 */
export async function withAbort<T>(
  signal: AbortSignal | undefined,
  operation: StorageOperation,
  key: string | undefined,
  call: () => Promise<T>,
): Promise<T> {
  const aborted = () =>
    holdfastError(
      "aborted",
      operation,
      `${key === undefined ? operation : `${operation} ${key}`}: aborted by the caller`,
      { key, cause: signal?.reason },
    );
  if (signal === undefined) return call();
  if (signal.aborted) throw aborted();
  let onAbort: (() => void) | undefined;
  const abort = new Promise<never>((_, reject) => {
    onAbort = () => reject(aborted());
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([call(), abort]);
  } finally {
    if (onAbort !== undefined) signal.removeEventListener("abort", onAbort);
  }
}
