import { holdfastError, listAll } from "@holdfast/conditional-store";
import { type DatasetFormat, requireHoldfastDataset } from "@holdfast/dataset";
import { holdfastMarkerUnchecked, requireFormat } from "@holdfast/dataset/internal";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import type { ReferenceCensus } from "@holdfast/retirement";
import { referenceCodecOf } from "./codec.js";
import { BRANCHES_PREFIX, canonicalPrefix, INTENTS_PREFIX, TAGS_PREFIX } from "./layout.js";
import { listIntents, parseCanonical } from "./objects.js";
import type { BranchDocument, TagDocument } from "./schema.js";

/** Root of the released reference folders. */
export const REFS_ROOT = "_refs/";

/** Error code: an object under `_refs/` that is not a reference the census can read. */
export const FOREIGN_REFERENCE_OBJECT = "FOREIGN_REFERENCE_OBJECT";

/**
 * The kind of a key under `_refs/`: `_refs/tags/{name}.json` or `_refs/branches/{name}.json`,
 * where the released schema allows any non-empty name, subfolders included
 * (`_refs/tags/release/1.0.json`). Anything else (no `.json`, `.JSON`, an empty name or
 * path segment, a key outside the two folders) throws `invalid-input` naming the key: a
 * census cannot know what such an object protects, so it never treats it as nothing.
 */
export function referenceKindOf(key: string): "tag" | "branch" {
  const foreign = (why: string) =>
    holdfastError("invalid-input", "censusReferences", `${key} under ${REFS_ROOT} ${why}`, {
      key,
      code: FOREIGN_REFERENCE_OBJECT,
      hint: "references are _refs/tags/<name>.json and _refs/branches/<name>.json; move or remove this object, then re-run",
    });
  const kind = key.startsWith(TAGS_PREFIX)
    ? "tag"
    : key.startsWith(BRANCHES_PREFIX)
      ? "branch"
      : null;
  if (kind === null) throw foreign("is outside _refs/tags/ and _refs/branches/");
  const rest = key.slice(canonicalPrefix(kind).length);
  if (!rest.endsWith(".json")) throw foreign("does not end in .json");
  const name = rest.slice(0, -".json".length);
  if (name.length === 0 || name.split("/").some((segment) => segment.length === 0)) {
    throw foreign("has an empty name or path segment");
  }
  return kind;
}

/** Why a reference census keeps a version (cleanup reports these in its stats). */
export const referenceReasons = ["intent", "tag", "branch-lineage"] as const;
export type ReferenceReason = (typeof referenceReasons)[number];

/** One version some reference needs, with the reason and what names it. */
export interface ReferencedVersion {
  readonly branch: string;
  readonly version: number;
  readonly reason: ReferenceReason;
  /** The intent key, tag name, branch name or manifest key that needs it. */
  readonly source: string;
}

/** Manifests are create-only and never rewritten, so (key, ETag) → parent can be cached. */
type ParentCache = Map<string, VersionRef | null>;
const PARENT_CACHE_LIMIT = 100_000;

/**
 * Visits every version a durable reference needs, in the order that closes the
 * intent-vs-commit race (docs/protocol.md §7.6): admission intents first, then canonical tags
 * and branches, then cross-branch parents of every present manifest. Any read or parse
 * error propagates: a census never treats "unreadable" as "unreferenced".
 */
