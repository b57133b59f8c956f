import { holdfastError } from "@holdfast/conditional-store";
import { type DatasetFormat, requireHoldfastDataset } from "@holdfast/dataset";
import { holdfastMarkerUnchecked } from "@holdfast/dataset/internal";
import { branchLeasesPrefix, censusLeases, listLeases } from "@holdfast/leases";
import { DEFAULT_BRANCH, type ProtocolContext, storageNow, validateName } from "@holdfast/protocol";
import { type ReferenceCodec, referenceCodecOf, requireBranchWrites } from "./codec.js";
import { publishFence, removeFence } from "./fence.js";
import { canonicalKey, INTENTS_PREFIX, intentKey, intentsOfPrefix } from "./layout.js";
import {
  type CanonicalDocument,
  dropIntent,
  fenceIntent,
  isUnknownOutcome,
  listCanonical,
  listIntents,
  readCanonical,
  removeIfMatch,
  type StoredCanonical,
  type StoredIntent,
  writeIntent,
} from "./objects.js";
import { documentTarget, intentBound, type MutationOptions } from "./publish.js";
import { requireAtomicUpdate } from "./references.js";
import type { BranchDocument, Intent, ReferenceKind } from "./schema.js";
import { teardownBranch } from "./teardown.js";

/** Options of {@link deleteBranch}. */
export interface DeleteBranchOptions extends MutationOptions {
  /**
   * Delete even while readers hold active leases on the branch's versions: their versions
   * vanish under them (renewals then fail with LEASE_LOST). Without it the deletion is
   * refused (`conflict`, BRANCH_HAS_LEASES) and nothing is torn down. @default false
   */
  readonly force?: boolean | undefined;
}

/** What a deletion did. */
export interface DeleteResult {
  readonly name: string;
  /** True when this call finished an earlier, interrupted deletion. */
  readonly resumed: boolean;
}

/**
 * Deletes tag `name` (docs/protocol.md §7, Delete 1–9): a delete intent records the prior state,
 * competing intents of the name are fenced, then the canonical is removed if-match. A definite
 * failure leaves the tag visible and its prior state restored; an unknown outcome keeps the intent
 * so a retry resumes (R12). Invariant 2: once this returns the tag is never visible again.
 */
export function deleteTag(
  ctx: ProtocolContext,
  name: string,
  options: MutationOptions,
): Promise<DeleteResult> {
  return deleteReference(ctx, "tag", name, options);
}

/**
 * Deletes branch reference `name` and its incarnation (docs/protocol.md §7, Delete 1–9): publishes
 * the termination fence, fences admitted child and tag publications, refuses (`conflict`,
 * BRANCH_HAS_DEPENDENTS) while a child branch or a tag depends on it, removes the branch's
 * manifests, leases and retirement state, then the canonical file if-match (R8, R10, R12).
 */
export function deleteBranch(
  ctx: ProtocolContext,
  name: string,
  options: DeleteBranchOptions,
): Promise<DeleteResult> {
  return deleteReference(ctx, "branch", name, options);
}

