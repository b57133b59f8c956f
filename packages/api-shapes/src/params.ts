import { z } from "zod";

// Shapes both the CLI's `--json` documents and the HTTP bodies use (cli.ts and http.ts).

/** A branch or tag name: 1..128 of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-`. */
export const NameParam = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/, "letters, digits, . _ - (not starting with . or -)");

/** A version number: an exact integer >= 1. */
export const VersionParam = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** A ULID (lease ids, writer ids, job ids). */
export const UlidParam = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/i, "a 26-character ULID");

/** Shortest and longest lease TTL the protocol accepts (the lease package's MIN_TTL_MS, MAX_TTL_MS). */
export const LEASE_TTL_RANGE_MS = { min: 100, max: 24 * 60 * 60 * 1000 } as const;

/**
 * The lease handle a client keeps and sends back to renew or release: everything the
 * renewing replica needs, so any replica can serve the next call. Its `secret` is the
 * capability: only acquire and renew answers carry it (never a listing, status or
 * metric), the lease key is bound to it, and the server refuses a handle whose key is
 * not its fields' and secret's (docs/protocol.md §4.2). Keep it private.
 */
export const LeaseHandleShape = z.strictObject({
  leaseId: UlidParam,
  branch: NameParam,
  version: VersionParam,
  ttlMs: z.number().int().min(LEASE_TTL_RANGE_MS.min).max(LEASE_TTL_RANGE_MS.max),
  /** 32 random bytes, base64url without padding. */
  secret: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "expected a 43-character base64url lease secret"),
  key: z.string().min(1).max(1024),
  etag: z.string().min(1).max(256),
  renewal: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  writerId: UlidParam,
});
export type LeaseHandle = z.infer<typeof LeaseHandleShape>;
