import { isHoldfastError } from "./errors.js";
import type { RequestMode } from "./types.js";

/**
 * The one policy for conditional requests whose answer can be lost (docs/guarantees.md, conditional requests): how many
 * times an ambiguous answer is re-issued and how long to pause before each re-issue.
 */
export interface ReissuePolicy {
  /** Pause before re-issue i (0-based), in ms. Its length is the re-issue budget. */
  readonly pausesMs: readonly number[];
}

/** Four re-issues, pausing 0.2 s, 0.4 s, 0.8 s, 1.6 s. */
export const DEFAULT_REISSUE_POLICY: ReissuePolicy = Object.freeze({
  pausesMs: Object.freeze([200, 400, 800, 1600]),
});

/** What one answer to a conditional request says. */
export type AnswerClass =
  /** The precondition failed (412, exists, if-match on absent). */
  | "conflict"
  /** S3 409: a conditional write to the key is in flight, possibly our own earlier copy. */
  | "in-flight"
  /** Refused before applying: nothing of this copy was written. */
  | "refused"
  /** Anything else: this copy may or may not have applied. */
  | "ambiguous";

/**
 * Classifies a failed request (docs/guarantees.md, conditional requests). Authentication errors are a refusal only on a
 * single-attempt client: a repeating SDK may have applied an earlier copy and then been
 * refused. On a store whose put completes before it answers, every error is a refusal.
 * `not-found` on a write means the bucket or container is missing (backends report an
 * if-match on an absent key as `conflict`), so nothing was written: a refusal.
 */
export function classifyFailure(error: unknown, mode: RequestMode): AnswerClass {
  if (!isHoldfastError(error)) return mode === "completes-before-answer" ? "refused" : "ambiguous";
  switch (error.kind) {
    case "conflict":
      return "conflict";
    case "in-flight":
      return "in-flight";
    case "refused":
    case "not-found":
    case "invalid-input":
    case "unsupported":
      return "refused";
    case "auth":
      return mode === "repeating" ? "ambiguous" : "refused";
    default:
      return mode === "completes-before-answer" ? "refused" : "ambiguous";
  }
}
