import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  decodeIndexSectionMessage,
  decodeManifestMessage,
  LanceManifestSchema,
} from "../src/proto.js";
import { TABLE, writeHistory } from "./history.js";
import { type LanceSite, localDir } from "./sites.js";

/**
 * The manifest decoder copies the decoded message field by field (cleanup reads one manifest
 * per version, so this is its hot path). It must answer exactly what protobufjs's generic
 * `toObject` checked by the field schema answers, on what LanceDB writes and at the edges
 * of the 64-bit fields.
 */
const root = protobuf.parse(
  readFileSync(new URL("../proto/lance-table.proto", import.meta.url), "utf8"),
  {
    keepCase: true,
  },
).root;
const ManifestType = root.lookupType("holdfast.lance.Manifest");

/** The generic path the field-by-field decoder replaces. */
function reference(bytes: Uint8Array) {
  const object = ManifestType.toObject(ManifestType.decode(bytes), {
    longs: String,
    enums: Number,
  });
  return LanceManifestSchema.parse(object);
}

/** The Manifest message of a manifest file (length-prefixed at the footer's position). */
function messageOf(file: Buffer): Uint8Array {
  const start = Number(file.readBigInt64LE(file.length - 16));
  return file.subarray(start + 4, start + 4 + file.readUInt32LE(start));
}

