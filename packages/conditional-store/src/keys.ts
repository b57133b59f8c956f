import { holdfastError } from "./errors.js";

/** Longest key in UTF-8 bytes that every supported store accepts (S3's limit is 1024). */
export const MAX_KEY_BYTES = 1024;

/**
 * Rejects keys that some store would mangle or refuse: empty, too long, a leading or
 * trailing `/`, empty, `.` or `..` segments, backslashes and control characters.
 * Throws `invalid-input` before anything is sent (docs/guarantees.md, invariant 6).
 */
export function validateKey(key: string, operation = "validate"): string {
  const fail = (why: string) =>
    holdfastError("invalid-input", operation, `invalid object key ${JSON.stringify(key)}: ${why}`, {
      key,
    });
  if (typeof key !== "string" || key.length === 0) throw fail("empty");
  if (Buffer.byteLength(key, "utf8") > MAX_KEY_BYTES)
    throw fail(`longer than ${MAX_KEY_BYTES} bytes`);
  if (key.startsWith("/") || key.endsWith("/")) throw fail("starts or ends with '/'");
  if (key.includes("\\")) throw fail("contains a backslash");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
  if (/[\u0000-\u001f\u007f]/.test(key)) throw fail("contains a control character");
  if (!key.isWellFormed()) throw fail("contains a lone surrogate");
  for (const segment of key.split("/")) {
    if (segment === "") throw fail("contains an empty path segment");
    if (segment === "." || segment === "..") throw fail("contains a '.' or '..' segment");
  }
  return key;
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
