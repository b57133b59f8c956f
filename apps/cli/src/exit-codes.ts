import { type HoldfastErrorKind, isHoldfastError } from "@holdfast/conditional-store";

/**
 * Process exit codes, documented in the README. Scripts branch on these: a conflict is
 * worth retrying differently from an unknown outcome, which must be recovered first.
 */
export const ExitCode = {
  /** The command did what it said. */
  ok: 0,
  /** A definite failure: not found, refused, permission, a failed verification. */
  failure: 1,
  /** Bad command line or input (unknown flag, malformed URL, duration or name). Nothing was written. */
  usage: 2,
  /** A conditional write lost: the name exists, the version is being retired, a race was lost. */
  conflict: 3,
  /** The outcome is unknown (a lost answer that re-issue and read-back could not settle). Run `holdfast recover`. */
  unknown: 4,
  /** The store lacks a primitive holdfast needs (e.g. it ignores create-only puts). */
  unsupported: 5,
  /** Interrupted (Ctrl-C) before the command finished. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** The kind reported in `--json` for errors that are not holdfast errors (bugs, I/O surprises). */
export const INTERNAL_KIND = "internal";

/** Maps an error to its exit code; the typed kind decides, never the message. */
export function exitCodeFor(error: unknown): ExitCodeValue {
  if (!isHoldfastError(error)) return ExitCode.failure;
  // A lease or reference refused because its version is being retired lost a race with a
  // cleaner: for a script that is a conflict (try another version), not a broken store.
  if (error.kind === "refused" && error.code !== undefined && RETIRING_CODES.has(error.code)) {
    return ExitCode.conflict;
  }
  return exitCodeForKind(error.kind);
}

/** Error codes the protocol packages use for "refused: the version is being retired". */
const RETIRING_CODES = new Set(["RETIRING", "SEALED", "COMMITTED", "DRAINING", "BRANCH_DELETING"]);

export function exitCodeForKind(kind: HoldfastErrorKind): ExitCodeValue {
  switch (kind) {
    case "invalid-input":
      return ExitCode.usage;
    case "conflict":
    case "in-flight":
      return ExitCode.conflict;
    case "unresolved":
    case "ambiguous":
      return ExitCode.unknown;
    case "unsupported":
      return ExitCode.unsupported;
    case "aborted":
      return ExitCode.interrupted;
    case "auth":
    case "refused":
    case "not-found":
      return ExitCode.failure;
  }
}