async function deleteReference(
  ctx: ProtocolContext,
  kind: ReferenceKind,
  rawName: string,
  options: DeleteBranchOptions,
): Promise<DeleteResult> {
  const name = validateName(rawName, kind);
  if (kind === "branch" && name === DEFAULT_BRANCH) {
    throw holdfastError("invalid-input", "deleteBranch", `${DEFAULT_BRANCH} cannot be deleted`, {
      code: "DEFAULT_BRANCH",
    });
  }
  const refs = referencesOf(options?.format);
  if (kind === "branch") requireBranchWrites(refs.codec, refs.format, "deleteBranch");
  const boundMs = intentBound(options);
  requireAtomicUpdate(ctx, kind === "tag" ? "deleteTag" : "deleteBranch");
  // holdfast's layout: a holdfast dataset only (docs/protocol.md §1.1).
  if (holdfastMarkerUnchecked(ctx.store, refs.format)) {
    await requireHoldfastDataset(ctx, kind === "tag" ? "deleteTag" : "deleteBranch");
  }
  const current = await readCanonical(ctx, refs.codec, kind, name); // Delete 1 read
  if (!current) {
    // Absence alone cannot say "deleted": only a recorded delete intent makes this a resume.
    let resumed = false;
    for await (const stored of listIntents(ctx, intentsOfPrefix(kind, name))) {
      if (stored.intent.op !== "delete") continue;
      await finishDeletion(ctx, stored, refs);
      resumed = true;
    }
    if (!resumed) {
      throw holdfastError(
        "not-found",
        `delete${kind === "tag" ? "Tag" : "Branch"}`,
        `${kind} ${name} does not exist`,
        {
          key: canonicalKey(kind, name),
          code: "REF_NOT_FOUND",
        },
      );
    }
    return { name, resumed: true };
  }

  const intentId = ctx.ids.next();
  const intent: Intent = {
    schema: 1,
    intentId,
    writerId: ctx.ids.next(),
    kind,
    name,
    op: "delete",
    state: "pending",
    ownershipBoundMs: boundMs,
    target: null,
    prior: {
      etag: current.etag,
      generation: current.doc.generation ?? null,
      target: documentTarget(kind, current.doc),
    },
    generation: refs.codec.newGeneration(ctx),
  };
  const iKey = intentKey(kind, name, intentId);
  await writeIntent(ctx, iKey, intent); // Delete 2 intent
  let fenceWriter: string | null = null;
  const coDeleters = new Set<string>();
  try {
    if (kind === "branch") {
      // Delete 3 fence.
      fenceWriter = await publishFence(ctx, name, current.doc as BranchDocument, intentId);
      // Delete 4 leases, after the fence (write-then-read against the acquirer's lease-then-fence
      // read): a lease this listing misses was written after the fence, and its acquirer sees the
      // fence and withdraws.
      if (options.force !== true) await requireNoActiveLeases(ctx, name);
    }
    const outcome = await runDeletion(ctx, refs, kind, name, current, intentId, coDeleters);
    if (outcome === "changed") {
      throw holdfastError("conflict", "deleteReference", `${kind} ${name} keeps changing`, {
        key: current.key,
        code: "REF_CHANGED",
        hint: "retry the deletion",
      });
    }
  } catch (error) {
    // Unknown outcome: intent and fence stay; a retry or recovery resumes the deletion.
    if (isUnknownOutcome(error)) throw error;
    // Definite failure: the canonical is still there (or someone else changed it). Restore
    // the prior lifecycle state so nothing hides or blocks the still-visible reference.
    if (fenceWriter !== null) await removeFence(ctx, name, fenceWriter).catch(() => undefined);
    try {
      await dropIntent(ctx, iKey);
    } catch (dropError) {
      // The pending delete intent stays, and recovery resumes pending deletions: this
      // refusal may yet turn into a deletion, so the outcome is unknown, not a failure.
      throw holdfastError(
        "unresolved",
        "deleteReference",
        `${kind} ${name}: the deletion was refused but its intent could not be withdrawn`,
        {
          key: iKey,
          code: "DELETE_INTENT_LEFT",
          cause: new AggregateError([error, dropError]),
          hint: "retry the deletion, or run recovery; the reference may still be deleted",
        },
      );
    }
    throw error;
  }
  // Delete 9 release. Deleted; what follows only reclaims sidecars; a failure leaves them to
  // recovery.
  try {
    if (fenceWriter !== null) await removeFence(ctx, name, fenceWriter);
    // Earlier, interrupted deletions of this name are complete now too.
    for (const other of coDeleters) await dropIntent(ctx, other);
    await dropIntent(ctx, iKey);
  } catch {
    // recovery reclaims leftovers (they only ever over-protect)
  }
  return { name, resumed: false };
}

/**
 * The deletion body (docs/protocol.md §7, Delete 5–8), repeatable after an interruption: fence
 * competing intents, take the dependency census (branches), tear the incarnation down, remove the
 * canonical if-match. `changed` when the canonical kept changing under us.
 */
