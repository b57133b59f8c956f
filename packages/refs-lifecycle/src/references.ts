import { holdfastError } from "@holdfast/conditional-store";
import {
  type DatasetFormat,
  DEFAULT_BRANCH,
  defaultFormat,
  type ProtocolContext,
  type VersionRef,
  validateName,
  validateVersion,
  versionsPrefix,
} from "@holdfast/dataset";
import { z } from "zod";
import { carriedOf, type ReferenceCodec, referenceCodecOf, requireBranchWrites } from "./codec.js";
import { listCanonical, readCanonical, type StoredCanonical } from "./objects.js";
import { type Dependency, intentBound, type MutationOptions, publish } from "./publish.js";
import type { BranchDocument, TagDocument } from "./schema.js";

/** A tag as readers see it. */
export interface TagInfo {
  readonly name: string;
  readonly target: VersionRef;
  /** ETag of the canonical object (pass as `expectedEtag` to update only this state). */
  readonly etag: string;
  /** Lifecycle generation; `null` when a released client wrote the file (still authoritative). */
  readonly generation: string | null;
}

/** A branch reference as readers see it. */
export interface BranchInfo {
  readonly name: string;
  readonly parent: VersionRef | null;
  readonly metadata: Record<string, string>;
  readonly etag: string;
  readonly generation: string | null;
  /** Incarnation id; `null` when a released client wrote the file. */
  readonly incarnation: string | null;
}

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
function validateTarget(
  target: unknown,
  what: string,
  format: DatasetFormat | undefined,
): VersionRef {
  if (typeof target !== "object" || target === null) {
    throw holdfastError("invalid-input", "validate", `${what} must be { branch, version }`);
  }
  const { branch, version } = target as { branch?: unknown; version?: unknown };
  const ref = { branch: validateName(branch, "branch"), version: validateVersion(version) };
  // A format that finds a target's manifest by request (targetManifest) checks it there.
  if (!referenceCodecOf(format).targetManifest) {
    (format ?? defaultFormat).manifestKey(ref.branch, ref.version);
  }
  return ref;
}

/** Options of the reference readers. */
export interface ReadReferenceOptions {
  /** The dataset's format (how its references are stored). @default the holdfast format */
  readonly format?: DatasetFormat | undefined;
}

const MetadataSchema = z.record(z.string().max(1024), z.string().max(64 * 1024));

function validateMetadata(metadata: unknown): Record<string, string> {
  const parsed = MetadataSchema.safeParse(metadata);
  if (!parsed.success) {
    throw holdfastError(
      "invalid-input",
      "validate",
      "branch metadata must map strings to strings",
      {
        code: "INVALID_METADATA",
        cause: parsed.error,
      },
    );
  }
  return parsed.data;
}

/**
 * The non-root branch a reference to `target` depends on, with the incarnation observed
 * now (before the intent). Root branches (the default branch, branches that exist only
 * through their manifests) cannot be deleted by this package and need no fence check.
 */
async function dependencyOf(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  target: VersionRef | null,
): Promise<Dependency | null> {
  if (!target || target.branch === DEFAULT_BRANCH) return null;
  const branch = await readCanonical(ctx, codec, "branch", target.branch);
  if (!branch) return null;
  return { branch: target.branch, incarnation: (branch.doc as BranchDocument).incarnation };
}

function tagInfo(name: string, stored: StoredCanonical<TagDocument>): TagInfo {
  return {
    name,
    target: { branch: stored.doc.target.branch, version: stored.doc.target.version },
    etag: stored.etag,
    generation: stored.doc.generation ?? null,
  };
}

function branchInfo(name: string, stored: StoredCanonical<BranchDocument>): BranchInfo {
  return {
    name,
    parent: stored.doc.parent,
    metadata: stored.doc.metadata ?? {},
    etag: stored.etag,
    generation: stored.doc.generation ?? null,
    incarnation: stored.doc.incarnation ?? null,
  };
}

/** holdfast's name rule, then the format's own (Lance refuses a few more names). */
function validateTagName(codec: ReferenceCodec, name: unknown): string {
  const valid = validateName(name, "tag");
  codec.validateTagName?.(valid);
  return valid;
}

function notFound(kind: "tag" | "branch", name: string) {
  return holdfastError("not-found", "readReference", `${kind} ${name} does not exist`, {
    code: "REF_NOT_FOUND",
  });
}

