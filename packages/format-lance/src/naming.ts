import { holdfastError } from "@holdfast/conditional-store";

/** Lance keeps a branch's manifests in `_versions/` under the branch's root. */
export const LANCE_VERSIONS_PREFIX = "_versions/";
/** Largest u64: V2 names a version N by `u64::MAX - N`, zero-padded to 20 digits. */
const U64_MAX = 18446744073709551615n;
const V2_DIGITS = 20;

/**
 * How a dataset names its manifests. `v1`: `_versions/{N}.manifest`; `v2`:
 * `_versions/{u64::MAX - N:020}.manifest` (newest first in a listing). One dataset uses
 * one scheme; it is detected from the names.
 */
export type LanceNaming = "v1" | "v2";

/** What one key under `_versions/` is. */
export type VersionsEntryKind =
  | { kind: "manifest"; naming: LanceNaming; version: number }
  /** `d{N}.manifest`: a detached version, not part of the history. */
  | { kind: "detached" }
  /** `.tmp*`: a manifest being written (a leftover only after a failed commit). */
  | { kind: "staging" }
  /** Anything else Lance keeps there (`latest_version_hint.json`, `_latest.manifest`). */
  | { kind: "other" };

/** Classifies a key under `_versions/` by its name. Never guesses a version from an odd name. */
export function classifyVersionsKey(key: string): VersionsEntryKind {
  const name = key.startsWith(LANCE_VERSIONS_PREFIX)
    ? key.slice(LANCE_VERSIONS_PREFIX.length)
    : key;
  if (name.includes("/")) return { kind: "other" };
  if (name.startsWith(".tmp")) return { kind: "staging" };
  if (!name.endsWith(".manifest")) return { kind: "other" };
  const stem = name.slice(0, -".manifest".length);
  if (/^d\d+$/.test(stem)) return { kind: "detached" };
  if (!/^\d+$/.test(stem)) return { kind: "other" };
  if (stem.length === V2_DIGITS) {
    const version = U64_MAX - BigInt(stem);
    return { kind: "manifest", naming: "v2", version: toSafeVersion(version, key) };
  }
  // V1 numbers are never zero-padded (a padded name would make two keys for one version).
  if (stem.length > 1 && stem.startsWith("0")) return { kind: "other" };
  return { kind: "manifest", naming: "v1", version: toSafeVersion(BigInt(stem), key) };
}

/** The manifest key of `version` under `naming`. */
export function lanceManifestKey(naming: LanceNaming, version: number): string {
  if (!Number.isSafeInteger(version) || version < 0) {
    throw holdfastError("invalid-input", "validate", `invalid Lance version ${String(version)}`, {
      code: "INVALID_VERSION",
    });
  }
  if (naming === "v1") return `${LANCE_VERSIONS_PREFIX}${version}.manifest`;
  const inverted = (U64_MAX - BigInt(version)).toString().padStart(V2_DIGITS, "0");
  return `${LANCE_VERSIONS_PREFIX}${inverted}.manifest`;
}

// --- utils ---

function toSafeVersion(version: bigint, key: string): number {
  if (version < 0n || version > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw holdfastError(
      "invalid-input",
      "listVersions",
      `Lance manifest ${key} names version ${version}, beyond what holdfast handles exactly`,
      { key, code: "INVALID_VERSION" },
    );
  }
  return Number(version);
}
