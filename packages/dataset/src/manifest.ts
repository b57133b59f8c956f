import { VersionRefSchema } from "@holdfast/protocol";
import { NameSchema, UlidSchema, VersionNumberSchema } from "@holdfast/protocol/internal";
import { z } from "zod";

/** One data file a manifest names: its key under `data/` and its size in bytes. */
export const DataFileSchema = z.object({
  key: z.string().min(1).startsWith("data/"),
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type DataFile = z.infer<typeof DataFileSchema>;

/**
 * Manifest of one version, schema 1 (persisted at `_versions/{branch}/{version:020d}.json`).
 * `txnId` is unique per commit call, so a read-back can tell our commit from another
 * writer's (C8). `committedAt` is the writer's clock: informational only, never compared.
 * Unknown fields are kept on parse so a newer writer's manifest still reads.
 */
export const ManifestSchema = z.looseObject({
  schema: z.literal(1),
  branch: NameSchema,
  version: VersionNumberSchema,
  parent: VersionRefSchema.nullable(),
  files: z.array(DataFileSchema),
  txnId: UlidSchema,
  committedAt: z.string().optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

/** Dataset identity at `_holdfast/dataset.json`, schema 1. */
export const DatasetInfoSchema = z.looseObject({
  schema: z.literal(1),
  format: z.literal("holdfast"),
  datasetId: UlidSchema,
  writerId: UlidSchema,
  defaultBranch: NameSchema,
});
export type DatasetInfo = z.infer<typeof DatasetInfoSchema>;
