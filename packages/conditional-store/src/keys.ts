import { holdfastError } from "./errors.js";

/** Longest key in UTF-8 bytes that every supported store accepts (S3's limit is 1024). */
export const MAX_KEY_BYTES = 1024;

/** A segment that is empty, `.` or `..`. */
const ODD_SEGMENT = /(?:^|\/)\.{0,2}(?:\/|$)/;

/**
 * Rejects keys that some store would mangle or refuse: empty, too long, a leading or
 * trailing `/`, empty, `.` or `..` segments, backslashes and control characters.
 * Throws `invalid-input` before anything is sent (docs/guarantees.md, invariant 6).
 */
export function validateKey(key: string, operation = "validate"): string {
  if (typeof key !== "string" || key.length === 0) throw invalidKey(key, operation, "empty");
  // A UTF-16 unit is at most 3 UTF-8 bytes: short keys skip the byte count.
  if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key, "utf8") > MAX_KEY_BYTES)
    throw invalidKey(key, operation, `longer than ${MAX_KEY_BYTES} bytes`);
  if (key.startsWith("/") || key.endsWith("/"))
    throw invalidKey(key, operation, "starts or ends with '/'");
  if (key.includes("\\")) throw invalidKey(key, operation, "contains a backslash");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
  if (/[\u0000-\u001f\u007f]/.test(key))
    throw invalidKey(key, operation, "contains a control character");
  if (!key.isWellFormed()) throw invalidKey(key, operation, "contains a lone surrogate");
  // Only a key with an empty, "." or ".." segment needs the segment walk.
  if (!ODD_SEGMENT.test(key)) return key;
  for (const segment of key.split("/")) {
    if (segment === "") throw invalidKey(key, operation, "contains an empty path segment");
    if (segment === "." || segment === "..")
      throw invalidKey(key, operation, "contains a '.' or '..' segment");
  }
  return key;
}

function invalidKey(key: string, operation: string, why: string) {
  return holdfastError(
    "invalid-input",
    operation,
    `invalid object key ${JSON.stringify(key)}: ${why}`,
    { key },
  );
}

/** Validates a listing prefix: empty, or a valid key prefix (may end with `/`). */
export function validatePrefix(prefix: string, operation = "list"): string {
  if (prefix === "") return prefix;
  validateKey(prefix.endsWith("/") ? prefix.slice(0, -1) : prefix, operation);
  return prefix;
}

/** Joins path segments into a key without doubling separators. */
export function joinKey(...parts: string[]): string {
  return parts
    .filter((p) => p !== "")
    .map((p) => p.replace(/^\/+|\/+$/g, ""))
    .filter((p) => p !== "")
    .join("/");
}
