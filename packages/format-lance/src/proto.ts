import { readFileSync } from "node:fs";
import protobuf from "protobufjs/minimal.js";
import { z } from "zod";
import { holdfast } from "./generated/lance-table.js";

/**
 * Decoders for the subset of Lance's `lance.table` messages holdfast reads: the static
 * decoders protobufjs-cli generated at development time from our own
 * `proto/lance-table.proto` (src/generated/, `pnpm --filter @holdfast/format-lance run
 * proto:gen`), so no decoder is built at run time. Decoded messages are turned into plain
 * objects (64-bit integers as exact decimal strings). A message that does not decode is a
 * typed error, never a silent guess.
 */
const pb = holdfast.lance;

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
  uuid: z
    .object({ uuid: z.custom<Uint8Array>((v) => v instanceof Uint8Array).optional() })
    .optional(),
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
 * Decodes a `Manifest` message; throws on a message that does not decode (the caller wraps
 * it). The manifest is read once per version, so this is cleanup's hot path. A field the
 * subset does not name is skipped, as protobuf does; a named field with another wire type is
 * refused ({@link checkWireTypes}).
 */
export function decodeManifestMessage(bytes: Uint8Array): LanceManifest {
  checkWireTypes(bytes, "Manifest");
  const m = pb.Manifest.decode(bytes);
  const config: Record<string, string> = Object.create(null);
  for (const key of Object.keys(m.config)) config[key] = m.config[key]!;
  return {
    fields: m.fields.map(schemaField),
    fragments: m.fragments.map(fragment),
    version: u64(m.version),
    index_section: optionalU64(m.index_section),
    timestamp:
      m.timestamp == null
        ? undefined
        : { seconds: u64(m.timestamp.seconds ?? 0), nanos: m.timestamp.nanos ?? 0 },
    reader_feature_flags: u64(m.reader_feature_flags),
    writer_feature_flags: u64(m.writer_feature_flags),
    transaction_file: m.transaction_file,
    config: { ...config },
    base_paths: m.base_paths.map((b) => ({
      id: b.id ?? 0,
      name: b.name ?? undefined,
      is_dataset_root: b.is_dataset_root ?? false,
      path: b.path ?? "",
    })),
    branch: m.branch ?? undefined,
    transaction_section: optionalU64(m.transaction_section),
  };
}

/** Decodes an `IndexSection` message; throws on one that does not decode (the caller wraps it). */
export function decodeIndexSectionMessage(bytes: Uint8Array): LanceIndexSection {
  checkWireTypes(bytes, "IndexSection");
  const section = pb.IndexSection.decode(bytes);
  return {
    indices: section.indices.map((index) => ({
      uuid: index.uuid == null ? undefined : { uuid: index.uuid.uuid ?? undefined },
      name: index.name ?? "",
      dataset_version: u64(index.dataset_version ?? 0),
      base_id: index.base_id ?? undefined,
    })),
  };
}

// --- utils ---

type Long = protobuf.Long;
type DataFile = z.infer<typeof DataFileSchema>;
type DataFragment = LanceManifest["fragments"][number];
type Message<T extends keyof typeof pb> = NonNullable<ConstructorParameters<(typeof pb)[T]>[0]>;

// Without protobufjs's Long support the decoders would render 64-bit ids as doubles and
// lose digits.
if (!protobuf.util.Long) throw new Error("protobufjs has no 64-bit integer support (long)");

/** A 64-bit integer as the decoder renders it, as an exact decimal string. */
function u64(value: number | Long): string {
  if (typeof value === "number") return String(value);
  return value.high === 0 ? String(value.low >>> 0) : value.toString();
}

function optionalU64(value: number | Long | null | undefined): string | undefined {
  return value == null ? undefined : u64(value);
}

function schemaField(f: Message<"Field">): LanceManifest["fields"][number] {
  const metadata: Record<string, string> = Object.create(null);
  const values = f.metadata ?? {};
  for (const key of Object.keys(values)) {
    // Binary values are dropped (no extension name lives there).
    const text = utf8Text(values[key]!);
    if (text !== undefined) metadata[key] = text;
  }
  return {
    name: f.name ?? "",
    logical_type: f.logical_type ?? "",
    extension_name: f.extension_name ?? "",
    metadata: { ...metadata },
  };
}

function fragment(f: Message<"DataFragment">): DataFragment {
  const overlays: DataFile[] = [];
  for (const overlay of f.overlays ?? []) {
    if (overlay.data_file != null) overlays.push(dataFile(overlay.data_file));
  }
  const deletion = f.deletion_file;
  return {
    id: u64(f.id ?? 0),
    files: (f.files ?? []).map(dataFile),
    deletion_file:
      deletion == null
        ? undefined
        : {
            file_type: deletion.file_type ?? 0,
            read_version: u64(deletion.read_version ?? 0),
            id: u64(deletion.id ?? 0),
            base_id: deletion.base_id ?? undefined,
          },
    external_row_ids: externalFile(f.external_row_ids),
    external_last_updated_at_versions: externalFile(f.external_last_updated_at_versions),
    external_created_at_versions: externalFile(f.external_created_at_versions),
    overlays,
  };
}

