import { encodeJson, holdfastError } from "@holdfast/conditional-store";
import { type DatasetFormat, holdfastLayout } from "@holdfast/dataset";
import { requireFormat } from "@holdfast/dataset/internal";
import type { ProtocolContext } from "@holdfast/protocol";
import { parseStored } from "@holdfast/protocol/internal";
import type { ReferenceCensus } from "@holdfast/retirement";
import {
  type BranchDocument,
  branchDocumentSchema,
  type ReferenceKind,
  type TagDocument,
  tagDocumentSchema,
} from "./schema.js";

/** A canonical reference document as the lifecycle handles it, whatever its bytes look like. */
export type CanonicalDocument = TagDocument | BranchDocument;

/**
 * The format's own fields of a stored reference that holdfast does not model (Lance:
 * `createdAt`, `metadata`), carried through every rewrite of it. holdfast's own JSON has none.
 */
export interface Carried {
  readonly carried?: Readonly<Record<string, unknown>> | undefined;
}

/** The carried fields of a decoded document, to spread into its replacement. */
export function carriedOf(doc: CanonicalDocument): Carried {
  const carried = (doc as Carried).carried;
  return carried === undefined ? {} : { carried };
}

/** What the write of a canonical just checked, for formats that record it (Lance: the manifest's size). */
export interface WrittenTarget {
  /** Size in bytes of the target version's manifest, when this write checked that it exists. */
  readonly manifestSize?: number | undefined;
}

/**
 * How a dataset format stores its canonical references at `_refs/{tags|branches}/{name}.json`,
 * so tags written through holdfast are the format's own tags (Lance's JSON on a Lance table,
 * docs/lance.md) while every lifecycle sidecar stays under `_holdfast/refs/`.
 */
export interface ReferenceCodec {
  /** Checks a tag name beyond holdfast's own rule; throws `invalid-input`. */
  validateTagName?(name: string): void;
  /** A fresh generation for one write: unique, so every write changes the bytes (R9). */
  newGeneration(ctx: ProtocolContext): string;
  /** Parses a stored canonical; a malformed one throws `invalid-input` (callers fail closed). */
  decode(kind: ReferenceKind, body: Uint8Array, key: string): CanonicalDocument;
  /** Bytes of a canonical document. */
  encode(kind: ReferenceKind, doc: CanonicalDocument, written: WrittenTarget): Uint8Array;
  /** False when branches are read-only through holdfast (created and deleted by the format's own tools). */
  readonly writesBranches: boolean;
  /** The reference census cleanup needs on this format (intents first, then its references). */
  census?(ctx: ProtocolContext): ReferenceCensus;
  /**
   * The manifest proving a reference's target exists (its key and size), or `null` when the
   * version has none, for a format that finds some manifests by request rather than by
   * `format.manifestKey` (a Lance branch names its manifests in its own scheme). Without
   * it, a HEAD of `format.manifestKey(branch, version)`.
   */
  targetManifest?(
    ctx: ProtocolContext,
    format: DatasetFormat,
    target: { readonly branch: string; readonly version: number },
  ): Promise<{ key: string; size: number } | null>;
}

/** A `DatasetFormat` that says how its references are stored. */
export interface ReferenceFormat extends DatasetFormat {
  readonly references: ReferenceCodec;
}

/** holdfast's own canonical JSON (released schema 1 plus lifecycle fields). */
export const holdfastReferenceCodec: ReferenceCodec = {
  newGeneration: (ctx) => ctx.ids.next(),
  decode(kind, body, key) {
    const schema = kind === "tag" ? tagDocumentSchema : branchDocumentSchema;
    return parseStored(schema, body, key, "readReference");
  },
  encode: (_kind, doc) => encodeJson(doc),
  writesBranches: true,
};

/**
 * The reference codec of `format`: its own when it declares one, holdfast's for the holdfast
 * format. Any other format is refused (`unsupported`, REFS_UNSUPPORTED), and a call without
 * one (`invalid-input`, FORMAT_REQUIRED), before any request: holdfast never writes or
 * interprets its own reference files inside a dataset whose references it does not know.
 */
export function referenceCodecOf(format: DatasetFormat): ReferenceCodec {
  requireFormat(format, "references");
  if (format === holdfastLayout) return holdfastReferenceCodec;
  const declared = (format as Partial<ReferenceFormat>).references;
  if (declared) return declared;
  if (format.name === holdfastLayout.name) return holdfastReferenceCodec;
  throw holdfastError(
    "unsupported",
    "references",
    `the ${format.name} format does not say how it stores tags and branches`,
    {
      code: "REFS_UNSUPPORTED",
      hint: "give the DatasetFormat a `references` codec (see ReferenceFormat)",
    },
  );
}

/** Refuses a branch mutation on a format whose branches holdfast does not write. */
export function requireBranchWrites(
  codec: ReferenceCodec,
  format: DatasetFormat,
  operation: string,
): void {
  if (codec.writesBranches) return;
  throw holdfastError(
    "unsupported",
    operation,
    `branches of a ${format.name} dataset are created and deleted by its own tools`,
    {
      code: "REFS_UNSUPPORTED",
      hint: "use the format's own branch commands (LanceDB: table.branches); holdfast reads them and keeps their fork points",
    },
  );
}
