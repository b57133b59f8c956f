import { holdfastError } from "@holdfast/conditional-store";
import { validateName } from "@holdfast/protocol";

/** Parses a version argument: digits only, >= 1. Throws `invalid-input`. */
export function parseVersionArg(text: unknown, what = "version"): number {
  const value = typeof text === "string" ? text.trim() : "";
  if (!/^\d{1,16}$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw holdfastError(
      "invalid-input",
      "parse",
      `invalid ${what} ${JSON.stringify(text)}: expected a whole number >= 1`,
      {
        code: "INVALID_VERSION",
        hint: "versions are numbered 1, 2, 3, ... on each branch; list them with: holdfast versions <url>",
      },
    );
  }
  return Number(value);
}

/** Parses a count option (`--retain 10`): digits only, >= `min`. Throws `invalid-input`. */
export function parseCountArg(text: unknown, what: string, min = 0): number {
  const value = typeof text === "string" ? text.trim() : "";
  if (!/^\d{1,9}$/.test(value) || Number(value) < min) {
    throw holdfastError(
      "invalid-input",
      "parse",
      `invalid ${what} ${JSON.stringify(text)}: expected a whole number >= ${min}`,
    );
  }
  return Number(value);
}

/** Validates a branch or tag name (one path segment) with the dataset's own rule. */
export function parseNameArg(text: unknown, kind: "branch" | "tag"): string {
  return validateName(text, kind);
}

/** Parses `branch@version` (or a bare version on `defaultBranch`). Throws `invalid-input`. */
export function parseVersionRef(
  text: unknown,
  defaultBranch: string,
): { branch: string; version: number } {
  const value = typeof text === "string" ? text : "";
  const at = value.lastIndexOf("@");
  if (at === -1) return { branch: defaultBranch, version: parseVersionArg(value) };
  return {
    branch: parseNameArg(value.slice(0, at), "branch"),
    version: parseVersionArg(value.slice(at + 1)),
  };
}

/** Parses `<version>` or `<branch>@<version>`; `branch` is undefined for a bare version. */
export function parseForkPoint(text: unknown): { branch: string | undefined; version: number } {
  const value = typeof text === "string" ? text : "";
  if (!value.includes("@")) return { branch: undefined, version: parseVersionArg(value) };
  return parseVersionRef(value, "");
}