function dataFile(d: Message<"DataFile">): DataFile {
  return {
    path: d.path ?? "",
    file_size_bytes: u64(d.file_size_bytes ?? 0),
    base_id: d.base_id ?? undefined,
  };
}

function externalFile(
  e: Message<"ExternalFile"> | null | undefined,
): { path: string; size: string } | undefined {
  return e == null ? undefined : { path: e.path ?? "", size: u64(e.size ?? 0) };
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** A metadata value as text, or undefined when it is not UTF-8. */
function utf8Text(value: Uint8Array): string | undefined {
  try {
    return STRICT_UTF8.decode(value);
  } catch {
    return undefined;
  }
}

/** Wire types (the low 3 bits of a tag) a field of each protobuf type is written with. */
const VARINT = 0;
const LEN = 2;
const WIRE_OF_SCALAR: Readonly<Record<string, number>> = {
  int32: VARINT,
  int64: VARINT,
  uint32: VARINT,
  uint64: VARINT,
  sint32: VARINT,
  sint64: VARINT,
  bool: VARINT,
  fixed64: 1,
  sfixed64: 1,
  double: 1,
  fixed32: 5,
  sfixed32: 5,
  float: 5,
  string: LEN,
  bytes: LEN,
};

/** A field of the subset: the wire type it must come with, and its message's fields if any. */
interface FieldWire {
  readonly wire: number;
  readonly message?: MessageWires;
}

/** A message's fields of the subset, by field number. */
type MessageWires = (FieldWire | undefined)[];

interface Descriptor {
  readonly nested?: Readonly<Record<string, Descriptor>>;
  readonly fields?: Readonly<
    Record<string, { readonly type: string; readonly id: number; readonly keyType?: string }>
  >;
}

/**
 * The wire type of every field of the subset, from the message descriptors protobufjs-cli
 * generated from the same `.proto` (src/generated/lance-table.json). A map field is a
 * repeated entry message (key 1, value 2).
 */
const WIRES: ReadonlyMap<string, MessageWires> = (() => {
  const json = readFileSync(new URL("./generated/lance-table.json", import.meta.url), "utf8");
  const types = (JSON.parse(json) as Descriptor).nested?.holdfast?.nested?.lance?.nested ?? {};
  const wires = new Map<string, MessageWires>();
  for (const name of Object.keys(types)) wires.set(name, []);
  const wireOf = (type: string): FieldWire => {
    const scalar = WIRE_OF_SCALAR[type];
    if (scalar !== undefined) return { wire: scalar };
    const message = wires.get(type);
    if (message === undefined) throw new Error(`lance-table.json: no message ${type}`);
    return { wire: LEN, message };
  };
  for (const [name, type] of Object.entries(types)) {
    const fields = wires.get(name)!;
    for (const field of Object.values(type.fields ?? {})) {
      fields[field.id] =
        field.keyType === undefined
          ? wireOf(field.type)
          : { wire: LEN, message: [undefined, wireOf(field.keyType), wireOf(field.type)] };
    }
  }
  return wires;
})();

/**
 * Refuses a message in which a field of the subset comes with another wire type than its
 * type's: protobufjs's decoders read a field by its number alone and would take, say, a
 * length-delimited field 3 for the varint `version` (Lance's own decoder refuses such a
 * message). The walk reads and skips with protobufjs's Reader, bounds-checked.
 */
function checkWireTypes(bytes: Uint8Array, type: string): void {
  const reader = protobuf.Reader.create(bytes);
  checkMessage(reader, bytes.length, WIRES.get(type)!);
}

function checkMessage(reader: protobuf.Reader, end: number, fields: MessageWires): void {
  while (reader.pos < end) {
    const tag = reader.uint32();
    const wire = tag & 7;
    const number = tag >>> 3;
    const field = number < fields.length ? fields[number] : undefined;
    if (field !== undefined && field.wire !== wire) {
      throw new Error(`field ${number} has wire type ${wire}, not ${field.wire}`);
    }
    if (field?.message === undefined) {
      reader.skipType(wire);
      continue;
    }
    const childEnd = reader.uint32() + reader.pos;
    if (childEnd > end) throw new RangeError(`field ${number} runs past the end`);
    checkMessage(reader, childEnd, field.message);
  }
  if (reader.pos !== end) throw new RangeError("a field runs past the end of its message");
}