// --- tags ---

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

/**
 * Creates tag `name` on `target` through an admission intent and a create-only put
 * (≤ 5 requests on the default branch). Invariant 2: once this returns, cleanup keeps the version.
 */
export async function createTag(
  ctx: ProtocolContext,
  input: { name: string; target: VersionRef },
  options: MutationOptions = {},
): Promise<TagInfo> {
  const codec = referenceCodecOf(options.format);
  const name = validateTagName(codec, input.name);
  const target = validateTarget(input.target, "tag target", options.format);
  intentBound(options);
  requireAtomicUpdate(ctx, "createTag");
  const dependsOn = await dependencyOf(ctx, codec, target);
  const doc = tagDocument(ctx, codec, name, target, dependsOn);
  const { etag } = await publish(ctx, {
    kind: "tag",
    name,
    op: "create",
    doc,
    expected: null,
    target,
    checkTarget: true,
    dependsOn,
    options,
    codec,
  });
  return { name, target, etag, generation: doc.generation ?? null };
}

/**
 * Moves tag `name` to `target`: intent, then if-match on the current (or `expectedEtag`)
 * state. A concurrent delete makes it conflict; it never re-creates the tag (R1, R2).
 */
export async function updateTag(
  ctx: ProtocolContext,
  input: { name: string; target: VersionRef; expectedEtag?: string },
  options: MutationOptions = {},
): Promise<TagInfo> {
  const codec = referenceCodecOf(options.format);
  const name = validateTagName(codec, input.name);
  const target = validateTarget(input.target, "tag target", options.format);
  intentBound(options);
  requireAtomicUpdate(ctx, "updateTag");
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
  const { etag } = await publish(ctx, {
    kind: "tag",
    name,
    op: "update",
    doc,
    expected: current,
    target,
    checkTarget: true,
    dependsOn,
    options,
    codec,
  });
  return { name, target, etag, generation: doc.generation ?? null };
}

/** Reads tag `name` from its canonical file only (never hidden by lifecycle state, R12); `null` when absent. */
export async function getTag(
  ctx: ProtocolContext,
  name: string,
  options: ReadReferenceOptions = {},
): Promise<TagInfo | null> {
  const codec = referenceCodecOf(options.format);
  validateName(name, "tag");
  const stored = await readCanonical(ctx, codec, "tag", name);
  return stored ? tagInfo(name, stored) : null;
}

/** Lists every canonical tag, including ones written by released clients or the format's own tools (R11). */
export async function listTags(
  ctx: ProtocolContext,
  options: ReadReferenceOptions = {},
): Promise<TagInfo[]> {
  const codec = referenceCodecOf(options.format);
  const tags: TagInfo[] = [];
  for await (const stored of listCanonical(ctx, codec, "tag")) {
    tags.push(tagInfo(stored.name, stored));
  }
  return tags;
}

// --- branches ---

/**
 * Creates branch `name` forked at `parent` (or a root branch when `parent` is null):
 * intent, admission and existence of the parent version, create-only put, then the
 * parent's termination fence and incarnation (R8, R10). Invariant 2.
 */
export async function createBranch(
  ctx: ProtocolContext,
  input: { name: string; parent: VersionRef | null; metadata?: Record<string, string> },
  options: MutationOptions = {},
): Promise<BranchInfo> {
  const codec = referenceCodecOf(options.format);
  requireBranchWrites(codec, options.format, "createBranch");
  const name = validateName(input.name, "branch");
  const parent =
    input.parent === null ? null : validateTarget(input.parent, "branch parent", options.format);
  const metadata = input.metadata === undefined ? undefined : validateMetadata(input.metadata);
  if (name === DEFAULT_BRANCH) {
    throw holdfastError(
      "invalid-input",
      "createBranch",
      `${DEFAULT_BRANCH} is the default branch`,
      {
        code: "DEFAULT_BRANCH",
      },
    );
  }
  if (parent?.branch === name) {
    throw holdfastError("invalid-input", "createBranch", `branch ${name} cannot fork from itself`, {
      code: "INVALID_PARENT",
    });
  }
  intentBound(options);
  requireAtomicUpdate(ctx, "createBranch");
  await requireNoStoredVersions(ctx, name);
  const dependsOn = await dependencyOf(ctx, codec, parent);
  const doc: BranchDocument = {
    schema: 1,
    name,
    parent,
    ...(metadata ? { metadata } : {}),
    generation: codec.newGeneration(ctx),
    incarnation: ctx.ids.next(),
    ...(dependsOn?.incarnation ? { parentIncarnation: dependsOn.incarnation } : {}),
  };
  const { etag } = await publish(ctx, {
    kind: "branch",
    name,
    op: "create",
    doc,
    expected: null,
    target: parent,
    checkTarget: parent !== null,
    dependsOn,
    options,
    codec,
  });
  return branchInfo(name, { key: "", etag, lastModified: new Date(0), doc });
}

