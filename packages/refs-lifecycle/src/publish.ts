import {
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  putIfAbsent,
  putIfMatch,
} from "@holdfast/conditional-store";
import { type DatasetFormat, requireHoldfastDataset } from "@holdfast/dataset";
import { holdfastMarkerUnchecked } from "@holdfast/dataset/internal";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import { resolverOptions } from "@holdfast/protocol/internal";
import { readAdmission } from "@holdfast/retirement";
import type { ReferenceCodec, WrittenTarget } from "./codec.js";
import { canonicalKey, fenceKey, intentKey } from "./layout.js";
import {
  type CanonicalDocument,
  dropIntent,
  ownsIntent,
  readCanonical,
  readFence,
  removeIfMatch,
  rewriteIfMatch,
  type StoredCanonical,
  writeIntent,
} from "./objects.js";
import type { BranchDocument, Intent, ReferenceKind } from "./schema.js";

/** Default storage-time bound of an admission intent's ownership: 15 minutes. */
export const DEFAULT_INTENT_BOUND_MS = 15 * 60 * 1000;

/** Options every reference mutation accepts. */
export interface MutationOptions {
  /**
   * Storage-time bound of the operation's intent; after it, recovery may fence the
   * intent and the operation can no longer publish. @default DEFAULT_INTENT_BOUND_MS
   */
  readonly ownershipBoundMs?: number | undefined;
  /**
   * Always re-read the intent and retirement admission after the canonical write, not only
   * when the write was re-issued or the cover was held for half the bound (+2 requests;
   * the shorter path is proven equivalent in docs/protocol.md). @default false
   */
  readonly verifyAfterWrite?: boolean | undefined;
  /**
   * The dataset's format, as opening it bound it (`holdfastFormat` for holdfast's own
   * layout): where a version's manifest lives (the existence check) and how canonical
   * references are stored (a Lance table's tags are Lance's JSON).
   */
  readonly format: DatasetFormat;
}

/** Longest accepted intent bound: a week. */
const MAX_INTENT_BOUND_MS = 7 * 24 * 60 * 60 * 1000;

/** Checks mutation options before anything is written (invariant 6); returns the bound to use. */
export function intentBound(options: MutationOptions): number {
  const bound = options.ownershipBoundMs ?? DEFAULT_INTENT_BOUND_MS;
  if (!Number.isSafeInteger(bound) || bound < 1 || bound > MAX_INTENT_BOUND_MS) {
    throw holdfastError(
      "invalid-input",
      "validate",
      `ownershipBoundMs must be an integer in 1..${MAX_INTENT_BOUND_MS}, got ${String(bound)}`,
      { code: "INVALID_OPTION" },
    );
  }
  return bound;
}

/** A non-root branch whose termination fence and incarnation a publication depends on. */
export interface Dependency {
  readonly branch: string;
  /** Incarnation observed before the intent; `undefined` for a released-client branch. */
  readonly incarnation: string | undefined;
}

/** One canonical publication (create, update or metadata replacement). */
export interface PublishPlan<D extends CanonicalDocument> {
  readonly kind: ReferenceKind;
  readonly name: string;
  readonly op: "create" | "update" | "metadata";
  /** The document to write; its `generation` is the intent's. */
  readonly doc: D;
  /** The canonical being replaced (if-match on its ETag); `null` for a create. */
  readonly expected: StoredCanonical<D> | null;
  /** The version the new document makes a reference name; admission and existence are checked for it. */
  readonly target: VersionRef | null;
  /** Check retirement admission and manifest existence of `target` (false when it does not change). */
  readonly checkTarget: boolean;
  readonly dependsOn: Dependency | null;
  readonly options: MutationOptions;
  /** How the canonical is stored (the format's reference codec). */
  readonly codec: ReferenceCodec;
}

/**
 * The publisher (docs/protocol.md §7, Publish 1–6; §7.6): W(intent) → readAdmission → HEAD(target
 * manifest) → conditional W(canonical) → [post-check] → D(intent) last. The intent covers the
 * target for the cleaner's census (which reads intents before canonical refs) until the canonical
 * is durable. No read-then-overwrite and no unconditional rollback: a publication that finds it
 * lost ownership removes (create) or restores (update) its own write, if-match on the ETag it
 * wrote. Invariants 2 and 3.
 */
