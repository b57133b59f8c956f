import { NameSchema, UlidSchema, VersionNumberSchema } from "@holdfast/dataset";
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

/**
 * Lease object body, schema 1 (at `_holdfast/leases/{branch}/{version:020d}/{leaseId}.json`).
 * `writerId` is fresh on every write and `renewal` counts writes, so every renewal changes
 * the bytes (and so the S3 content-MD5 ETag); a read-back of equal bytes proves ours.
 */
export const LeaseBodySchema = z.looseObject({
  schema: z.literal(1),
  leaseId: UlidSchema,
  writerId: UlidSchema,
  branch: NameSchema,
  version: VersionNumberSchema,
  ttlMs: z.number().int().min(MIN_TTL_MS).max(MAX_TTL_MS),
  renewal: z.number().int().min(0),
});
export type LeaseBody = z.infer<typeof LeaseBodySchema>;
