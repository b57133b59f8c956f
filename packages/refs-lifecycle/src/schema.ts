import { VersionRefSchema } from "@holdfast/protocol";
import { NameSchema } from "@holdfast/protocol/internal";
import { z } from "zod";

// --- released schema (what any client may rely on) ---

/**
 * Released schema 1 of a tag at `_refs/tags/{name}.json`. A released client parses with
 * this schema (unknown fields stripped on read, dropped on rewrite); every file holdfast
 * writes in that folder satisfies it (R7).
 */
export const releasedTagSchema = z.object({
  schema: z.literal(1),
  name: z.string().min(1),
  target: z.object({ branch: z.string().min(1), version: z.number().int().min(1) }),
});
export type ReleasedTag = z.infer<typeof releasedTagSchema>;

/**
 * Released schema 1 of a branch at `_refs/branches/{name}.json`: its fork point (`parent`,
 * or `null` for a root branch) and optional string metadata. Same compatibility rules (R7).
 */
export const releasedBranchSchema = z.object({
  schema: z.literal(1),
  name: z.string().min(1),
  parent: z.object({ branch: z.string().min(1), version: z.number().int().min(1) }).nullable(),
  metadata: z.record(z.string(), z.string()).optional(),
});
export type ReleasedBranch = z.infer<typeof releasedBranchSchema>;

// --- what this package adds inside the canonical documents ---

/**
 * A canonical tag as this package writes it: the released fields plus optional lifecycle
 * fields a released client ignores. `generation` is a fresh ULID on every write, so every
 * fencing rewrite changes the bytes (and the content-MD5 ETag, R9); a document without it
 * was written by a released client and is authoritative as is (R11).
 */
export const tagDocumentSchema = releasedTagSchema.extend({
  generation: z.string().min(1).optional(),
  /** Incarnation of the target branch when the tag was published (absent for root branches). */
  branchIncarnation: z.string().min(1).optional(),
});
export type TagDocument = z.infer<typeof tagDocumentSchema>;

/** A canonical branch as this package writes it (see {@link tagDocumentSchema}). */
export const branchDocumentSchema = releasedBranchSchema.extend({
  generation: z.string().min(1).optional(),
  /** ULID naming this incarnation of the branch; a re-created branch gets a new one. */
  incarnation: z.string().min(1).optional(),
  /** Incarnation of the parent branch at fork time (absent when the parent is a root branch). */
  parentIncarnation: z.string().min(1).optional(),
});
export type BranchDocument = z.infer<typeof branchDocumentSchema>;

// --- sidecars under _holdfast/refs/ (never enumerated by released clients) ---

/** Kinds of reference. */
export const ReferenceKind = z.enum(["tag", "branch"]);
export type ReferenceKind = z.infer<typeof ReferenceKind>;

/** The mutation an intent announces. */
export const IntentOp = z.enum(["create", "update", "delete", "metadata"]);
export type IntentOp = z.infer<typeof IntentOp>;

/**
 * Durable admission intent, schema 1, at `_holdfast/refs/intents/{tags|branches}/{name}/{intentId}.json`.
 * Written create-only before the canonical mutation and deleted after it; it is the
 * lifecycle sidecar of one operation: the generation it writes, the prior state it
 * replaces (update, delete), and `state: "fenced"` once recovery or a deletion revoked
 * it (a tombstone for its owner). The owner owns it only while it is present, pending and
 * carries the owner's `writerId`.
 */
export const IntentSchema = z.looseObject({
  schema: z.literal(1),
  intentId: z.string().min(1),
  writerId: z.string().min(1),
  kind: ReferenceKind,
  name: NameSchema,
  op: IntentOp,
  state: z.enum(["pending", "fenced"]),
  /** Storage-time bound of the owner's cover, measured from the intent's Last-Modified. */
  ownershipBoundMs: z.number().int().positive(),
  /** The version this operation may make a reference name (tag target, branch parent). */
  target: VersionRefSchema.nullable(),
  /** The canonical state being replaced (update, metadata, delete); null for a create. */
  prior: z
    .object({
      etag: z.string().min(1),
      generation: z.string().min(1).nullable(),
      target: VersionRefSchema.nullable(),
    })
    .nullable(),
  /** Generation the operation writes into the canonical (a delete: its fencing rewrite's). */
  generation: z.string().min(1),
  /** Who revoked it, when fenced. */
  fencedBy: z.string().optional(),
});
export type Intent = z.infer<typeof IntentSchema>;

/**
 * Incarnation-termination fence, schema 1, at `_holdfast/refs/fences/{branch}.json`:
 * published before a branch deletion takes its dependency census; a child publication
 * that finds it (for the incarnation it forked from) has lost (R8, R10).
 */
export const FenceSchema = z.looseObject({
  schema: z.literal(1),
  branch: NameSchema,
  incarnation: z.string().min(1).nullable(),
  intentId: z.string().min(1),
  writerId: z.string().min(1),
});
export type Fence = z.infer<typeof FenceSchema>;
