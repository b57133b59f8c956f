import { readFileSync } from "node:fs";
import protobuf from "protobufjs";
import { z } from "zod";

/**
 * Decoders for the subset of Lance's `lance.table` messages holdfast reads, built from our
 * own `proto/lance-table.proto` by protobufjs. Decoded messages are turned into plain
 * objects (64-bit integers as exact decimal strings): the manifest field by field (it is
 * read once per version, so its decoding is on cleanup's hot path), the index section
 * checked with zod. A message that does not decode is a typed error, never a silent guess.
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

const ExternalFileSchema = z.object({
  path: z.string().default(""),
  size: U64.default("0"),
});

/** A schema field, reduced to what says whether it is a blob column. */
const FieldSchema = z.object({
  name: z.string().default(""),
  logical_type: z.string().default(""),
  extension_name: z.string().default(""),
  /** Metadata keys, with the values that are UTF-8 text (the extension name among them). */
  metadata: z.record(z.string(), z.string()).default({}),
});

const DataFragmentSchema = z.object({
  id: U64.default("0"),
  files: z.array(DataFileSchema).default([]),
  deletion_file: DeletionFileSchema.optional(),
  external_row_ids: ExternalFileSchema.optional(),
  external_last_updated_at_versions: ExternalFileSchema.optional(),
  external_created_at_versions: ExternalFileSchema.optional(),
  /** Data files of overlay files (reader flag 64). */
  overlays: z.array(DataFileSchema).default([]),
});

const BasePathSchema = z.object({
  id: z.number().int().min(0).default(0),
  name: z.string().optional(),
  is_dataset_root: z.boolean().default(false),
  path: z.string().default(""),
});

