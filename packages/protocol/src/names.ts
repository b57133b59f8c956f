import { holdfastError } from "@holdfast/conditional-store";
import { z } from "zod";

/** Longest branch or tag name. */
export const MAX_NAME_LENGTH = 128;

/** The branch a new dataset commits to when none is named. */
export const DEFAULT_BRANCH = "main";

const NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * Checks a branch or tag name: one path segment of 1..128 characters from
 * `[A-Za-z0-9._-]`, not starting with `.` or `-`. Throws `invalid-input` before anything
 * is written (docs/guarantees.md, invariant 6), so a name can never escape its folder in a key.
 */
export function validateName(name: unknown, kind: "branch" | "tag"): string {
  // The common case first: no error closure is built for a valid name.
  if (
    typeof name === "string" &&
    name.length <= MAX_NAME_LENGTH &&
    name !== "." &&
    name !== ".." &&
    NAME_PATTERN.test(name)
  ) {
    return name;
  }
  const fail = (why: string) =>
    holdfastError(
      "invalid-input",
      "validate",
      `invalid ${kind} name ${JSON.stringify(name)}: ${why}`,
      {
        code: "INVALID_NAME",
        hint: `a ${kind} name is 1..${MAX_NAME_LENGTH} characters of A-Z a-z 0-9 . _ - and does not start with . or -`,
      },
    );
  if (typeof name !== "string") throw fail("not a string");
  if (name.length === 0) throw fail("empty");
  if (name.length > MAX_NAME_LENGTH) throw fail(`longer than ${MAX_NAME_LENGTH} characters`);
  if (name === "." || name === "..") throw fail("a relative path segment");
  if (name.startsWith(".") || name.startsWith("-")) throw fail("starts with '.' or '-'");
  if (!NAME_PATTERN.test(name)) throw fail("contains a character outside [A-Za-z0-9._-]");
  return name;
}

/** True when `name` would pass `validateName`. */
export function isValidName(name: unknown): name is string {
  try {
    validateName(name, "branch");
    return true;
  } catch {
    return false;
  }
}

/** A branch or tag name as persisted (the same rules as `validateName`). */
export const NameSchema = z.string().min(1).max(MAX_NAME_LENGTH).regex(NAME_PATTERN);
