import {
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  type Precondition,
  type StorageOperation,
} from "@holdfast/conditional-store";

/**
 * Translates a node:fs failure into the holdfast taxonomy. A local put completes before
 * it answers, so everything but a precondition failure is a refusal, never ambiguous.
 */
export function toHoldfastError(
  error: unknown,
  operation: StorageOperation,
  key?: string,
  precondition?: Precondition,
): HoldfastError {
  if (isHoldfastError(error)) return error;
  const code = errnoCode(error);
  const message = error instanceof Error ? error.message : String(error);
  const fields = { key, precondition, code, cause: error };
  switch (code) {
    case "EEXIST":
      return precondition && "ifNoneMatch" in precondition
        ? holdfastError("conflict", operation, `object already exists: ${key}`, fields)
        : holdfastError("refused", operation, message, fields);
    case "ENOENT":
      return precondition && "ifMatch" in precondition
        ? holdfastError("conflict", operation, `if-match on absent object ${key}`, fields)
        : holdfastError("refused", operation, message, fields);
    case "EACCES":
    case "EPERM":
      return holdfastError("auth", operation, message, {
        ...fields,
        hint: "check the permissions of the store's root directory",
      });
    case "ENAMETOOLONG":
      return holdfastError("invalid-input", operation, message, fields);
    case "ENOTSUP":
    case "EOPNOTSUPP":
    case "EXDEV":
      return holdfastError("unsupported", operation, message, {
        ...fields,
        hint: "the local backend needs hard links, rename and file locks on one filesystem",
      });
    case "ABORT_ERR":
      return holdfastError("aborted", operation, message, fields);
    default:
      return holdfastError("refused", operation, message, fields);
  }
}

/** The errno code of a node:fs failure, if any. */
export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Throws `aborted` (nothing written) when the caller's signal has fired. */
export function checkSignal(
  signal: AbortSignal | undefined,
  operation: StorageOperation,
  key?: string,
  precondition?: Precondition,
): void {
  if (signal?.aborted) {
    throw holdfastError("aborted", operation, `${operation} aborted`, {
      key,
      precondition,
      cause: signal.reason,
    });
  }
}