/** The manifest fields holdfast needs (field numbers in docs/lance.md). */
export const LanceManifestSchema = z.object({
  fields: z.array(FieldSchema).default([]),
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

/**
 * Decodes a `Manifest` message; throws the decoder's error (the caller wraps it). The
 * decoded message is copied field by field into a {@link LanceManifest}: the wire types
 * already fix every field's type, so a generic `toObject` and a schema pass over every
 * manifest (most of a cleanup's CPU on a table of many versions) would check nothing more.
 */
export function decodeManifestMessage(bytes: Uint8Array): LanceManifest {
  checkLongSupport();
  const m = ManifestType.decode(bytes) as unknown as RawManifest;
  return {
    fields: m.fields.map((field) => ({
      name: field.name,
      logical_type: field.logical_type,
      extension_name: field.extension_name,
      metadata: textValues(field.metadata),
    })),
    fragments: m.fragments.map((f) => ({
      id: u64(f.id),
      files: f.files.map(dataFile),
      deletion_file:
        f.deletion_file == null
          ? undefined
          : {
              file_type: f.deletion_file.file_type,
              read_version: u64(f.deletion_file.read_version),
              id: u64(f.deletion_file.id),
              base_id: own(f.deletion_file, "base_id"),
            },
      external_row_ids: external(f.external_row_ids),
      external_last_updated_at_versions: external(f.external_last_updated_at_versions),
      external_created_at_versions: external(f.external_created_at_versions),
      overlays: f.overlays.flatMap((o) => (o.data_file == null ? [] : [dataFile(o.data_file)])),
    })),
    version: u64(m.version),
    index_section: optionalU64(own(m, "index_section")),
    timestamp:
      m.timestamp == null
        ? undefined
        : { seconds: i64(m.timestamp.seconds), nanos: m.timestamp.nanos },
    reader_feature_flags: u64(m.reader_feature_flags),
    writer_feature_flags: u64(m.writer_feature_flags),
    transaction_file: m.transaction_file,
    config: { ...m.config },
    base_paths: m.base_paths.map((b) => ({
      id: b.id,
      name: own(b, "name"),
      is_dataset_root: b.is_dataset_root,
      path: b.path,
    })),
    branch: own(m, "branch"),
    transaction_section: optionalU64(own(m, "transaction_section")),
  };
}

/** Decodes an `IndexSection` message; throws the decoder's or zod's error (the caller wraps it). */
export function decodeIndexSectionMessage(bytes: Uint8Array): LanceIndexSection {
  return LanceIndexSectionSchema.parse(toPlain(IndexSectionType, bytes));
}

// --- utils ---

function checkLongSupport(): void {
  // Without protobufjs's Long support 64-bit ids would lose digits.
  if (!protobuf.util.Long) throw new Error("protobufjs has no 64-bit integer support (long)");
}

function toPlain(type: protobuf.Type, bytes: Uint8Array): unknown {
  checkLongSupport();
  const message = type.decode(bytes);
  return type.toObject(message, { longs: String, enums: Number });
}

/** A 64-bit field as protobufjs decodes it: a Long (or a number for small values). */
type Int64 = number | { low: number; high: number; unsigned: boolean; toString(): string };

/** An unsigned 64-bit value as its exact decimal string. */
function u64(value: Int64 | null | undefined): string {
  if (value == null) return "0";
  if (typeof value === "number") return String(value);
  const high = value.high >>> 0;
  // Below 2^53 a double holds it exactly; above, Long's own (slower) formatting (the
  // decoder made it unsigned).
  if (high < 0x20_0000) return String(high * 0x1_0000_0000 + (value.low >>> 0));
  return value.toString();
}

/** A signed 64-bit value as its exact decimal string. */
function i64(value: Int64 | null | undefined): string {
  if (value == null) return "0";
  return String(value); // a signed Long formats itself exactly
}

/**
 * A proto3 `optional` field: `undefined` when the message did not carry it. protobufjs
 * sets a carried field on the message itself; an absent one reads its default (a zero)
 * from the prototype, so presence is the own property, not the value.
 */
function own<T extends object, K extends keyof T>(
  message: T,
  field: K,
): NonNullable<T[K]> | undefined {
  return Object.hasOwn(message, field) ? (message[field] ?? undefined) : undefined;
}

function optionalU64(value: Int64 | undefined): string | undefined {
  return value === undefined ? undefined : u64(value);
}

function external(
  file: { path: string; size: Int64 } | null | undefined,
): { path: string; size: string } | undefined {
  return file == null ? undefined : { path: file.path, size: u64(file.size) };
}

type RawDataFile = { path: string; file_size_bytes: Int64; base_id?: number | null };

function dataFile(d: RawDataFile): z.infer<typeof DataFileSchema> {
  return { path: d.path, file_size_bytes: u64(d.file_size_bytes), base_id: own(d, "base_id") };
}

/** Field metadata values that are UTF-8 text; binary values are dropped (never needed). */
function textValues(metadata: Record<string, Uint8Array>): Record<string, string> {
  const out: Record<string, string> = {};
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (const [key, value] of Object.entries(metadata)) {
    try {
      out[key] = decoder.decode(value);
    } catch {
      // not text: no extension name lives there
    }
  }
  return out;
}

/** The decoded `Manifest` message's shape (field defaults live on its prototype). */
interface RawManifest {
  fields: {
    name: string;
    logical_type: string;
    extension_name: string;
    metadata: Record<string, Uint8Array>;
  }[];
  fragments: {
    id: Int64;
    files: RawDataFile[];
    deletion_file?: {
      file_type: number;
      read_version: Int64;
      id: Int64;
      base_id?: number | null;
    } | null;
    external_row_ids?: { path: string; size: Int64 } | null;
    external_last_updated_at_versions?: { path: string; size: Int64 } | null;
    external_created_at_versions?: { path: string; size: Int64 } | null;
    overlays: { data_file?: RawDataFile | null }[];
  }[];
  version: Int64;
  index_section?: Int64 | null;
  timestamp?: { seconds: Int64; nanos: number } | null;
  reader_feature_flags: Int64;
  writer_feature_flags: Int64;
  transaction_file: string;
  config: Record<string, string>;
  base_paths: { id: number; name?: string | null; is_dataset_root: boolean; path: string }[];
  branch?: string | null;
  transaction_section?: Int64 | null;
}