/** Drops keys whose value is undefined: the schema leaves absent optionals out. */
function defined(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

let dir: { dir: string; remove: () => void };
beforeAll(async () => {
  dir = localDir();
  const site: LanceSite = {
    name: "local",
    uri: dir.dir,
    storageOptions: {},
    store: () => Promise.reject(new Error("decoder tests read with node:fs")),
  };
  await writeHistory(site);
}, 60_000);
afterAll(() => dir.remove());

describe("Lance manifest decoding, field by field", () => {
  it("equals the schema-checked generic decoding on every manifest LanceDB wrote", () => {
    const versions = join(dir.dir, `${TABLE}.lance`, "_versions");
    const names = readdirSync(versions).filter((n) => n.endsWith(".manifest"));
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) {
      const message = messageOf(readFileSync(join(versions, name)));
      expect(defined(decodeManifestMessage(message))).toEqual(defined(reference(message)));
    }
  });

  it("keeps 64-bit values exact past 2^53, absent optionals absent, present zeros present", () => {
    const message = ManifestType.encode(
      ManifestType.fromObject({
        version: "18446744073709551615",
        reader_feature_flags: "9007199254740993",
        index_section: "0",
        timestamp: { seconds: "-9223372036854775808", nanos: 7 },
        transaction_file: "t.txn",
        config: { "lance.auto_cleanup.interval": "20" },
        base_paths: [{ id: 3, name: "other", path: "s3://b/x" }],
        fragments: [
          {
            id: "9007199254740992",
            files: [{ path: "a.lance", file_size_bytes: "4294967296", base_id: 0 }],
            deletion_file: { file_type: 1, read_version: "4294967295", id: "1" },
            external_row_ids: { path: "rows.bin" },
          },
          { id: "1", files: [{ path: "b.lance" }] },
        ],
      }),
    ).finish();
    const decoded = decodeManifestMessage(message);
    expect(defined(decoded)).toEqual(defined(reference(message)));
    expect(decoded.version).toBe("18446744073709551615");
    expect(decoded.reader_feature_flags).toBe("9007199254740993");
    expect(decoded.index_section).toBe("0");
    expect(decoded.transaction_section).toBeUndefined();
    expect(decoded.branch).toBeUndefined();
    expect(decoded.timestamp).toEqual({ seconds: "-9223372036854775808", nanos: 7 });
    expect(decoded.fragments[0]!.files[0]!.base_id).toBe(0);
    expect(decoded.fragments[1]!.files[0]!.base_id).toBeUndefined();
    expect(decoded.fragments[1]!.deletion_file).toBeUndefined();
    expect(decoded.fragments[0]!.external_row_ids).toEqual({ path: "rows.bin", size: "0" });
  });

  it("a message that does not decode is an error, not an empty manifest", () => {
    // Field 2 (fragments) announces 50 bytes that are not there.
    expect(() => decodeManifestMessage(Uint8Array.of(0x12, 50, 1, 2))).toThrow();
    // Field 12 (transaction_file) announces 5 bytes, 2 follow: not a shorter name.
    expect(() => decodeManifestMessage(Uint8Array.of(0x62, 5, 0x61, 0x62))).toThrow(
      /index out of range/,
    );
    // A varint of 11 bytes; a varint cut off by the end of the message.
    expect(() => decodeManifestMessage(Uint8Array.of(0x18, ...Array(10).fill(0x80), 1))).toThrow();
    expect(() => decodeManifestMessage(Uint8Array.of(0x18, 0x80))).toThrow();
    // Field 3 (version) as a length-delimited field, field 2 (fragments) as a varint, and
    // field 1 (path) of a fragment's data file as a varint; wire types 6 and 7 do not exist.
    expect(() => decodeManifestMessage(Uint8Array.of(0x1a, 1, 0x31))).toThrow(/wire type/);
    expect(() => decodeManifestMessage(Uint8Array.of(0x10, 0))).toThrow(/wire type/);
    expect(() => decodeManifestMessage(Uint8Array.of(0x12, 4, 0x12, 2, 0x08, 1))).toThrow(
      /wire type/,
    );
    // A config entry whose key (field 1 of the map entry) is a varint.
    expect(() => decodeManifestMessage(Uint8Array.of(0x82, 0x01, 2, 0x08, 1))).toThrow(/wire type/);
    // The index section: an index's dataset_version (field 4) as a length-delimited field.
    expect(() => decodeIndexSectionMessage(Uint8Array.of(0x0a, 2, 0x22, 0))).toThrow(/wire type/);
    expect(() => decodeManifestMessage(Uint8Array.of(0x1e))).toThrow(/wire type/);
    expect(() => decodeManifestMessage(Uint8Array.of(0x1f))).toThrow(/wire type/);
    // A group without its end tag.
    expect(() => decodeManifestMessage(Uint8Array.of(0xa3, 0x06, 0x08, 1))).toThrow();
  });

  it("skips fields outside the subset of every wire type, as the generic decoder does", () => {
    const known = ManifestType.encode(
      ManifestType.fromObject({
        version: "7",
        fragments: [{ id: "1", files: [{ path: "a.lance", file_size_bytes: "5" }] }],
        timestamp: { seconds: "-1", nanos: -5 },
      }),
    ).finish();
    const unknown = Uint8Array.of(
      ...[0xa0, 0x06, 0x96, 0x01], // field 100, varint 150
      ...[0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8], // field 101, fixed64
      ...[0xb2, 0x06, 2, 0x61, 0x62], // field 102, 2 bytes
      ...[0xbd, 0x06, 1, 2, 3, 4], // field 103, fixed32
      ...[0xc3, 0x06, 0x08, 1, 0xc4, 0x06], // field 104, a group holding a varint
    );
    const message = Uint8Array.of(...unknown, ...known, ...unknown);
    const decoded = decodeManifestMessage(message);
    expect(defined(decoded)).toEqual(defined(reference(message)));
    expect(decoded.version).toBe("7");
    expect(decoded.timestamp).toEqual({ seconds: "-1", nanos: -5 });
    // Field metadata keeps its UTF-8 values only (the schema has no bytes to compare with).
    const withFields = ManifestType.encode(
      ManifestType.fromObject({
        fields: [{ name: "blob", metadata: { a: Buffer.from("x"), b: Uint8Array.of(0xff) } }],
      }),
    ).finish();
    const fields = decodeManifestMessage(Uint8Array.of(...unknown, ...withFields)).fields;
    expect(fields).toEqual([
      { name: "blob", logical_type: "", extension_name: "", metadata: { a: "x" } },
    ]);
  });
});
