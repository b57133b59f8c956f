import { holdfastError } from "@holdfast/conditional-store";
import type { DatasetFormat } from "@holdfast/dataset";
import {
  DEFAULT_BRANCH,
  type ProtocolContext,
  type VersionRef,
  validateName,
} from "@holdfast/protocol";
import { z } from "zod";
import { type ReferenceCodec, referenceCodecOf, requireBranchWrites } from "./codec.js";
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
import type { BranchDocument } from "./schema.js";

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

/**
 * Creates branch `name` forked at `parent` (or a root branch when `parent` is null):
 * intent, admission and existence of the parent version, create-only put, then the
 * parent's termination fence and incarnation (R8, R10). Invariant 2.
 */
export async function createBranch(
  ctx: ProtocolContext,
  input: { name: string; parent: VersionRef | null; metadata?: Record<string, string> },
  options: MutationOptions,
): Promise<BranchInfo> {
  const codec = referenceCodecOf(options?.format);
  const { format } = options;
  requireBranchWrites(codec, format, "createBranch");
  const name = validateName(input.name, "branch");
  const parent =
    input.parent === null ? null : validateTarget(input.parent, "branch parent", format);
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
  await requireNoStoredVersions(ctx, format, name);
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
  options: MutationOptions,
): Promise<BranchInfo> {
  const codec = referenceCodecOf(options?.format);
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
  options: MutationOptions,
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
  options: ReadReferenceOptions,
): Promise<BranchInfo | null> {
  return readReference(ctx, "branch", name, options, branchInfo);
}

/**
 * Lists every canonical branch reference. The default branch and branches that exist only
 * through their manifests have no reference file and are not listed here.
 */
export async function listBranches(
  ctx: ProtocolContext,
  options: ReadReferenceOptions,
): Promise<BranchInfo[]> {
  return listReferences(ctx, "branch", options, branchInfo);
}

/**
 * A new branch name must not already have manifests (left by a branch whose reference file
 * is gone, or committed to without one): the new branch would inherit versions it never
 * made. One single-key LIST on holdfast's layout; `conflict` BRANCH_HAS_VERSIONS otherwise.
 */
async function requireNoStoredVersions(
  ctx: ProtocolContext,
  format: DatasetFormat,
  name: string,
): Promise<void> {
  const prefix = await format.storedVersionsFolder(ctx, name);
  if (prefix === null) return;
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
