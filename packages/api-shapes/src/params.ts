import { z } from "zod";

// Shapes both the CLI's `--json` documents and the HTTP bodies use (cli.ts and http.ts).

/**
 * Tags every failure of `schema` with the error code the packages give the same failure, so
 * the HTTP API's problem carries the code the CLI prints: one extra `custom` issue whose
 * `params.code` is `code`, added only when `schema` has failed already (its JSON schema is
 * unchanged). The outermost coded schema around a failure names it.
 */
export function withErrorCode<T extends z.ZodType>(schema: T, code: string): T {
  return schema.refine(() => false, {
    when: (payload) => payload.issues.length > 0,
    params: { code },
    message: code,
  });
}

/** A branch or tag name: 1..128 of `A-Z a-z 0-9 . _ -`, not starting with `.` or `-` (INVALID_NAME, as the dataset package's `validateName`). */
export const NameParam = withErrorCode(
  z
    .string()
    .min(1)
    .max(128)
    .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]*$/, "letters, digits, . _ - (not starting with . or -)"),
  "INVALID_NAME",
);

/** A version number: an exact integer >= 1 (INVALID_VERSION). */
export const VersionParam = withErrorCode(
  z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
  "INVALID_VERSION",
);

/** A ULID (lease ids, writer ids, job ids). */
export const UlidParam = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/i, "a 26-character ULID");

/** Shortest and longest lease TTL the protocol accepts (the lease package's MIN_TTL_MS, MAX_TTL_MS). */
export const LEASE_TTL_RANGE_MS = { min: 100, max: 24 * 60 * 60 * 1000 } as const;

/** A lease TTL in ms within LEASE_TTL_RANGE_MS (INVALID_TTL, as the leases package's `checkLeaseTtl`). */
export const LeaseTtlParam = withErrorCode(
  z.number().int().min(LEASE_TTL_RANGE_MS.min).max(LEASE_TTL_RANGE_MS.max),
  "INVALID_TTL",
);

/** Longest lease holder label (the lease package's MAX_HOLDER_LENGTH). */
export const MAX_HOLDER_LENGTH = 128;

/** A lease's holder label: free text of 1..128 characters without control characters (INVALID_HOLDER, as the leases package's `checkLeaseHolder`). */
export const HolderParam = withErrorCode(
  z
    .string()
    .min(1)
    .max(MAX_HOLDER_LENGTH)
    .regex(/^[^\p{Cc}]+$/u, "no control characters"),
  "INVALID_HOLDER",
);

/**
 * The lease handle a client keeps and sends back to renew or release: everything the
 * renewing replica needs, so any replica can serve the next call. Its `secret` is the
 * capability: only acquire and renew answers carry it (never a listing, status or
 * metric), the lease key is bound to it, and the server refuses a handle whose key is
 * not its fields' and secret's (docs/protocol.md §4.2). Keep it private.
 */
export const LeaseHandleShape = withErrorCode(
  z.strictObject({
    leaseId: UlidParam,
    branch: NameParam,
    version: VersionParam,
    ttlMs: LeaseTtlParam,
    /** 32 random bytes, base64url without padding. */
    secret: z
      .string()
      .regex(/^[A-Za-z0-9_-]{43}$/, "expected a 43-character base64url lease secret"),
    key: z.string().min(1).max(1024),
    etag: z.string().min(1).max(256),
    renewal: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    writerId: UlidParam,
    /** The holder label acquire was given; renewals write it again. */
    holder: HolderParam.optional(),
  }),
  "INVALID_LEASE_HANDLE",
);
export type LeaseHandle = z.infer<typeof LeaseHandleShape>;
