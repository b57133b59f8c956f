import { HoldfastError } from "@holdfast/conditional-store";

/**
 * What a Lance dataset used that holdfast does not (yet) know how to clean safely. Each one
 * makes the format refuse instead of guessing which files are safe to delete.
 */
export type LanceFeature =
  /** A manifest sets a reader feature flag this adapter does not implement (named in `flag`). */
  | "reader-feature-flags"
  /** A manifest sets a writer feature flag this adapter does not implement (named in `flag`). */
  | "writer-feature-flags"
  /** A file's `base_id` names no entry of the manifest's `base_paths`. */
  | "base-paths"
  /** A fragment's row-id or version-sequence file lies where holdfast never deletes or keeps (outside the table's own folders). */
  | "external-file"
  /** A detached version (`_versions/d{N}.manifest`) whose files cleanup could not protect. */
  | "detached-version"
  /** `_versions/` mixes the V1 and V2 manifest naming schemes. */
  | "mixed-naming"
  /** A branch folder `tree/{name}/` without its `_refs/branches/{name}.json`. */
  | "zombie-branch"
  /** An object under `_refs/` that is not a Lance tag or branch. */
  | "foreign-reference"
  /** holdfast reference lifecycle state (`_holdfast/refs/`) on a Lance dataset. */
  | "holdfast-references"
  /** A Lance branch whose folder `tree/{name}/` lies inside another root's own folders (`a/data`). */
  | "branch-layout";

/** Code of {@link UnsupportedLanceDatasetError}. */
export const LANCE_UNSUPPORTED = "LANCE_UNSUPPORTED";
/** Code of a manifest whose bytes do not decode (footer, length prefix or protobuf). */
export const LANCE_MALFORMED_MANIFEST = "LANCE_MALFORMED_MANIFEST";
/** Code of a `_refs/` JSON file that does not parse as a Lance tag or branch. */
export const LANCE_MALFORMED_REFERENCE = "LANCE_MALFORMED_REFERENCE";

/**
 * The dataset uses a Lance feature this adapter does not understand: kind `unsupported`,
 * code `LANCE_UNSUPPORTED`, with `feature` and the key where it was met. Thrown before any
 * deletion is decided; nothing is written.
 */
export class UnsupportedLanceDatasetError extends HoldfastError {
  readonly feature: LanceFeature;
  /** For a feature flag: its name (`unstable-data-overlay-files`, `unknown-bit-12`, ...). */
  readonly flag?: string;

  constructor(
    feature: LanceFeature,
    key: string,
    message: string,
    hint?: string,
    detail: { readonly flag?: string } = {},
  ) {
    super(message, {
      kind: "unsupported",
      operation: "lance",
      key,
      code: LANCE_UNSUPPORTED,
      hint:
        hint ??
        "holdfast refuses to clean what it does not fully understand; use Lance's own tools",
    });
    this.feature = feature;
    if (detail.flag !== undefined) this.flag = detail.flag;
  }
}

/** True for an {@link UnsupportedLanceDatasetError} (optionally of one feature); checks `code`, so copies from another module instance count. */
export function isUnsupportedLance(
  value: unknown,
  feature?: LanceFeature,
): value is UnsupportedLanceDatasetError {
  if (
    !(value instanceof HoldfastError) &&
    !(value instanceof Error && value.name === "HoldfastError")
  )
    return false;
  const error = value as Partial<UnsupportedLanceDatasetError>;
  return error.code === LANCE_UNSUPPORTED && (feature === undefined || error.feature === feature);
}