/**
 * Replaces a branch's metadata: intent, then if-match on the state read (or
 * `expectedEtag`). A branch deleted in between stays deleted: the if-match conflicts (R1).
 */
export async function replaceBranchMetadata(
  ctx: ProtocolContext,
  input: { name: string; metadata: Record<string, string>; expectedEtag?: string },
  options: MutationOptions = {},
): Promise<BranchInfo> {
  const codec = referenceCodecOf(options.format);
  requireBranchWrites(codec, options.format, "replaceBranchMetadata");
  const name = validateName(input.name, "branch");
  const metadata = validateMetadata(input.metadata);
  intentBound(options);
  requireAtomicUpdate(ctx, "replaceBranchMetadata");
  const current = await readCanonical(ctx, codec, "branch", name);
  if (!current) throw notFound("branch", name);
  return replaceBranchMetadataAt(ctx, codec, current, metadata, input.expectedEtag, options);
}

/** The conditional half of {@link replaceBranchMetadata}, from the state read. */
async function replaceBranchMetadataAt(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  current: StoredCanonical<BranchDocument>,
  metadata: Record<string, string>,
  expectedEtag: string | undefined,
  options: MutationOptions = {},
): Promise<BranchInfo> {
  const name = current.doc.name;
  if (expectedEtag !== undefined && expectedEtag !== current.etag) {
    throw holdfastError("conflict", "replaceBranchMetadata", `branch ${name} changed`, {
      code: "REF_CHANGED",
      precondition: { ifMatch: expectedEtag },
    });
  }
  const doc: BranchDocument = { ...current.doc, metadata, generation: codec.newGeneration(ctx) };
  const { etag } = await publish(ctx, {
    kind: "branch",
    name,
    op: "metadata",
    doc,
    expected: current,
    target: doc.parent,
    checkTarget: false,
    dependsOn: null,
    options,
    codec,
  });
  return branchInfo(name, { key: current.key, etag, lastModified: new Date(0), doc });
}

/** Reads branch reference `name` from its canonical file only; `null` when absent. */
export async function getBranch(
  ctx: ProtocolContext,
  name: string,
  options: ReadReferenceOptions = {},
): Promise<BranchInfo | null> {
  const codec = referenceCodecOf(options.format);
  validateName(name, "branch");
  const stored = await readCanonical(ctx, codec, "branch", name);
  return stored ? branchInfo(name, stored) : null;
}

/**
 * Lists every canonical branch reference. The default branch and branches that exist only
 * through their manifests have no reference file and are not listed here.
 */
export async function listBranches(
  ctx: ProtocolContext,
  options: ReadReferenceOptions = {},
): Promise<BranchInfo[]> {
  const codec = referenceCodecOf(options.format);
  const branches: BranchInfo[] = [];
  for await (const stored of listCanonical(ctx, codec, "branch")) {
    branches.push(branchInfo(stored.name, stored));
  }
  return branches;
}

/**
 * A new branch name must not already have manifests (left by a branch whose reference file
 * is gone, or committed to without one): the new branch would inherit versions it never
 * made. One single-key LIST; `conflict` BRANCH_HAS_VERSIONS otherwise.
 */
async function requireNoStoredVersions(ctx: ProtocolContext, name: string): Promise<void> {
  const prefix = versionsPrefix(name);
  const page = await ctx.store.list(prefix, { pageSize: 1 });
  if (page.objects.length === 0) return;
  throw holdfastError(
    "conflict",
    "createBranch",
    `branch name ${name} already has versions stored under ${prefix}`,
    {
      key: prefix,
      code: "BRANCH_HAS_VERSIONS",
      hint: "choose another name, or commit to that branch as it is",
    },
  );
}
