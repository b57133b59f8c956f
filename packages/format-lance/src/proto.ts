import { readFileSync } from "node:fs";
import protobuf from "protobufjs";
import { z } from "zod";

/**
 * Decoders for the subset of Lance's `lance.table` messages holdfast reads, built from our
 * own `proto/lance-table.proto` by protobufjs. Decoded messages are turned into plain
 * objects (64-bit integers as exact decimal strings) and checked with zod, so a value that
 * does not fit what the format promises is a typed error, never a silent guess.
 */
const protoText = readFileSync(new URL("../proto/lance-table.proto", import.meta.url), "utf8");
const root = protobuf.parse(protoText, { keepCase: true }).root;
const ManifestType = root.lookupType("holdfast.lance.Manifest");
const IndexSectionType = root.lookupType("holdfast.lance.IndexSection");

/** An unsigned 64-bit integer as protobufjs renders it with `longs: String`. */
const U64 = z.string().regex(/^\d{1,20}$/);

const BaseIdSchema = z.number().int().min(0).optional();

const DataFileSchema = z.object({
  path: z.string().default(""),
  file_size_bytes: U64.default("0"),
  base_id: BaseIdSchema,
});

const DeletionFileSchema = z.object({
  file_type: z.number().int().min(0).default(0),
  read_version: U64.default("0"),
  id: U64.default("0"),
  base_id: BaseIdSchema,
});

const ExternalFileSchema = z.object({ path: z.string().default("") });

const DataFragmentSchema = z.object({
  id: U64.default("0"),
  files: z.array(DataFileSchema).default([]),
  deletion_file: DeletionFileSchema.optional(),
  external_row_ids: ExternalFileSchema.optional(),
  external_last_updated_at_versions: ExternalFileSchema.optional(),
  external_created_at_versions: ExternalFileSchema.optional(),
});

const BasePathSchema = z.object({
  id: z.number().int().min(0).default(0),
  name: z.string().optional(),
  is_dataset_root: z.boolean().default(false),
  path: z.string().default(""),
});

/** The manifest fields holdfast needs (field numbers in docs/lance.md). */
export const LanceManifestSchema = z.object({
  fragments: z.array(DataFragmentSchema).default([]),
  version: U64.default("0"),
  index_section: U64.optional(),
  timestamp: z
    .object({ seconds: z.string().default("0"), nanos: z.number().default(0) })
    .optional(),
  reader_feature_flags: U64.default("0"),
  writer_feature_flags: U64.default("0"),
  transaction_file: z.string().default(""),
  config: z.record(z.string(), z.string()).default({}),
  base_paths: z.array(BasePathSchema).default([]),
  branch: z.string().optional(),
  transaction_section: U64.optional(),
});
export type LanceManifest = z.infer<typeof LanceManifestSchema>;

const IndexMetadataSchema = z.object({
  uuid: z.object({ uuid: z.instanceof(Uint8Array).optional() }).optional(),
  name: z.string().default(""),
  dataset_version: U64.default("0"),
  base_id: BaseIdSchema,
});

/** `IndexSection`: the indices a version lists (each an `_indices/{uuid}/` folder). */
export const LanceIndexSectionSchema = z.object({
  indices: z.array(IndexMetadataSchema).default([]),
});
export type LanceIndexSection = z.infer<typeof LanceIndexSectionSchema>;

/** Decodes a `Manifest` message; throws the decoder's or zod's error (the caller wraps it). */
export function decodeManifestMessage(bytes: Uint8Array): LanceManifest {
  return LanceManifestSchema.parse(toPlain(ManifestType, bytes));
}

/** Decodes an `IndexSection` message; throws the decoder's or zod's error (the caller wraps it). */
export function decodeIndexSectionMessage(bytes: Uint8Array): LanceIndexSection {
  return LanceIndexSectionSchema.parse(toPlain(IndexSectionType, bytes));
}

// --- utils ---

function toPlain(type: protobuf.Type, bytes: Uint8Array): unknown {
  // `longs: String` needs protobufjs's Long support: without it 64-bit ids would lose digits.
  if (!protobuf.util.Long) throw new Error("protobufjs has no 64-bit integer support (long)");
  const message = type.decode(bytes);
  return type.toObject(message, { longs: String, enums: Number });
}