export async function runDeletion(
  ctx: ProtocolContext,
  refs: References,
  kind: ReferenceKind,
  name: string,
  initial: StoredCanonical<CanonicalDocument>,
  intentId: string,
  coDeleters: Set<string> = new Set(),
): Promise<"deleted" | "changed"> {
  let current: StoredCanonical<CanonicalDocument> | null = initial;
  for (let round = 0; round < 3 && current; round += 1) {
    await fenceCompetingIntents(ctx, kind, name, intentId, coDeleters); // Delete 5 fence intents
    if (kind === "branch") {
      await requireNoDependents(ctx, refs, name); // Delete 6 dependents
      await teardownBranch(ctx, refs.format, name); // Delete 7 teardown
    }
    // Delete 8 remove.
    const removed = await removeIfMatch(ctx, refs.codec, current.key, current.etag, current.doc);
    if (removed === "applied") return "deleted";
    // Someone changed it after our read (a publication whose intent we just fenced, or
    // a released client): re-read and go again; absent means another deletion won.
    current = await readCanonical(ctx, refs.codec, kind, name);
  }
  return current ? "changed" : "deleted";
}

/**
 * Revokes every other pending intent that could publish this name (or, for a branch,
 * anything on it): a publication re-issued after our delete sees its intent fenced and
 * withdraws its write, so a deleted reference is never resurrected (invariant 2).
 */
async function fenceCompetingIntents(
  ctx: ProtocolContext,
  kind: ReferenceKind,
  name: string,
  ownIntentId: string,
  coDeleters: Set<string>,
): Promise<void> {
  const prefix = kind === "tag" ? intentsOfPrefix("tag", name) : INTENTS_PREFIX;
  const own = intentKey(kind, name, ownIntentId);
  for await (const stored of listIntents(ctx, prefix, (key) => key === own)) {
    const { intent } = stored;
    if (intent.op === "delete") {
      // A co-deleter cannot resurrect anything; once we are done its work is done too.
      if (intent.kind === kind && intent.name === name) coDeleters.add(stored.key);
      continue;
    }
    if (intent.state !== "pending") continue;
    const sameName = intent.kind === kind && intent.name === name;
    const onBranch =
      kind === "branch" &&
      (intent.target?.branch === name || intent.prior?.target?.branch === name);
    if (sameName || onBranch) await fenceIntent(ctx, stored, ownIntentId);
  }
}

/**
 * Throws `conflict` (BRANCH_HAS_LEASES) while a lease on the branch is active in storage
 * time: 1 LIST when the branch has no lease objects, + a storage-time probe and the census
 * otherwise.
 */
async function requireNoActiveLeases(ctx: ProtocolContext, branch: string): Promise<void> {
  const versions = new Set<number>();
  for await (const lease of listLeases(ctx, { branch })) versions.add(lease.version);
  if (versions.size === 0) return;
  const active = await censusLeases(ctx)(branch, [...versions], await storageNow(ctx));
  if (active.size === 0) return;
  const leased = [...active.keys()].sort((a, b) => a - b);
  throw holdfastError(
    "conflict",
    "deleteBranch",
    `branch ${branch} has active leases on version(s) ${leased.join(", ")}`,
    {
      key: branchLeasesPrefix(branch),
      code: "BRANCH_HAS_LEASES",
      hint: "wait until its readers release them, or delete with --force (their versions vanish under them)",
    },
  );
}

/**
 * Throws `conflict` (BRANCH_HAS_DEPENDENTS) while a canonical child branch or tag, or the
 * prior state of a reference change in flight, depends on `branch`.
 */
