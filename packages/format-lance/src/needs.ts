import { holdfastError } from "@holdfast/conditional-store";
import { LANCE_MALFORMED_MANIFEST, UnsupportedLanceDatasetError } from "./errors.js";
import type { ManifestFile } from "./manifest-file.js";

/** Data files, relative to the dataset root. */
export const LANCE_DATA_PREFIX = "data/";
/** Deletion files: `_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}`. */
export const LANCE_DELETIONS_PREFIX = "_deletions/";
/** One folder per index: `_indices/{uuid}/`. */
export const LANCE_INDICES_PREFIX = "_indices/";
/** Transaction files named by `Manifest.transaction_file`. */
export const LANCE_TRANSACTIONS_PREFIX = "_transactions/";

/**
 * Reader feature flags this adapter understands: deletion files (1), stable row ids (2),
 * the retired v2-format flag (4), table config (8), base paths (16, but files under another
 * root are refused on their own), inline-only transactions (32). A manifest with any other
 * bit set is refused: a reader that does not know a flag must not read the dataset, and a
 * cleaner must not decide what it needs.
 */
export const KNOWN_READER_FLAGS = 0b11_1111n;

/** One object a version needs, with its size when the manifest records it. */
export interface NeededObject {
  readonly key: string;
  /** Bytes, when the manifest records them (data files); else 0. */
  readonly size: number;
}

/** Every object one Lance version needs, except the files inside its index folders. */
export interface VersionNeeds {
  readonly version: number;
  /** Data files, deletion files and the transaction file. */
  readonly objects: NeededObject[];
  /** Index uuids (`_indices/{uuid}/` folders), formatted as Lance names the folders. */
  readonly indexUuids: string[];
}

/**
 * Lists what a main-branch version needs: every fragment's data files
 * (`data/{path}`), its deletion file, every index folder of the index section, and the
 * transaction file. Refuses (UnsupportedLanceDatasetError) unknown reader feature flags,
 * files under another base path, and fragments that keep row ids or version sequences
 * in external files: it never guesses what such a version needs.
 */
export function versionNeeds(file: ManifestFile, key: string): VersionNeeds {
  const { manifest } = file;
  const flags = BigInt(manifest.reader_feature_flags);
  const unknown = flags & ~KNOWN_READER_FLAGS;
  if (unknown !== 0n) {
    throw new UnsupportedLanceDatasetError(
      "reader-feature-flags",
      key,
      `Lance manifest ${key} sets reader feature flags 0x${unknown.toString(16)} this holdfast does not know`,
      "upgrade @holdfast/format-lance, or clean this dataset with Lance's own tools",
    );
  }
  if (manifest.base_paths.length > 0) {
    const paths = manifest.base_paths.map((b) => b.path).join(", ");
    throw new UnsupportedLanceDatasetError(
      "base-paths",
      key,
      `Lance manifest ${key} names files under other roots (base_paths: ${paths})`,
    );
  }
  const objects: NeededObject[] = [];
  for (const fragment of manifest.fragments) {
    for (const [what, external] of [
      ["row ids", fragment.external_row_ids],
      ["last-updated versions", fragment.external_last_updated_at_versions],
      ["created versions", fragment.external_created_at_versions],
    ] as const) {
      if (external) {
        throw new UnsupportedLanceDatasetError(
          "external-file",
          key,
          `Lance manifest ${key}: fragment ${fragment.id} keeps its ${what} in an external file (${external.path})`,
        );
      }
    }
    for (const data of fragment.files) {
      if (data.base_id !== undefined) throw otherBase(key, `data file ${data.path}`, data.base_id);
      objects.push({ key: `${LANCE_DATA_PREFIX}${data.path}`, size: Number(data.file_size_bytes) });
    }
    const deletion = fragment.deletion_file;
    if (deletion) {
      if (deletion.base_id !== undefined) {
        throw otherBase(key, `deletion file of fragment ${fragment.id}`, deletion.base_id);
      }
      const suffix = deletion.file_type === 1 ? "bin" : "arrow";
      objects.push({
        key: `${LANCE_DELETIONS_PREFIX}${fragment.id}-${deletion.read_version}-${deletion.id}.${suffix}`,
        size: 0,
      });
    }
  }
  if (manifest.transaction_file !== "") {
    objects.push({ key: `${LANCE_TRANSACTIONS_PREFIX}${manifest.transaction_file}`, size: 0 });
  }
  const indexUuids: string[] = [];
  for (const index of file.indexSection?.indices ?? []) {
    if (index.base_id !== undefined) throw otherBase(key, `index ${index.name}`, index.base_id);
    const bytes = index.uuid?.uuid;
    if (bytes?.byteLength !== 16) {
      throw holdfastError(
        "invalid-input",
        "readManifest",
        `Lance manifest ${key}: index ${JSON.stringify(index.name)} has no 16-byte uuid`,
        { key, code: LANCE_MALFORMED_MANIFEST },
      );
    }
    indexUuids.push(formatUuid(bytes));
  }
  return { version: Number(manifest.version), objects, indexUuids };
}

/** A 16-byte uuid as Lance names index folders: lowercase hex, hyphenated 8-4-4-4-12. */
export function formatUuid(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** True for keys cleanup may delete as Lance files: data, deletion, index and transaction files. */
export function isLanceFileKey(key: string): boolean {
  if (key.startsWith(LANCE_DATA_PREFIX)) {
    return key.endsWith(".lance") && !key.slice(LANCE_DATA_PREFIX.length).includes("/");
  }
  if (key.startsWith(LANCE_DELETIONS_PREFIX)) {
    return /^_deletions\/[^/]+\.(arrow|bin)$/.test(key);
  }
  if (key.startsWith(LANCE_INDICES_PREFIX)) {
    return /^_indices\/[0-9a-f-]{36}\/.+/.test(key);
  }
  if (key.startsWith(LANCE_TRANSACTIONS_PREFIX)) {
    return /^_transactions\/[^/]+\.txn$/.test(key);
  }
  return false;
}

// --- utils ---

function otherBase(key: string, what: string, baseId: number): UnsupportedLanceDatasetError {
  return new UnsupportedLanceDatasetError(
    "base-paths",
    key,
    `Lance manifest ${key}: ${what} lives under another root (base_id ${baseId})`,
  );
}
