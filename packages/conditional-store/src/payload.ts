import type { IdSource } from "./clock.js";
import type { ObjectStore } from "./types.js";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Encodes an exclusive claim (lock, intent, lease, retirement record) with a fresh writer
 * id in its bytes, so a read-back of equal bytes proves this writer wrote it (docs/guarantees.md, C2).
 * Returns the id so the caller can recognize its own claim later.
 */
export function writerPayload<T extends object>(
  fields: T,
  ids: IdSource,
): { writerId: string; bytes: Uint8Array } {
  const writerId = ids.next();
  return { writerId, bytes: encodeJson({ ...fields, writerId }) };
}

/** Canonical JSON encoding used for every holdfast control object. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(`${JSON.stringify(value)}\n`);
}

/** Decodes JSON bytes; throws a SyntaxError on malformed input (callers parse with zod next). */
export function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(decoder.decode(bytes));
}

/**
 * What {@link parseJsonAs} and {@link readJsonAs} need of a schema: a parse that does not
 * throw. A zod schema is one (this package does not depend on zod).
 */
export interface JsonSchema<T> {
  /** The value as `T`, or the reason it is not one. */
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: unknown };
}

/**
 * Decodes JSON bytes and parses them with `schema`: the value, or why not (`not JSON`, or
 * the schema's message, with the error as `cause`). Callers that guard data turn a
 * failure into their typed error (dataset's `parseStored`).
 */
export function parseJsonAs<T>(
  bytes: Uint8Array,
  schema: JsonSchema<T>,
): { ok: true; value: T } | { ok: false; why: string; cause: unknown } {
  let value: unknown;
  try {
    value = decodeJson(bytes);
  } catch (cause) {
    return { ok: false, why: "not JSON", cause };
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  const { error } = parsed;
  const why = error instanceof Error ? error.message : String(error);
  return { ok: false, why, cause: error };
}

/**
 * GETs `key` and parses its JSON body with `schema`: null when the object is absent or
 * its body is not JSON of that schema. For views that show or skip what they cannot read
 * (lease lists, job history); a guard must fail closed on a malformed object instead.
 */
export async function readJsonAs<T>(
  store: Pick<ObjectStore, "get">,
  key: string,
  schema: JsonSchema<T>,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<T | null> {
  const got = await store.get(key, options);
  if (!got) return null;
  const parsed = parseJsonAs(got.body, schema);
  return parsed.ok ? parsed.value : null;
}
