import { holdfastError } from "@holdfast/conditional-store";
import { LANCE_MALFORMED_MANIFEST, UnsupportedLanceDatasetError } from "./errors.js";
import { checkFeatureFlags } from "./flags.js";
import type { ManifestFile } from "./manifest-file.js";
import type { LanceManifest } from "./proto.js";

/** Data files, relative to the dataset root. */
export const LANCE_DATA_PREFIX = "data/";
/** Deletion files: `_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}`. */
export const LANCE_DELETIONS_PREFIX = "_deletions/";
/** One folder per index: `_indices/{uuid}/`. */
export const LANCE_INDICES_PREFIX = "_indices/";
/** Transaction files named by `Manifest.transaction_file`. */
export const LANCE_TRANSACTIONS_PREFIX = "_transactions/";

/** One object a version needs, with its size when the manifest records it. */
export interface NeededObject {
  readonly key: string;
  /** Bytes, when the manifest records them (data files, row-id files); else 0. */
  readonly size: number;
}

/** Every object one Lance version needs under its own root, except folder contents listed later. */
export interface VersionNeeds {
  readonly version: number;
  /** Data files (overlays included), deletion files, row-id and version-sequence files, the transaction file. */
  readonly objects: NeededObject[];
  /** Index uuids (`_indices/{uuid}/` folders), formatted as Lance names the folders. */
  readonly indexUuids: string[];
  /** `data/{stem}/` folders of blob sidecars, one per data file of a table with blob columns. */
  readonly sidecarFolders: string[];
  /**
   * Files the manifest names under other roots (`base_id`: a shallow clone's source, a
   * branch's parent, another base): never deleted by a cleanup of this root (docs/lance.md).
   */
  readonly elsewhere: number;
}

/**
 * Lists what a version needs under its root (`prefix`: `""` for main, `tree/{branch}/` for a
 * branch): every fragment's data and overlay files (`data/{path}`), its deletion file, its
 * row-id and version-sequence files, every index folder of the index section, the blob
 * sidecar folders of its data files, and the transaction file (absent when inline). Files
 * with a `base_id` live under another root: counted, never named, so this root's cleanup
 * neither deletes nor sweeps them. Refuses (UnsupportedLanceDatasetError) any reader or
 * writer feature flag holdfast does not implement, a `base_id` without its base path, and
 * a sequence file outside the table's own folders: it never guesses what a version needs.
 */
export function versionNeeds(file: ManifestFile, key: string, prefix = ""): VersionNeeds {
  const { manifest } = file;
  checkFeatureFlags(manifest.reader_feature_flags, manifest.writer_feature_flags, key);
  const bases = new Set(manifest.base_paths.map((b) => b.id));
  let elsewhere = 0;
  /** True when the file is this root's; counts it and checks its base otherwise. */
  const ours = (what: string, baseId: number | undefined): boolean => {
    if (baseId === undefined) return true;
    if (!bases.has(baseId)) {
      throw new UnsupportedLanceDatasetError(
        "base-paths",
        key,
        `Lance manifest ${key}: ${what} names base_id ${baseId}, which base_paths does not define`,
      );
    }
    elsewhere += 1;
    return false;
  };
  const blobs = hasBlobColumns(manifest);
  const objects: NeededObject[] = [];
  const sidecarFolders: string[] = [];
  for (const fragment of manifest.fragments) {
    for (const data of [...fragment.files, ...fragment.overlays]) {
      if (!ours(`data file ${data.path}`, data.base_id)) continue;
      const dataKey = flatKey(prefix, LANCE_DATA_PREFIX, data.path);
      objects.push({ key: dataKey, size: Number(data.file_size_bytes) });
      if (blobs && dataKey.endsWith(".lance"))
        sidecarFolders.push(`${dataKey.slice(0, -".lance".length)}/`);
    }
    const deletion = fragment.deletion_file;
    if (deletion && ours(`deletion file of fragment ${fragment.id}`, deletion.base_id)) {
      const suffix = deletion.file_type === 1 ? "bin" : "arrow";
      objects.push({
        key: flatKey(
          prefix,
          LANCE_DELETIONS_PREFIX,
          `${fragment.id}-${deletion.read_version}-${deletion.id}.${suffix}`,
        ),
        size: 0,
      });
    }
    for (const [what, external] of [
      ["row ids", fragment.external_row_ids],
      ["last-updated versions", fragment.external_last_updated_at_versions],
      ["created versions", fragment.external_created_at_versions],
    ] as const) {
      if (!external) continue;
      if (!isOwnRelativePath(external.path)) {
        throw new UnsupportedLanceDatasetError(
          "external-file",
          key,
          `Lance manifest ${key}: fragment ${fragment.id} keeps its ${what} in ${JSON.stringify(external.path)}, outside the table's own folders`,
        );
      }
      objects.push({ key: flatKey(prefix, external.path), size: Number(external.size) });
    }
  }
  if (manifest.transaction_file !== "") {
    objects.push({
      key: flatKey(prefix, LANCE_TRANSACTIONS_PREFIX, manifest.transaction_file),
      size: 0,
    });
  }
  const indexUuids: string[] = [];
  for (const index of file.indexSection?.indices ?? []) {
    const bytes = index.uuid?.uuid;
    if (bytes?.byteLength !== 16) {
      throw holdfastError(
        "invalid-input",
        "readManifest",
        `Lance manifest ${key}: index ${JSON.stringify(index.name)} has no 16-byte uuid`,
        { key, code: LANCE_MALFORMED_MANIFEST },
      );
    }
    if (ours(`index ${index.name}`, index.base_id)) indexUuids.push(formatUuid(bytes));
  }
  return {
    version: Number(manifest.version),
    objects,
    indexUuids,
    sidecarFolders,
    elsewhere,
  };
}

