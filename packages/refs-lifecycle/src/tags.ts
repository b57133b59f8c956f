import { holdfastError } from "@holdfast/conditional-store";
import { type ProtocolContext, type VersionRef, validateName } from "@holdfast/protocol";
import { carriedOf, type ReferenceCodec, referenceCodecOf } from "./codec.js";
import { readCanonical, type StoredCanonical } from "./objects.js";
import { intentBound, type MutationOptions, publish } from "./publish.js";
import {
  dependencyOf,
  listReferences,
  notFound,
  type ReadReferenceOptions,
  readReference,
  requireAtomicUpdate,
  validateTarget,
} from "./references.js";
import type { TagDocument } from "./schema.js";

/** A tag as readers see it. */
export interface TagInfo {
  readonly name: string;
  readonly target: VersionRef;
  /** ETag of the canonical object (pass as `expectedEtag` to update only this state). */
  readonly etag: string;
  /** Lifecycle generation; `null` when a released client wrote the file (still authoritative). */
  readonly generation: string | null;
}

function tagInfo(name: string, stored: StoredCanonical<TagDocument>): TagInfo {
  return {
    name,
    target: { branch: stored.doc.target.branch, version: stored.doc.target.version },
    etag: stored.etag,
    generation: stored.doc.generation ?? null,
  };
}

/** holdfast's name rule, then the format's own (Lance refuses a few more names). */
function validateTagName(codec: ReferenceCodec, name: unknown): string {
  const valid = validateName(name, "tag");
  codec.validateTagName?.(valid);
  return valid;
}

/** A tag's canonical document: a fresh generation, so every write changes the bytes (R9). */
function tagDocument(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  name: string,
  target: VersionRef,
  dependsOn: Awaited<ReturnType<typeof dependencyOf>>,
): TagDocument {
  return {
    schema: 1,
    name,
    target,
    generation: codec.newGeneration(ctx),
    ...(dependsOn?.incarnation ? { branchIncarnation: dependsOn.incarnation } : {}),
  };
}

/** What a tag mutation checks before any request (invariant 6): name, target, bound, store. */
function checkTagMutation(
  ctx: ProtocolContext,
  operation: string,
  input: { name: string; target: VersionRef },
  options: MutationOptions,
): { codec: ReferenceCodec; name: string; target: VersionRef } {
  const codec = referenceCodecOf(options?.format);
  const name = validateTagName(codec, input.name);
  const target = validateTarget(input.target, "tag target", options.format);
  intentBound(options);
  requireAtomicUpdate(ctx, operation);
  return { codec, name, target };
}

/** Publishes `doc` through its intent: create-only when `expected` is null, else if-match on it. */
async function publishTag(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  doc: TagDocument,
  expected: StoredCanonical<TagDocument> | null,
  dependsOn: Awaited<ReturnType<typeof dependencyOf>>,
  options: MutationOptions,
): Promise<TagInfo> {
  const { name, target } = doc;
  const { etag } = await publish(ctx, {
    kind: "tag",
    name,
    op: expected ? "update" : "create",
    doc,
    expected,
    target,
    checkTarget: true,
    dependsOn,
    options,
    codec,
  });
  return { name, target, etag, generation: doc.generation ?? null };
}

/**
 * Creates tag `name` on `target` through an admission intent and a create-only put
 * (≤ 5 requests on the default branch). Invariant 2: once this returns, cleanup keeps the version.
 */
export async function createTag(
  ctx: ProtocolContext,
  input: { name: string; target: VersionRef },
  options: MutationOptions,
): Promise<TagInfo> {
  const { codec, name, target } = checkTagMutation(ctx, "createTag", input, options);
  const dependsOn = await dependencyOf(ctx, codec, target);
  const doc = tagDocument(ctx, codec, name, target, dependsOn);
  return publishTag(ctx, codec, doc, null, dependsOn, options);
}

/**
 * Moves tag `name` to `target`: intent, then if-match on the current (or `expectedEtag`)
 * state. A concurrent delete makes it conflict; it never re-creates the tag (R1, R2).
 */
export async function updateTag(
  ctx: ProtocolContext,
  input: { name: string; target: VersionRef; expectedEtag?: string },
  options: MutationOptions,
): Promise<TagInfo> {
  const { codec, name, target } = checkTagMutation(ctx, "updateTag", input, options);
  const current = await readCanonical(ctx, codec, "tag", name);
  if (!current) throw notFound("tag", name);
  if (input.expectedEtag !== undefined && input.expectedEtag !== current.etag) {
    throw holdfastError("conflict", "updateTag", `tag ${name} changed`, {
      code: "REF_CHANGED",
      precondition: { ifMatch: input.expectedEtag },
    });
  }
  const dependsOn = await dependencyOf(ctx, codec, target);
  // The format's own fields of the tag (Lance: createdAt, metadata) are kept.
  const doc = { ...tagDocument(ctx, codec, name, target, dependsOn), ...carriedOf(current.doc) };
  return publishTag(ctx, codec, doc, current, dependsOn, options);
}

/** Reads tag `name` from its canonical file only (never hidden by lifecycle state, R12); `null` when absent. */
export async function getTag(
  ctx: ProtocolContext,
  name: string,
  options: ReadReferenceOptions,
): Promise<TagInfo | null> {
  return readReference(ctx, "tag", name, options, tagInfo);
}

/** Lists every canonical tag, including ones written by released clients or the format's own tools (R11). */
export async function listTags(
  ctx: ProtocolContext,
  options: ReadReferenceOptions,
): Promise<TagInfo[]> {
  return listReferences(ctx, "tag", options, tagInfo);
}
