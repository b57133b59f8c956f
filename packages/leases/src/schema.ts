import { NameSchema, UlidSchema, VersionNumberSchema } from "@holdfast/protocol/internal";
import { z } from "zod";

/**
 * Shortest accepted TTL: 100 ms. Sub-second TTLs are safe because expiry always adds a
 * whole second of timestamp precision (docs/protocol.md §3, L4); below 100 ms a keeper could not
 * renew in time on any real store, so such TTLs are rejected as `invalid-input`.
 */
export const MIN_TTL_MS = 100;

/**
 * Longest accepted TTL: 24 hours. Part of the protocol: a census treats any lease object
 * older than this (plus precision) as expired without reading it, so a lost or corrupt
 * lease can never block cleanup for longer. Hold a lease longer with a keeper.
 */
export const MAX_TTL_MS = 24 * 60 * 60 * 1000;

/** Longest holder label a lease may carry (characters). */
export const MAX_HOLDER_LENGTH = 128;

/**
 * A lease's holder label: free text the reader chooses (a job name, a host), 1 to
 * MAX_HOLDER_LENGTH characters without control characters. Shown by listings and the
 * dashboard; it protects nothing and proves nothing (the proof does not cover it).
 */
export const LeaseHolderSchema = z
  .string()
  .min(1)
  .max(MAX_HOLDER_LENGTH)
  .regex(/^[^\p{Cc}]+$/u, "no control characters");

/**
 * Lease object body, schema 2 (at `_holdfast/leases/{branch}/{version:020d}/{leaseId}.{tag}.json`),
 * written as `encodeJson` writes it with the fields in exactly this order: schema, leaseId,
 * branch, version, ttlMs, renewal, writerId, proof. `writerId` is fresh on every write and
 * `renewal` counts writes, so every renewal changes the bytes (and so the S3 content-MD5
 * ETag). `proof` is the lease secret's HMAC of `${leaseId}:${renewal}:${writerId}`
 * (`leaseProof`): a read-back adopts a body only when it verifies (docs/protocol.md §4).
 * An optional `holder` label follows `proof` when the holder gave one; readers that do not
 * know it ignore it (the object is loose), so bodies without it are byte-for-byte unchanged.
 */
export const LeaseBodySchema = z.looseObject({
  schema: z.literal(2),
  leaseId: UlidSchema,
  branch: NameSchema,
  version: VersionNumberSchema,
  ttlMs: z.number().int().min(MIN_TTL_MS).max(MAX_TTL_MS),
  renewal: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  writerId: UlidSchema,
  proof: z.string().regex(/^[0-9a-f]{64}$/),
  holder: LeaseHolderSchema.optional(),
});
export type LeaseBody = z.infer<typeof LeaseBodySchema>;

/**
 * What a census, sweep or listing reads for a lease's TTL: a schema 2 body, or a schema 1
 * body (`{leaseId}.json`, no proof) left by an older release, which still protects its
 * version until it expires.
 */
export const StoredLeaseBodySchema = z.union([
  LeaseBodySchema,
  z.looseObject({
    schema: z.literal(1),
    leaseId: UlidSchema,
    writerId: UlidSchema,
    branch: NameSchema,
    version: VersionNumberSchema,
    ttlMs: z.number().int().min(MIN_TTL_MS).max(MAX_TTL_MS),
    renewal: z.number().int().min(0),
  }),
]);
