import { holdfastError } from "@holdfast/conditional-store";
import { LANCE_MALFORMED_MANIFEST, UnsupportedLanceDatasetError } from "./errors.js";

/**
 * Every feature-flag bit of today's Lance manifests (`reader_feature_flags`,
 * `writer_feature_flags`; the bits are the same in both words), by the name holdfast gives
 * it (Lance's own constant, in kebab case), whether holdfast implements it, and what it
 * means for the files a version needs. docs/lance.md ("Feature flags") is this table.
 */
export const LANCE_FEATURE_FLAGS = [
  flag(
    0,
    "deletion-files",
    true,
    "fragments name deletion files (`_deletions/`), kept with the version",
  ),
  flag(
    1,
    "stable-row-ids",
    true,
    "fragments carry row-id and version sequences: inline, or in files the manifest names (kept)",
  ),
  flag(2, "use-v2-format-deprecated", true, "retired marker; no files of its own"),
  flag(3, "table-config", true, "the manifest has a config map; no files of its own"),
  flag(
    4,
    "base-paths",
    true,
    "files may live under other roots (`base_paths`, `base_id`): protected, never deleted by this root's cleanup",
  ),
  flag(
    5,
    "disable-transaction-file",
    true,
    "the transaction is inline in the manifest (no `_transactions/` file)",
  ),
  flag(
    6,
    "unstable-data-overlay-files",
    false,
    "overlay files (unstable in Lance, refused by its release builds)",
  ),
  flag(
    7,
    "covered-index-metadata",
    true,
    "indices declare covering columns; their files stay in `_indices/{uuid}/`",
  ),
  flag(
    8,
    "mixed-data-file-versions",
    true,
    "data files of different exact format versions; each still named by its fragment",
  ),
  flag(
    9,
    "frag-reuse-with-stable-row-ids",
    false,
    "reserved in Lance 14 (its own builds refuse it)",
  ),
  flag(
    10,
    "fragment-reuse-index",
    false,
    "tagged fragment reuse index with row maps under `_fri/`",
  ),
  flag(
    11,
    "semantic-types",
    true,
    "semantic type contract (data storage 2.3); no files of its own",
  ),
] as const;

/** The name of a known bit, or `unknown-bit-N` for any bit from 12 on. */
export type LanceFeatureFlagName =
  | (typeof LANCE_FEATURE_FLAGS)[number]["name"]
  | `unknown-bit-${number}`;

/** Bits holdfast implements (reader and writer words alike). */
export const IMPLEMENTED_FEATURE_FLAGS: bigint = LANCE_FEATURE_FLAGS.reduce(
  (mask, f) => (f.implemented ? mask | f.value : mask),
  0n,
);

/** Reader flag 16: files under other roots. */
export const FLAG_BASE_PATHS = 1n << 4n;

/** Capabilities whose reader and writer bits Lance always sets together. */
const PAIRED_FLAGS = [8, 11] as const;

/** The name holdfast gives feature-flag bit `bit` (0-based). */
export function featureFlagName(bit: number): LanceFeatureFlagName {
  return LANCE_FEATURE_FLAGS[bit]?.name ?? `unknown-bit-${bit}`;
}

/**
 * Refuses a manifest that sets any reader or writer bit holdfast does not implement,
 * naming the first such bit (UnsupportedLanceDatasetError `reader-feature-flags` or
 * `writer-feature-flags`, with `flag`), and one whose paired bits disagree (malformed, as
 * Lance itself refuses it). Called before anything the manifest names is decided.
 */
export function checkFeatureFlags(reader: string, writer: string, key: string): void {
  const words = [
    ["reader", BigInt(reader)],
    ["writer", BigInt(writer)],
  ] as const;
  for (const [word, value] of words) {
    const unknown = value & ~IMPLEMENTED_FEATURE_FLAGS;
    if (unknown === 0n) continue;
    const bit = lowestBit(unknown);
    const name = featureFlagName(bit);
    throw new UnsupportedLanceDatasetError(
      word === "reader" ? "reader-feature-flags" : "writer-feature-flags",
      key,
      `Lance manifest ${key} sets ${word} feature flag ${1n << BigInt(bit)} (${name}), which this holdfast does not implement`,
      "upgrade @holdfast/format-lance, or clean this table with Lance's own tools",
      { flag: name },
    );
  }
  for (const bit of PAIRED_FLAGS) {
    const mask = 1n << BigInt(bit);
    if ((words[0][1] & mask) !== (words[1][1] & mask)) {
      throw holdfastError(
        "invalid-input",
        "readManifest",
        `Lance manifest ${key} sets only one of the reader and writer ${featureFlagName(bit)} bits`,
        { key, code: LANCE_MALFORMED_MANIFEST },
      );
    }
  }
}

// --- utils ---

function flag<const N extends string>(bit: number, name: N, implemented: boolean, means: string) {
  return { bit, value: 1n << BigInt(bit), name, implemented, means } as const;
}

function lowestBit(value: bigint): number {
  let bit = 0;
  while (((value >> BigInt(bit)) & 1n) === 0n) bit += 1;
  return bit;
}