/** A 16-byte uuid as Lance names index folders: lowercase hex, hyphenated 8-4-4-4-12. */
export function formatUuid(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Folders a cleanup of a Lance root lists for files no manifest names (the orphan sweep):
 * never `_versions/`, `_refs/`, `tree/`, `_holdfast/`, `_blobs/`, `_fri/` or `_mem_wal/`.
 */
export const LANCE_SWEPT_PREFIXES = [
  LANCE_DATA_PREFIX,
  LANCE_DELETIONS_PREFIX,
  LANCE_INDICES_PREFIX,
  LANCE_TRANSACTIONS_PREFIX,
] as const;

/**
 * True for keys cleanup may delete as Lance files: data files, their blob sidecars
 * (`data/{stem}/*.blob`), deletion, index and transaction files. Managed blobs (`_blobs/`,
 * named only inside data files), row maps (`_fri/`) and MemWAL shards (`_mem_wal/`) are
 * never Lance files to holdfast: it never deletes them.
 */
export function isLanceFileKey(key: string): boolean {
  if (key.startsWith(LANCE_DATA_PREFIX)) {
    const rest = key.slice(LANCE_DATA_PREFIX.length);
    if (rest.endsWith(".lance") && !rest.includes("/")) return true;
    return /^[^/]+\/[^/]+\.blob$/.test(rest);
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

/** Folders of a table root that hold no file a fragment may name as its own. */
const NOT_FRAGMENT_FILES = ["_versions/", "_refs/", "tree/", "_holdfast/", "_mem_wal/"];

/** A path relative to the root, inside it, in none of the folders holdfast never deletes from. */
function isOwnRelativePath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.includes("\\")) return false;
  const parts = path.split("/");
  if (parts.some((p) => p === "" || p === "." || p === "..")) return false;
  return !NOT_FRAGMENT_FILES.some((folder) => path.startsWith(folder));
}

/**
 * Whether the schema has a blob column, whose large payloads Lance writes to sidecars
 * `data/{stem}/*.blob` beside each data file: a field with a `lance.blob` extension type
 * (blob v2) or `lance-encoding:blob` metadata (legacy blobs).
 */
function hasBlobColumns(manifest: LanceManifest): boolean {
  return manifest.fields.some(
    (field) =>
      field.extension_name.startsWith("lance.blob") ||
      (field.metadata["ARROW:extension:name"] ?? "").startsWith("lance.blob") ||
      Object.keys(field.metadata).some((k) => k === "lance-encoding:blob"),
  );
}

/**
 * A key from its parts as one flat string. A concatenation is a rope over its parts, and a
 * version's keys are held while its record waits to be deleted (and in the record's set of
 * queued files): at 200,000 versions the ropes of a cleanup's keys and ETags were most of its
 * live heap.
 */
export function flatKey(...parts: string[]): string {
  return parts.join("");
}
