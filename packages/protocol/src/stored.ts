import { decodeJson, holdfastError } from "@holdfast/conditional-store";
import type { z } from "zod";

/**
 * Decodes and zod-parses a stored control object. A malformed object is a typed
 * `invalid-input` error with code `MALFORMED_OBJECT` naming the key, never a raw
 * SyntaxError or ZodError, so callers can fail closed on it.
 */
export function parseStored<S extends z.ZodType>(
  schema: S,
  body: Uint8Array,
  key: string,
  operation: string,
): z.infer<S> {
  let value: unknown;
  try {
    value = decodeJson(body);
  } catch (cause) {
    throw malformed(key, operation, "not JSON", cause);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw malformed(key, operation, parsed.error.message, parsed.error);
  return parsed.data;
}

function malformed(key: string, operation: string, why: string, cause: unknown) {
  return holdfastError("invalid-input", operation, `stored object ${key} is malformed: ${why}`, {
    key,
    code: "MALFORMED_OBJECT",
    cause,
    hint: "the object was not written by a compatible holdfast version; it is left untouched",
  });
}
