import { holdfastError } from "@holdfast/conditional-store";
import { validateName } from "@holdfast/protocol";
import { isValidName } from "@holdfast/protocol/internal";

/** Dataset identity object, written once by `initDataset`. */
export const DATASET_KEY = "_holdfast/dataset.json";
/** Data files live under this prefix and are immutable. */
export const DATA_PREFIX = "data/";
/** Manifests live under `_versions/{branch}/`. */
export const VERSIONS_PREFIX = "_versions/";

/** Largest version number: fits in 20 digits and stays an exact JS integer. */
export const MAX_VERSION = Number.MAX_SAFE_INTEGER;

const VERSION_DIGITS = 20;
const MANIFEST_KEY = /^_versions\/([^/]+)\/(\d{20})\.json$/;

/** Checks a version number: an integer in 1..MAX_VERSION; throws `invalid-input`. */
export function validateVersion(version: unknown): number {
  if (typeof version !== "number" || !Number.isSafeInteger(version) || version < 1) {
    throw holdfastError(
      "invalid-input",
      "validate",
      `invalid version ${String(version)}: not an integer >= 1`,
      {
        code: "INVALID_VERSION",
      },
    );
  }
  return version;
}

/** Zero-padded 20-digit version, so keys sort in version order. */
export function formatVersion(version: number): string {
  return validateVersion(version).toString().padStart(VERSION_DIGITS, "0");
}

/** `_versions/{branch}/` */
export function versionsPrefix(branch: string): string {
  return `${VERSIONS_PREFIX}${validateName(branch, "branch")}/`;
}

/** `_versions/{branch}/{version:020d}.json`: the manifest of one version. */
export function manifestKey(branch: string, version: number): string {
  return `${versionsPrefix(branch)}${formatVersion(version)}.json`;
}

/** Inverse of {@link manifestKey}; `null` for any key that is not a well-formed manifest key. */
export function parseManifestKey(key: string): { branch: string; version: number } | null {
  const match = MANIFEST_KEY.exec(key);
  if (!match) return null;
  const branch = match[1]!;
  const version = Number(match[2]!);
  if (!isValidName(branch) || !Number.isSafeInteger(version) || version < 1) return null;
  return { branch, version };
}

/** A fresh data-file key `data/{ulid}.bin`. */
export function dataKey(id: string): string {
  return `${DATA_PREFIX}${id}.bin`;
}

/** True for keys under `data/` (what cleanup may delete as data files). */
export function isDataKey(key: string): boolean {
  return key.startsWith(DATA_PREFIX) && key.length > DATA_PREFIX.length;
}
