import type { IdSource } from "./clock.js";

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
