import { readFileSync } from "node:fs";
import protobuf from "protobufjs";
import { z } from "zod";
import { LEN, VARINT, WireReader } from "./wire.js";

/**
 * Decoders for the subset of Lance's `lance.table` messages holdfast reads, built from our
 * own `proto/lance-table.proto` by protobufjs. Decoded messages are turned into plain
 * objects (64-bit integers as exact decimal strings): the manifest field by field (it is
 * read once per version, so its decoding is on cleanup's hot path), the index section
 * checked with zod. A message that does not decode is a typed error, never a silent guess.
 */
const protoText = readFileSync(new URL("../proto/lance-table.proto", import.meta.url), "utf8");
const root = protobuf.parse(protoText, { keepCase: true }).root;
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
 * Decodes a `Manifest` message; throws a {@link WireError} on a message that does not decode
 * (the caller wraps it). The wire format is read field by field straight into a
 * {@link LanceManifest} (wire.ts), the field numbers and types those of
 * `proto/lance-table.proto`: the manifest is read once per version, so this is cleanup's hot
 * path, and the generic decoder's first use builds its code at run time (a fixed cost of
 * every process's first cleanup). A field the subset does not name is skipped, as protobuf
 * does; a named field with another wire type is refused.
 */
export function decodeManifestMessage(bytes: Uint8Array): LanceManifest {
  const r = new WireReader(bytes);
  const m: LanceManifest = {
    fields: [],
    fragments: [],
    version: "0",
    index_section: undefined,
    timestamp: undefined,
    reader_feature_flags: "0",
    writer_feature_flags: "0",
    transaction_file: "",
    config: {},
    base_paths: [],
    branch: undefined,
    transaction_section: undefined,
  };
  const config: Record<string, string> = Object.create(null);
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, LEN, field);
        m.fields.push(schemaField(r.message()));
        break;
      case 2:
        r.expect(wire, LEN, field);
        m.fragments.push(fragment(r.message()));
        break;
      case 3:
        r.expect(wire, VARINT, field);
        m.version = r.uint64();
        break;
      case 6:
        r.expect(wire, VARINT, field);
        m.index_section = r.uint64();
        break;
      case 7:
        r.expect(wire, LEN, field);
        m.timestamp = timestamp(r.message());
        break;
      case 9:
        r.expect(wire, VARINT, field);
        m.reader_feature_flags = r.uint64();
        break;
      case 10:
        r.expect(wire, VARINT, field);
        m.writer_feature_flags = r.uint64();
        break;
      case 12:
        r.expect(wire, LEN, field);
        m.transaction_file = r.string();
        break;
      case 16: {
        r.expect(wire, LEN, field);
        const [key, value] = mapEntry(r.message(), (e) => e.string(), "");
        config[key] = value;
        break;
      }
      case 18:
        r.expect(wire, LEN, field);
        m.base_paths.push(basePath(r.message()));
        break;
      case 20:
        r.expect(wire, LEN, field);
        m.branch = r.string();
        break;
      case 21:
        r.expect(wire, VARINT, field);
        m.transaction_section = r.uint64();
        break;
      default:
        r.skip(wire, field);
    }
  }
  m.config = { ...config };
  return m;
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

type DataFile = z.infer<typeof DataFileSchema>;
type DataFragment = LanceManifest["fragments"][number];

function schemaField(r: WireReader): LanceManifest["fields"][number] {
  const out = { name: "", logical_type: "", extension_name: "", metadata: {} };
  const metadata: Record<string, string> = Object.create(null);
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 2:
        r.expect(wire, LEN, field);
        out.name = r.string();
        break;
      case 5:
        r.expect(wire, LEN, field);
        out.logical_type = r.string();
        break;
      case 9:
        r.expect(wire, LEN, field);
        out.extension_name = r.string();
        break;
      case 10: {
        r.expect(wire, LEN, field);
        const [key, value] = mapEntry(r.message(), (e) => e.bytes(), EMPTY);
        const text = utf8Text(value);
        // Binary values are dropped (no extension name lives there); a later entry of
        // the same key replaces an earlier one, as in any protobuf map.
        if (text === undefined) delete metadata[key];
        else metadata[key] = text;
        break;
      }
      default:
        r.skip(wire, field);
    }
  }
  return { ...out, metadata: { ...metadata } };
}