export async function publish<D extends CanonicalDocument>(
  ctx: ProtocolContext,
  plan: PublishPlan<D>,
): Promise<{ etag: string; doc: D }> {
  const boundMs = intentBound(plan.options);
  const key = canonicalKey(plan.kind, plan.name);
  const intentId = ctx.ids.next();
  const iKey = intentKey(plan.kind, plan.name, intentId);
  const writerId = ctx.ids.next();
  const intent: Intent = {
    schema: 1,
    intentId,
    writerId,
    kind: plan.kind,
    name: plan.name,
    op: plan.op,
    state: "pending",
    ownershipBoundMs: boundMs,
    target: plan.target,
    prior: plan.expected
      ? {
          etag: plan.expected.etag,
          generation: plan.expected.doc.generation ?? null,
          target: documentTarget(plan.kind, plan.expected.doc),
        }
      : null,
    generation: plan.doc.generation ?? plan.codec.newGeneration(ctx),
  };
  // Local timer only: it measures how long this process has held its cover, never
  // compared with another host's clock.
  // holdfast's layout: the store must be a holdfast dataset before the first write
  // (docs/protocol.md §1.1).
  if (holdfastMarkerUnchecked(ctx.store, plan.options.format)) {
    await requireHoldfastDataset(ctx, plan.op);
  }
  const startedAt = ctx.clock.now();
  await writeIntent(ctx, iKey, intent); // Publish 1 intent

  const abandon = async (error: HoldfastError): Promise<never> => {
    await dropIntent(ctx, iKey).catch(() => undefined); // recovery reclaims a leftover
    throw error;
  };

  let written: WrittenTarget;
  try {
    written = await checkTarget(ctx, plan, key); // Publish 2 admission, 3 manifest
  } catch (error) {
    return abandon(error as HoldfastError);
  }

  let reissued = false;
  const resolve = {
    ...resolverOptions(ctx),
    onReissue: () => {
      reissued = true;
    },
  };
  let outcome: Awaited<ReturnType<typeof putIfAbsent>>;
  try {
    // Publish 4 canonical.
    const bytes = plan.codec.encode(plan.kind, plan.doc, written);
    outcome = plan.expected
      ? await putIfMatch(ctx.store, key, bytes, plan.expected.etag, resolve)
      : await putIfAbsent(ctx.store, key, bytes, resolve);
  } catch (error) {
    // Unknown outcome: the intent stays so the cleaner keeps covering the target and
    // recovery can decide it later.
    if (isHoldfastError(error, "unresolved")) throw error;
    return abandon(error as HoldfastError);
  }
  if (outcome.status === "conflict") {
    return abandon(
      plan.expected
        ? holdfastError("conflict", "publishReference", `${plan.kind} ${plan.name} changed`, {
            key,
            code: "REF_CHANGED",
            precondition: { ifMatch: plan.expected.etag },
            hint: "re-read the reference and retry",
          })
        : holdfastError("conflict", "publishReference", `${plan.kind} ${plan.name} exists`, {
            key,
            code: "REF_EXISTS",
            precondition: { ifNoneMatch: "*" },
          }),
    );
  }
  const etag = outcome.etag;

  let lost: string | null;
  try {
    // Publish 5 post-check.
    lost = await lostOwnership(ctx, plan, {
      iKey,
      writerId,
      reissued,
      elapsedMs: ctx.clock.now() - startedAt,
      boundMs,
    });
  } catch (cause) {
    // The write landed but whether it is still ours is unknown: the intent stays (it keeps
    // covering the target) and recovery decides; the caller learns the outcome is unknown.
    throw holdfastError(
      "unresolved",
      "publishReference",
      `${plan.kind} ${plan.name} was written but its ownership could not be checked`,
      { key, cause, hint: "read the reference, or run recoverReferences" },
    );
  }
  if (lost) {
    try {
      if (plan.expected) {
        await rewriteIfMatch(ctx, plan.codec, key, etag, plan.expected.doc);
      } else {
        await removeIfMatch(ctx, plan.codec, key, etag, plan.doc);
      }
    } catch (cause) {
      throw holdfastError(
        "unresolved",
        "publishReference",
        `${plan.kind} ${plan.name} lost ownership (${lost}) and its write could not be withdrawn`,
        { key, cause, hint: "run recoverReferences; the reference stays protected meanwhile" },
      );
    }
    return abandon(
      holdfastError(
        "conflict",
        "publishReference",
        `${plan.kind} ${plan.name} lost ownership: ${lost}`,
        { key, code: "OWNERSHIP_LOST" },
      ),
    );
  }
  // Publish 6 release. Published; dropping the intent is the last step; a failure leaves a
  // completed intent that recovery reclaims (it only ever over-protects).
  await dropIntent(ctx, iKey).catch(() => undefined);
  return { etag, doc: plan.doc };
}

