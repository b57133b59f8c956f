/**
 * The one storage error taxonomy. Backends translate every SDK failure into a
 * `HoldfastError` with one of these kinds; nothing above a backend sees an SDK error.
 */
export type HoldfastErrorKind =
  /** The precondition failed: 412, a create's "already exists", an if-match on an absent key. */
  | "conflict"
  /** S3's 409 ConditionalRequestConflict: another conditional write to the key (maybe our own earlier copy) is in flight. */
  | "in-flight"
  /** Authentication or authorization failed (401/403). A refusal only on a single-attempt client. */
  | "auth"
  /** Refused before applying: missing bucket/container, bad key, a scope's refusal. Nothing was written. */
  | "refused"
  /** The outcome of the request is not known: timeout, reset, 5xx, throttling. */
  | "ambiguous"
  /** A conditional request whose outcome stayed unknown after re-issue and read-back. */
  | "unresolved"
  /** The object (or version, reference, lease) does not exist. */
  | "not-found"
  /** Malformed input rejected before anything was written. */
  | "invalid-input"
  /** The store or backend cannot do what was asked (e.g. ignores If-None-Match). */
  | "unsupported"
  /** The caller's AbortSignal fired before an answer arrived. */
  | "aborted";

/** Every {@link HoldfastErrorKind}: the taxonomy is closed. */
export const HOLDFAST_ERROR_KINDS: readonly HoldfastErrorKind[] = [
  "conflict",
  "in-flight",
  "auth",
  "refused",
  "ambiguous",
  "unresolved",
  "not-found",
  "invalid-input",
  "unsupported",
  "aborted",
];

/** The request or step an error belongs to (store operations, plus `probe`, `open`, `validate`, or a package's own). */
export type StorageOperation =
  | "get"
  | "head"
  | "put"
  | "delete"
  | "deleteMany"
  | "list"
  | "probe"
  | "open"
  | "validate"
  | (string & {});

/** Structured fields of a holdfast error; tests assert these, never message text. */
export interface HoldfastErrorFields {
  kind: HoldfastErrorKind;
  operation: StorageOperation;
  key?: string | undefined;
  /** The precondition of the request, where there was one. */
  precondition?: { ifNoneMatch: "*" } | { ifMatch: string } | undefined;
  /** HTTP status (or errno-like code) the store answered, when known. */
  status?: number | undefined;
  /** The store's own error code (e.g. `PreconditionFailed`, `BlobAlreadyExists`, `EEXIST`). */
  code?: string | undefined;
  /** Short advice for a person. */
  hint?: string | undefined;
  cause?: unknown;
}

/**
 * Where a storage request failed: what a backend's translation of its SDK's failures
 * needs besides the failure itself (the error's operation, key and precondition fields).
 */
export interface StorageErrorContext {
  /** The request that failed. */
  operation: StorageOperation;
  /** Its key, when it names one. */
  key?: string | undefined;
  /** Its precondition, when it sent one (a conflict is judged against it). */
  precondition?: HoldfastErrorFields["precondition"];
}

/** Every error holdfast raises on purpose. Check with {@link isHoldfastError}. */
export class HoldfastError extends Error {
  override readonly name = "HoldfastError";
  readonly kind: HoldfastErrorKind;
  readonly operation: StorageOperation;
  readonly key: string | undefined;
  readonly precondition: HoldfastErrorFields["precondition"];
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly hint: string | undefined;

  constructor(message: string, fields: HoldfastErrorFields) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.kind = fields.kind;
    this.operation = fields.operation;
    this.key = fields.key;
    this.precondition = fields.precondition;
    this.status = fields.status;
    this.code = fields.code;
    this.hint = fields.hint;
  }

  /** A plain object for `--json` output and logs (no cause chain, no stack). */
  toJSON(): Record<string, unknown> {
    return {
      name: this.name,
      kind: this.kind,
      operation: this.operation,
      key: this.key,
      status: this.status,
      code: this.code,
      message: this.message,
      hint: this.hint,
    };
  }
}

/** True for a {@link HoldfastError} (optionally of one of `kinds`); checks `name` too, so copies from another module instance count. */
export function isHoldfastError(
  value: unknown,
  ...kinds: HoldfastErrorKind[]
): value is HoldfastError {
  if (!(value instanceof Error) || value.name !== "HoldfastError") return false;
  const kind = (value as { kind?: unknown }).kind;
  if (typeof kind !== "string" || !HOLDFAST_ERROR_KINDS.includes(kind as HoldfastErrorKind)) {
    return false;
  }
  return kinds.length === 0 || kinds.includes(kind as HoldfastErrorKind);
}

/** Shorthand constructor used across packages. */
export function holdfastError(
  kind: HoldfastErrorKind,
  operation: StorageOperation,
  message: string,
  fields: Omit<HoldfastErrorFields, "kind" | "operation"> = {},
): HoldfastError {
  return new HoldfastError(message, { kind, operation, ...fields });
}

/**
 * Node's codes of a connection that failed before any byte of a request was sent: the TCP
 * connect refused (nothing listens there) or the host name not resolved. A reset, a timeout
 * or a closed socket after connecting are not among them: those may follow a request the
 * store received.
 */
const NOTHING_SENT_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN"]);

/**
 * The code when `error` is a connection that failed before anything was sent (its own
 * `code`, its `cause`'s, or every error of an AggregateError, as Node reports trying each
 * address of a host); else `undefined`. Says nothing about earlier attempts of the same
 * request: a backend whose client retries calls {@link markNothingSent} only when every
 * attempt failed so.
 */
export function connectFailureCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown } | null | undefined;
  if (typeof e !== "object" || e === null) return undefined;
  if (typeof e.code === "string" && NOTHING_SENT_CODES.has(e.code)) return e.code;
  if (Array.isArray(e.errors) && e.errors.length > 0) {
    const codes = e.errors.map((inner) => connectFailureCode(inner));
    if (codes.every((c) => c !== undefined)) return codes[0];
    return undefined;
  }
  return e.cause !== undefined && e.cause !== error ? connectFailureCode(e.cause) : undefined;
}

const nothingSentErrors = new WeakSet<object>();

/** Records that no attempt of the request that failed with `error` reached the store. */
export function markNothingSent(error: unknown): void {
  if (typeof error === "object" && error !== null) nothingSentErrors.add(error);
}

/** Whether a backend recorded that no attempt of the failed request reached the store ({@link markNothingSent}). */
export function wasNothingSent(error: unknown): boolean {
  return typeof error === "object" && error !== null && nothingSentErrors.has(error);
}

/** The hint of a refusal because the store could not be reached at all. */
export const UNREACHABLE_HINT =
  "nothing was sent: check the endpoint (--endpoint, the account or host in the URL) and that the store is running and reachable from here";