async function requireNoDependents(
  ctx: ProtocolContext,
  refs: References,
  branch: string,
): Promise<void> {
  const dependents: string[] = [];
  // Intents first (as cleanup's census): an update we just fenced withdraws by restoring
  // its prior state, which may name this branch. If its intent is gone already, the
  // restore happened before, and the canonical listing below sees it (invariant 2).
  for await (const stored of listIntents(ctx, INTENTS_PREFIX)) {
    const { intent } = stored;
    if (intent.op !== "delete" && intent.prior?.target?.branch === branch) {
      dependents.push(`${intent.kind} ${intent.name} (a change in flight)`);
    }
  }
  for await (const child of listCanonical(ctx, refs.codec, "branch")) {
    if (child.doc.parent?.branch === branch) dependents.push(`branch ${child.name}`);
  }
  for await (const tag of listCanonical(ctx, refs.codec, "tag")) {
    if (tag.doc.target.branch === branch) dependents.push(`tag ${tag.name}`);
  }
  // Lineage from actual manifests too: a branch committed with this one as parent needs
  // its versions even without a reference file (invariant 2).
  if (dependents.length === 0) {
    const { format } = refs;
    for (const other of await format.listBranches(ctx)) {
      if (other === branch) continue;
      for await (const entry of format.listVersions(ctx, other)) {
        const manifest = await format.readManifest(ctx, other, entry.version);
        if (manifest?.parent?.branch === branch) {
          dependents.push(`branch ${other} (version ${entry.version})`);
          break;
        }
      }
    }
  }
  if (dependents.length > 0) {
    throw holdfastError("conflict", "deleteBranch", `branch ${branch} has dependents`, {
      code: "BRANCH_HAS_DEPENDENTS",
      hint: `delete these first: ${dependents.slice(0, 5).join(", ")}${dependents.length > 5 ? ", ..." : ""}`,
    });
  }
}

/**
 * Finishes a deletion whose canonical is already gone (resume after interruption, or
 * recovery): tear the branch incarnation down, drop its fence, then its intent.
 */
export async function finishDeletion(
  ctx: ProtocolContext,
  stored: StoredIntent,
  refs: References,
): Promise<void> {
  const { intent } = stored;
  if (intent.kind === "branch") {
    requireBranchWrites(refs.codec, refs.format, "deleteBranch");
    await teardownBranch(ctx, refs.format, intent.name);
    await removeFence(ctx, intent.name, null, intent.intentId);
  }
  await dropIntent(ctx, stored.key);
}

/**
 * Recovery of an expired delete intent: completes the deletion while the canonical is
 * still the state the intent recorded (or its own fencing rewrite), abandons it when
 * someone else changed the reference since. Returns what it did.
 */
export async function resumeDeletion(
  ctx: ProtocolContext,
  stored: StoredIntent,
  refs: References,
): Promise<"completed" | "abandoned"> {
  const { intent } = stored;
  const current = await readCanonical(ctx, refs.codec, intent.kind, intent.name);
  if (!current) {
    await finishDeletion(ctx, stored, refs);
    return "completed";
  }
  const generation = current.doc.generation ?? null;
  const recorded =
    current.etag === intent.prior?.etag ||
    generation === intent.generation ||
    (generation !== null && generation === intent.prior?.generation);
  if (!recorded) {
    if (intent.kind === "branch") await removeFence(ctx, intent.name, null, intent.intentId);
    await dropIntent(ctx, stored.key);
    return "abandoned";
  }
  try {
    if (intent.kind === "branch") {
      // The crash may have come before the fence: no census without it (R8).
      await publishFence(ctx, intent.name, current.doc as BranchDocument, intent.intentId);
    }
    const outcome = await runDeletion(
      ctx,
      refs,
      intent.kind,
      intent.name,
      current,
      intent.intentId,
    );
    if (outcome === "changed") throw new Error("changed");
  } catch (error) {
    if (isUnknownOutcome(error)) throw error;
    if (intent.kind === "branch") await removeFence(ctx, intent.name, null, intent.intentId);
    await dropIntent(ctx, stored.key);
    return "abandoned";
  }
  await finishDeletion(ctx, stored, refs);
  return "completed";
}

/** The dataset's format and how it stores its references, resolved once per operation. */
export interface References {
  readonly format: DatasetFormat;
  readonly codec: ReferenceCodec;
}

/** Resolves {@link References} (refuses a format without a reference codec, before any request). */
export function referencesOf(format: DatasetFormat): References {
  return { codec: referenceCodecOf(format), format };
}
