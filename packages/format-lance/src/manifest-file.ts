import { holdfastError } from "@holdfast/conditional-store";
import { LANCE_MALFORMED_MANIFEST } from "./errors.js";
import {
  decodeIndexSectionMessage,
  decodeManifestMessage,
  type LanceIndexSection,
  type LanceManifest,
} from "./proto.js";

/** The 4 magic bytes that end every Lance manifest file. */
export const LANCE_MAGIC = "LANC";
/** Footer: i64 position, u16 major, u16 minor, magic. */
const FOOTER_BYTES = 16;
const LENGTH_PREFIX_BYTES = 4;

/** A decoded manifest file: its footer and the `Manifest` message. */
export interface ManifestFile {
  readonly formatMajor: number;
  readonly formatMinor: number;
  readonly manifest: LanceManifest;
  /** The `IndexSection` when the manifest names one, else `null`. */
  readonly indexSection: LanceIndexSection | null;
}

const MAGIC_BYTES = new TextEncoder().encode(LANCE_MAGIC);

/** Whether the file ends in `LANC` (compared byte by byte: no decoder per manifest). */
function endsWithMagic(bytes: Uint8Array): boolean {
  const at = bytes.byteLength - MAGIC_BYTES.length;
  for (let i = 0; i < MAGIC_BYTES.length; i += 1) {
    if (bytes[at + i] !== MAGIC_BYTES[i]) return false;
  }
  return true;
}

/**
 * Reads a Lance manifest file: the last 16 bytes are an i64 LE position, u16 major, u16
 * minor and `LANC`; at the position a u32 LE length and that many bytes of protobuf
 * `Manifest`, which must end exactly where the footer starts. The optional index section
 * is another length-prefixed message at `index_section`. Anything else is `invalid-input`
 * (LANCE_MALFORMED_MANIFEST) naming the key: a manifest holdfast cannot read is never
 * treated as naming nothing.
 */
export function readManifestFile(bytes: Uint8Array, key: string): ManifestFile {
  const bad = (why: string, cause?: unknown) =>
    holdfastError("invalid-input", "readManifest", `Lance manifest ${key} is malformed: ${why}`, {
      key,
      code: LANCE_MALFORMED_MANIFEST,
      cause,
    });
  if (bytes.byteLength < FOOTER_BYTES + LENGTH_PREFIX_BYTES) throw bad("shorter than its footer");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const footerAt = bytes.byteLength - FOOTER_BYTES;
  if (!endsWithMagic(bytes)) {
    const magic = new TextDecoder().decode(bytes.subarray(bytes.byteLength - 4));
    throw bad(`magic is ${JSON.stringify(magic)}, not "LANC"`);
  }
  const position = view.getBigInt64(footerAt, true);
  const formatMajor = view.getUint16(footerAt + 8, true);
  const formatMinor = view.getUint16(footerAt + 10, true);
  const start = Number(position);
  if (position < 0n || start + LENGTH_PREFIX_BYTES > footerAt) {
    throw bad(`manifest position ${position} is outside the file`);
  }
  const length = view.getUint32(start, true);
  const end = start + LENGTH_PREFIX_BYTES + length;
  if (end !== footerAt) {
    throw bad(`the manifest message ends at ${end}, not where the footer starts (${footerAt})`);
  }
  let manifest: LanceManifest;
  try {
    manifest = decodeManifestMessage(bytes.subarray(start + LENGTH_PREFIX_BYTES, end));
  } catch (cause) {
    throw bad("the Manifest message does not decode", cause);
  }
  let indexSection: LanceIndexSection | null = null;
  if (manifest.index_section !== undefined) {
    const at = Number(manifest.index_section);
    if (!Number.isSafeInteger(at) || at + LENGTH_PREFIX_BYTES > footerAt) {
      throw bad(`index section position ${manifest.index_section} is outside the file`);
    }
    const sectionLength = view.getUint32(at, true);
    const sectionEnd = at + LENGTH_PREFIX_BYTES + sectionLength;
    if (sectionEnd > footerAt) throw bad("the index section runs past the footer");
    try {
      indexSection = decodeIndexSectionMessage(
        bytes.subarray(at + LENGTH_PREFIX_BYTES, sectionEnd),
      );
    } catch (cause) {
      throw bad("the IndexSection message does not decode", cause);
    }
  }
  return { formatMajor, formatMinor, manifest, indexSection };
}
