import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { cryptoRandomBytes, holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";

/** Bytes of randomness in a lease secret (docs/protocol.md §4.2). */
export const LEASE_SECRET_BYTES = 32;

/** A lease secret as handles carry it: 32 bytes, base64url without padding (43 characters). */
const SECRET_TEXT = /^[A-Za-z0-9_-]{43}$/;

/** Draws a fresh lease secret from the context's randomness (`node:crypto` by default). */
export function drawLeaseSecret(ctx: ProtocolContext): string {
  const bytes = (ctx.random ?? cryptoRandomBytes)(LEASE_SECRET_BYTES);
  if (!(bytes instanceof Uint8Array) || bytes.byteLength !== LEASE_SECRET_BYTES) {
    throw holdfastError(
      "invalid-input",
      "acquireLease",
      `the context's random source returned no ${LEASE_SECRET_BYTES} bytes`,
      { code: "INVALID_RANDOM_SOURCE", hint: "ctx.random(n) must return a Uint8Array of n bytes" },
    );
  }
  return Buffer.from(bytes).toString("base64url");
}

/**
 * The raw bytes of a secret in its one canonical text form, or `null` for anything else
 * (wrong length, other alphabet, padding, or stray low bits in the last character, which
 * would give a second spelling of the same bytes).
 */
export function decodeLeaseSecret(secret: unknown): Uint8Array | null {
  if (typeof secret !== "string" || !SECRET_TEXT.test(secret)) return null;
  const bytes = Buffer.from(secret, "base64url");
  if (bytes.byteLength !== LEASE_SECRET_BYTES || bytes.toString("base64url") !== secret) {
    return null;
  }
  return new Uint8Array(bytes);
}

/**
 * The tag a lease key carries: lowercase hex of the first 16 bytes of SHA-256 of the
 * secret's raw bytes. Published in the key (and so in listings); it reveals nothing that
 * lets anyone find the secret, and a handle whose secret does not hash to its key's tag
 * names no lease at all.
 */
export function leaseTag(secret: string): string {
  return createHash("sha256")
    .update(secretBytes(secret, "leaseTag"))
    .digest()
    .subarray(0, 16)
    .toString("hex");
}

/**
 * A lease body's proof: lowercase hex HMAC-SHA256 with the secret's 32 raw bytes as key, over
 * the ASCII text `${leaseId}:${renewal}:${writerId}`. Only a holder of the secret can write
 * a body whose proof verifies, so a read-back can tell the holder's own write from anyone
 * else's.
 */
export function leaseProof(
  secret: string,
  fields: { readonly leaseId: string; readonly renewal: number; readonly writerId: string },
): string {
  return createHmac("sha256", secretBytes(secret, "leaseProof"))
    .update(`${fields.leaseId}:${fields.renewal}:${fields.writerId}`, "ascii")
    .digest("hex");
}

/** Whether `proof` is the proof of `fields` under `secret` (constant-time comparison). */
export function verifyLeaseProof(
  secret: string,
  fields: { readonly leaseId: string; readonly renewal: number; readonly writerId: string },
  proof: string,
): boolean {
  const expected = Buffer.from(leaseProof(secret, fields), "ascii");
  const given = Buffer.from(proof, "ascii");
  return given.byteLength === expected.byteLength && timingSafeEqual(given, expected);
}

// --- utils ---

function secretBytes(secret: string, operation: string): Uint8Array {
  const bytes = decodeLeaseSecret(secret);
  if (bytes === null) {
    // The message never repeats the text: it may be a real secret with a typo.
    throw holdfastError(
      "invalid-input",
      operation,
      "not a lease secret: expected 43 characters of canonical base64url (32 bytes)",
      { code: "INVALID_LEASE_SECRET" },
    );
  }
  return bytes;
}
