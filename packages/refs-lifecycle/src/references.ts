import { holdfastError } from "@holdfast/conditional-store";
import { type DatasetFormat, validateVersion } from "@holdfast/dataset";
import {
  DEFAULT_BRANCH,
  type ProtocolContext,
  type VersionRef,
  validateName,
} from "@holdfast/protocol";
import { type ReferenceCodec, referenceCodecOf } from "./codec.js";
import { listCanonical, readCanonical, type StoredCanonical } from "./objects.js";
import type { Dependency } from "./publish.js";
import type { BranchDocument, ReferenceKind, TagDocument } from "./schema.js";

// What tag and branch mutations share (tags.ts, branches.ts, delete.ts): the store check,
// target validation, the reader options and the branch a reference depends on.

/** Refuses every reference mutation on a store whose compare-and-swap is not atomic (R3). */
export function requireAtomicUpdate(ctx: ProtocolContext, operation: string): void {
  if (!ctx.store.capabilities.atomicConditionalUpdate) {
    throw holdfastError(
      "unsupported",
      operation,
      `${ctx.store.backend} has no atomic conditional update; reference mutation is refused`,
      {
        code: "CAS_UNSUPPORTED",
        hint: "a read-then-overwrite emulation could resurrect a concurrently deleted reference",
      },
    );
  }
}

/**
 * Checks a reference target before any request: a branch name, a version, and a manifest
 * key the dataset's format can name (a format with `targetManifest`, such as Lance's,
 * whose branches name their manifests in their own scheme, finds it when it checks it).
 */
export function validateTarget(target: unknown, what: string, format: DatasetFormat): VersionRef {
  if (typeof target !== "object" || target === null) {
    throw holdfastError("invalid-input", "validate", `${what} must be { branch, version }`);
  }
  const { branch, version } = target as { branch?: unknown; version?: unknown };
  const ref = { branch: validateName(branch, "branch"), version: validateVersion(version) };
  // A format that finds a target's manifest by request (targetManifest) checks it there.
  if (!referenceCodecOf(format).targetManifest) {
    format.manifestKey(ref.branch, ref.version);
  }
  return ref;
}

/** Options of the reference readers. */
export interface ReadReferenceOptions {
  /** The dataset's format, as opening it bound it (how its references are stored). */
  readonly format: DatasetFormat;
}

/**
 * The non-root branch a reference to `target` depends on, with the incarnation observed
 * now (before the intent). Root branches (the default branch, branches that exist only
 * through their manifests) cannot be deleted by this package and need no fence check.
 */
export async function dependencyOf(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  target: VersionRef | null,
): Promise<Dependency | null> {
  if (!target || target.branch === DEFAULT_BRANCH) return null;
  const branch = await readCanonical(ctx, codec, "branch", target.branch);
  if (!branch) return null;
  return { branch: target.branch, incarnation: (branch.doc as BranchDocument).incarnation };
}

/** The typed `not-found` a reader or mutation of an absent reference raises. */
export function notFound(kind: "tag" | "branch", name: string) {
  return holdfastError("not-found", "readReference", `${kind} ${name} does not exist`, {
    code: "REF_NOT_FOUND",
  });
}

/** A stored canonical of `kind` as the reader views it (TagInfo, BranchInfo). */
type InfoOf<K extends ReferenceKind, I> = (
  name: string,
  stored: StoredCanonical<K extends "tag" ? TagDocument : BranchDocument>,
) => I;

/** Reads reference `name` of `kind` from its canonical file only; `null` when absent. */
export async function readReference<K extends ReferenceKind, I>(
  ctx: ProtocolContext,
  kind: K,
  name: string,
  options: ReadReferenceOptions,
  info: InfoOf<K, I>,
): Promise<I | null> {
  const codec = referenceCodecOf(options?.format);
  validateName(name, kind);
  const stored = await readCanonical(ctx, codec, kind, name);
  return stored ? info(name, stored) : null;
}

/** Lists every canonical reference of `kind`, whoever wrote its file (R11). */
export async function listReferences<K extends ReferenceKind, I>(
  ctx: ProtocolContext,
  kind: K,
  options: ReadReferenceOptions,
  info: InfoOf<K, I>,
): Promise<I[]> {
  const codec = referenceCodecOf(options?.format);
  const found: I[] = [];
  for await (const stored of listCanonical(ctx, codec, kind)) found.push(info(stored.name, stored));
  return found;
}