export async function scanReferences(
  ctx: ProtocolContext,
  visit: (ref: VersionRef, reason: ReferenceReason, source: string) => void,
  options: { format: DatasetFormat; skipManifestsOf?: string; cache?: ParentCache },
): Promise<void> {
  const { format } = options;
  const codec = referenceCodecOf(format);
  // holdfast's layout: lineage is read there only on a holdfast dataset (docs/protocol.md §1.1; one
  // HEAD per store object).
  if (holdfastMarkerUnchecked(ctx.store, format)) {
    await requireHoldfastDataset(ctx, "censusReferences");
  }
  await scanIntentTargets(ctx, (ref, source) => visit(ref, "intent", source));
  // Every object under `_refs/` is a reference or stops the census (docs/protocol.md §7.9): nothing
  // there is ever skipped.
  for await (const meta of listAll(ctx.store, REFS_ROOT)) {
    const kind = referenceKindOf(meta.key);
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // deleted between list and get
    const stored = parseCanonical(codec, kind, got);
    const name = meta.key.slice(canonicalPrefix(kind).length, -".json".length);
    if (kind === "tag") visit((stored.doc as TagDocument).target, "tag", name);
    else {
      const parent = (stored.doc as BranchDocument).parent;
      if (parent) visit(parent, "branch-lineage", name);
    }
  }
  const cache = options.cache ?? new Map();
  for (const branch of await format.listBranches(ctx)) {
    // A branch's own parents within itself are not lineage dependencies.
    if (branch === options.skipManifestsOf) continue;
    for await (const entry of format.listVersions(ctx, branch)) {
      const cacheKey = `${entry.key}\n${entry.etag}`;
      let parent = cache.get(cacheKey);
      if (parent === undefined) {
        const manifest = await format.readManifest(ctx, branch, entry.version);
        if (!manifest) continue; // retired between list and get: it needs nothing any more
        parent = manifest.parent;
        if (cache.size < PARENT_CACHE_LIMIT) cache.set(cacheKey, parent);
      }
      if (parent && parent.branch !== branch) visit(parent, "branch-lineage", entry.key);
    }
  }
}

/**
 * Visits the versions every admission intent under `_holdfast/refs/intents/` covers (its
 * target and the prior state it replaces), whatever the dataset's format: a census reads
 * them before the canonical references (docs/protocol.md §7.6). Fenced
 * intents still cover their versions until reclaimed: over-protecting is safe. Any read or
 * parse error propagates.
 */
export async function scanIntentTargets(
  ctx: ProtocolContext,
  visit: (ref: VersionRef, source: string) => void,
): Promise<void> {
  for await (const stored of listIntents(ctx, INTENTS_PREFIX)) {
    if (stored.intent.target) visit(stored.intent.target, stored.key);
    const prior = stored.intent.prior?.target;
    if (prior) visit(prior, stored.key);
  }
}

/**
 * The ReferenceCensus cleanup injects into retirement: for `(branch, versions)`, the
 * versions any admission intent, canonical tag, canonical branch or descendant manifest
 * needs, with the first reason found. Policy-independent; fails closed (throws) on any
 * read error. Lineage comes from the dataset's `format`; a format whose references have a
 * census of their own (Lance's tags and branches) uses that one. Invariant 2.
 */
export function censusReferences(
  ctx: ProtocolContext,
  options: { readonly format: DatasetFormat },
): ReferenceCensus {
  requireFormat(options?.format, "censusReferences");
  const own = referenceCodecOf(options.format).census;
  if (own) return own(ctx);
  const cache: ParentCache = new Map();
  const { format } = options;
  return async (branch, versions) => {
    const wanted = new Set(versions);
    const found = new Map<number, string>();
    await scanReferences(
      ctx,
      (ref, reason) => {
        if (ref.branch === branch && wanted.has(ref.version) && !found.has(ref.version)) {
          found.set(ref.version, reason);
        }
      },
      { format, skipManifestsOf: branch, cache },
    );
    return found;
  };
}

/** Every version a durable reference needs, across all branches (what recovery reports). */
export async function listReferencedVersions(
  ctx: ProtocolContext,
  options: { readonly format: DatasetFormat },
): Promise<ReferencedVersion[]> {
  requireFormat(options?.format, "listReferencedVersions");
  const all: ReferencedVersion[] = [];
  await scanReferences(
    ctx,
    (ref, reason, source) => {
      all.push({ branch: ref.branch, version: ref.version, reason, source });
    },
    { format: options.format },
  );
  return all;
}
