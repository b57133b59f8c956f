import { holdfastError } from "@holdfast/conditional-store";
import { UlidSchema } from "@holdfast/protocol/internal";
import { leaseKey, parseLeaseKey } from "./layout.js";
import type { Lease } from "./lease.js";
import { LeaseHolderSchema, MAX_TTL_MS, MIN_TTL_MS } from "./schema.js";
import { decodeLeaseSecret } from "./secret.js";

/** Error code of a lease handle that does not name one lease object of this library. */
export const INVALID_LEASE_HANDLE = "INVALID_LEASE_HANDLE";

/**
 * Checks a lease handle before any request (docs/protocol.md §4.1): its key
 * must be exactly the lease key of its branch, version, leaseId and secret (the key's tag
 * is the secret's hash), and it must carry the ETag of its last write. A handle that names
 * anything else (a manifest, another lease, a key with a foreign suffix, a real lease's key
 * with a made-up secret) is refused with `invalid-input`, so release and renew can only ever
 * touch the lease object whose secret the caller holds (invariant 1, invariant 6).
 */
export function validateLeaseHandle(lease: unknown, operation: string): Lease {
  const bad = (why: string) =>
    holdfastError("invalid-input", operation, `not a lease handle: ${why}`, {
      code: INVALID_LEASE_HANDLE,
      key: typeof (lease as Lease | null)?.key === "string" ? (lease as Lease).key : undefined,
      hint: "pass the object acquireLease or renewLease returned, unchanged",
    });
  if (typeof lease !== "object" || lease === null) throw bad("not an object");
  const l = lease as Partial<Lease>;
  if (typeof l.key !== "string") throw bad("key is not a string");
  const parsed = parseLeaseKey(l.key);
  if (!parsed) throw bad(`${l.key} is not a lease key`);
  if (!UlidSchema.safeParse(l.leaseId).success) throw bad("leaseId is not a ULID");
  if (parsed.tag === null) {
    throw holdfastError(
      "invalid-input",
      operation,
      `lease ${String(l.leaseId)} was taken by a release before lease schema 2 and has no secret: it cannot be renewed or released`,
      {
        code: INVALID_LEASE_HANDLE,
        key: l.key,
        hint: "acquire a new lease; the old one protects its version until its TTL passes and a sweep removes it",
      },
    );
  }
  if (decodeLeaseSecret(l.secret) === null) {
    throw bad("secret is not 43 characters of canonical base64url (32 bytes)");
  }
  if (parsed.branch !== l.branch || parsed.version !== l.version || parsed.leaseId !== l.leaseId) {
    throw bad(
      `key ${l.key} does not belong to lease ${String(l.leaseId)} of ${String(l.branch)}@${String(l.version)}`,
    );
  }
  // Re-derive the key from the secret: a handle whose secret is not the one the lease was
  // acquired with names no lease (its tag differs), so it is refused here, before any request.
  if (leaseKey(parsed.branch, parsed.version, parsed.leaseId, l.secret as string) !== l.key)
    throw bad("key is not the lease key of this handle's secret");
  if (typeof l.etag !== "string" || l.etag.length === 0) throw bad("etag is missing");
  if (
    typeof l.ttlMs !== "number" ||
    !Number.isSafeInteger(l.ttlMs) ||
    l.ttlMs < MIN_TTL_MS ||
    l.ttlMs > MAX_TTL_MS
  ) {
    throw bad(`ttlMs ${String(l.ttlMs)} is out of range`);
  }
  if (typeof l.renewal !== "number" || !Number.isSafeInteger(l.renewal) || l.renewal < 0) {
    throw bad("renewal is not a non-negative integer");
  }
  if (typeof l.writerId !== "string") throw bad("writerId is not a string");
  if (typeof l.writtenAtLocalMs !== "number" || !Number.isFinite(l.writtenAtLocalMs)) {
    throw bad("writtenAtLocalMs is not a number");
  }
  if (l.manifestKey !== undefined && typeof l.manifestKey !== "string") {
    throw bad("manifestKey is not a string");
  }
  if (l.holder !== undefined && !LeaseHolderSchema.safeParse(l.holder).success) {
    throw bad("holder is not 1 to 128 characters without control characters");
  }
  return lease as Lease;
}