function fragment(r: WireReader): DataFragment {
  const out: DataFragment = {
    id: "0",
    files: [],
    deletion_file: undefined,
    external_row_ids: undefined,
    external_last_updated_at_versions: undefined,
    external_created_at_versions: undefined,
    overlays: [],
  };
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, VARINT, field);
        out.id = r.uint64();
        break;
      case 2:
        r.expect(wire, LEN, field);
        out.files.push(dataFile(r.message()));
        break;
      case 3:
        r.expect(wire, LEN, field);
        out.deletion_file = deletionFile(r.message());
        break;
      case 6:
        r.expect(wire, LEN, field);
        out.external_row_ids = externalFile(r.message());
        break;
      case 8:
        r.expect(wire, LEN, field);
        out.external_last_updated_at_versions = externalFile(r.message());
        break;
      case 10:
        r.expect(wire, LEN, field);
        out.external_created_at_versions = externalFile(r.message());
        break;
      case 11: {
        r.expect(wire, LEN, field);
        const overlay = overlayDataFile(r.message());
        if (overlay !== undefined) out.overlays.push(overlay);
        break;
      }
      default:
        r.skip(wire, field);
    }
  }
  return out;
}

function dataFile(r: WireReader): DataFile {
  const out: DataFile = { path: "", file_size_bytes: "0", base_id: undefined };
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, LEN, field);
        out.path = r.string();
        break;
      case 6:
        r.expect(wire, VARINT, field);
        out.file_size_bytes = r.uint64();
        break;
      case 7:
        r.expect(wire, VARINT, field);
        out.base_id = r.uint32();
        break;
      default:
        r.skip(wire, field);
    }
  }
  return out;
}

/** `DataOverlayFile`: its data file, or none when the message names none. */
function overlayDataFile(r: WireReader): DataFile | undefined {
  let out: DataFile | undefined;
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === 1) {
      r.expect(wire, LEN, field);
      out = dataFile(r.message());
    } else r.skip(wire, field);
  }
  return out;
}

function deletionFile(r: WireReader): NonNullable<DataFragment["deletion_file"]> {
  const out: NonNullable<DataFragment["deletion_file"]> = {
    file_type: 0,
    read_version: "0",
    id: "0",
    base_id: undefined,
  };
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, VARINT, field);
        out.file_type = r.uint32();
        break;
      case 2:
        r.expect(wire, VARINT, field);
        out.read_version = r.uint64();
        break;
      case 3:
        r.expect(wire, VARINT, field);
        out.id = r.uint64();
        break;
      case 7:
        r.expect(wire, VARINT, field);
        out.base_id = r.uint32();
        break;
      default:
        r.skip(wire, field);
    }
  }
  return out;
}

function externalFile(r: WireReader): { path: string; size: string } {
  const out = { path: "", size: "0" };
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, LEN, field);
        out.path = r.string();
        break;
      case 3:
        r.expect(wire, VARINT, field);
        out.size = r.uint64();
        break;
      default:
        r.skip(wire, field);
    }
  }
  return out;
}

function basePath(r: WireReader): LanceManifest["base_paths"][number] {
  const out: LanceManifest["base_paths"][number] = {
    id: 0,
    name: undefined,
    is_dataset_root: false,
    path: "",
  };
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, VARINT, field);
        out.id = r.uint32();
        break;
      case 2:
        r.expect(wire, LEN, field);
        out.name = r.string();
        break;
      case 3:
        r.expect(wire, VARINT, field);
        out.is_dataset_root = r.bool();
        break;
      case 4:
        r.expect(wire, LEN, field);
        out.path = r.string();
        break;
      default:
        r.skip(wire, field);
    }
  }
  return out;
}

function timestamp(r: WireReader): { seconds: string; nanos: number } {
  const out = { seconds: "0", nanos: 0 };
  while (!r.done) {
    const { field, wire } = r.tag();
    switch (field) {
      case 1:
        r.expect(wire, VARINT, field);
        out.seconds = r.int64();
        break;
      case 2:
        r.expect(wire, VARINT, field);
        out.nanos = r.int32();
        break;
      default:
        r.skip(wire, field);
    }
  }
  return out;
}

/** A map entry (key 1: a string, value 2), the value's default when absent. */
function mapEntry<T>(r: WireReader, value: (r: WireReader) => T, absent: T): [string, T] {
  let key = "";
  let out = absent;
  while (!r.done) {
    const { field, wire } = r.tag();
    if (field === 1) {
      r.expect(wire, LEN, field);
      key = r.string();
    } else if (field === 2) {
      r.expect(wire, LEN, field);
      out = value(r);
    } else r.skip(wire, field);
  }
  return [key, out];
}

const EMPTY = new Uint8Array(0);
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A metadata value as text, or undefined when it is not UTF-8. */
function utf8Text(value: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(value);
  } catch {
    return undefined;
  }
}