/**
 * Admission and existence of the target, after the intent is durable: refuse while the
 * version is sealed or committed; a version already gone (its retirement finalized
 * before our intent) fails the HEAD of its manifest, at the key the dataset's format
 * names. A draining retirement is fine: its census runs after its seal and reads our
 * intent. Returns the manifest's size (a Lance tag records it).
 */
async function checkTarget<D extends CanonicalDocument>(
  ctx: ProtocolContext,
  plan: PublishPlan<D>,
  key: string,
): Promise<WrittenTarget> {
  if (plan.target && plan.checkTarget) {
    const admission = await readAdmission(ctx, plan.target.branch, plan.target.version);
    if (admission.state === "sealed" || admission.state === "committed") {
      throw holdfastError(
        "refused",
        "publishReference",
        `${plan.target.branch}@${plan.target.version} is being retired (${admission.state})`,
        { key, code: "VERSION_RETIRING", hint: "choose a version cleanup is not retiring" },
      );
    }
    // A draining retirement is fine: its census runs after its seal and reads our intent.
    const { format } = plan.options;
    const manifest = plan.codec.targetManifest
      ? await plan.codec.targetManifest(ctx, format, plan.target)
      : await ctx.store.head(format.manifestKey(plan.target.branch, plan.target.version));
    if (!manifest) {
      throw holdfastError(
        "not-found",
        "publishReference",
        `version ${plan.target.version} of branch ${plan.target.branch} does not exist`,
        { key, code: "VERSION_NOT_FOUND" },
      );
    }
    return { manifestSize: manifest.size };
  }
  return {};
}

/**
 * Decides whether a landed canonical write still belongs to a live owner. Returns why
 * not, or `null`. The checks that cost requests run only when their hazard exists:
 * - a non-root dependency: its termination fence and incarnation (R8, R10);
 * - a re-issued write or a cover held for half its bound: the intent (recovery or a
 *   deletion may have fenced it) and retirement admission again.
 */
async function lostOwnership<D extends CanonicalDocument>(
  ctx: ProtocolContext,
  plan: PublishPlan<D>,
  state: { iKey: string; writerId: string; reissued: boolean; elapsedMs: number; boundMs: number },
): Promise<string | null> {
  if (plan.dependsOn) {
    const fence = await readFence(ctx, fenceKey(plan.dependsOn.branch));
    if (fence && sameIncarnation(fence.fence.incarnation, plan.dependsOn.incarnation)) {
      return `branch ${plan.dependsOn.branch} is being deleted`;
    }
    const parent = await readCanonical(ctx, plan.codec, "branch", plan.dependsOn.branch);
    if (!parent) return `branch ${plan.dependsOn.branch} was deleted`;
    const current = (parent.doc as BranchDocument).incarnation;
    if (current !== undefined && plan.dependsOn.incarnation !== undefined) {
      if (current !== plan.dependsOn.incarnation)
        return `branch ${plan.dependsOn.branch} was re-created`;
    }
  }
  // Within half its bound (local elapsed time, measured from before the intent write)
  // nobody may have fenced the intent for expiry, and a single-copy write cannot land twice.
  if (plan.options.verifyAfterWrite || state.reissued || state.elapsedMs * 2 >= state.boundMs) {
    if (!(await ownsIntent(ctx, state.iKey, state.writerId))) return "intent was fenced";
    if (plan.target) {
      const again = await readAdmission(ctx, plan.target.branch, plan.target.version);
      if (again.state === "committed") return "target retirement committed";
    }
  }
  return null;
}

function sameIncarnation(fenced: string | null, observed: string | undefined): boolean {
  // A fence of a released-client branch (no incarnation) fences every child of that name.
  return fenced === null || observed === undefined || fenced === observed;
}

/** The version a canonical document makes a reference name. */
export function documentTarget(kind: ReferenceKind, doc: CanonicalDocument): VersionRef | null {
  if (kind === "tag") return (doc as { target: VersionRef }).target;
  return (doc as BranchDocument).parent;
}
