import { listAll } from "@holdfast/conditional-store";
import { type DatasetFormat, requireHoldfastDataset } from "@holdfast/dataset";
import { holdfastMarkerUnchecked } from "@holdfast/dataset/internal";
import {
  DEFAULT_BRANCH,
  isActiveAt,
  type ProtocolContext,
  storageNow,
  type VersionRef,
} from "@holdfast/protocol";
import { listReferencedVersions, type ReferencedVersion } from "./census.js";
import { type References, referencesOf, resumeDeletion } from "./delete.js";
import { FENCES_PREFIX, INTENTS_PREFIX, intentKey, intentsOfPrefix } from "./layout.js";
import {
  deleteUnconditionally,
  dropIntent,
  fenceIntent,
  listCanonical,
  listIntents,
  readCanonical,
  readFence,
  readIntent,
  removeIfMatch,
  rewriteIfMatch,
  type StoredIntent,
} from "./objects.js";
import type { BranchDocument, TagDocument } from "./schema.js";

/** What {@link recoverReferences} did. */
export interface ReferenceRecoveryReport {
  /** Expired pending intents revoked (their owners can no longer publish). */
  readonly fencedIntents: string[];
  /** Canonicals rewritten with fresh bytes so a stalled compare-and-swap conflicts (R5, R9). */
  readonly fencedCanonicals: string[];
  /** Interrupted deletions finished or, when the reference changed since, abandoned. */
  readonly deletions: { key: string; outcome: "completed" | "abandoned" }[];
  /** Intents removed (completed or revoked). */
  readonly reclaimedIntents: string[];
  /** Canonicals published by an owner that lost to a parent deletion and then vanished. */
  readonly removedOrphans: string[];
  /** Termination fences whose deletion no longer exists. */
  readonly removedFences: string[];
  /** Every version a canonical tag, branch, intent or descendant manifest needs now. */
  readonly referenced: ReferencedVersion[];
}

/**
 * Recovers reference lifecycle state (docs/protocol.md §7, Recovery 1–6): expired intents are
 * fenced, never replayed (R2): a create is left as it landed or not; an update's canonical is
 * fenced with fresh bytes while it is still at the recorded prior ETag (R5, R9); an interrupted
 * deletion resumes (R12). It then censuses canonical tags, branches and descendant lineage, not
 * only intents (R6), removes orphans of deleted parents (R10) and stale fences. Invariants 2, 5.
 */
export async function recoverReferences(
  ctx: ProtocolContext,
  options: { readonly format: DatasetFormat; readonly storageNow?: Date },
): Promise<ReferenceRecoveryReport> {
  const refs = referencesOf(options?.format);
  // holdfast's layout: a holdfast dataset only (docs/protocol.md §1.1).
  if (holdfastMarkerUnchecked(ctx.store, refs.format)) {
    await requireHoldfastDataset(ctx, "recoverReferences");
  }
  const now = options.storageNow ?? (await storageNow(ctx)); // Recovery 1 probe
  const recoveryId = ctx.ids.next();
  const precision = ctx.store.capabilities.timestampPrecisionMs;
  const report: ReferenceRecoveryReport = {
    fencedIntents: [],
    fencedCanonicals: [],
    deletions: [],
    reclaimedIntents: [],
    removedOrphans: [],
    removedFences: [],
    referenced: [],
  };

  // Recovery 2 intents.
  const expired: StoredIntent[] = [];
  for await (const stored of listIntents(ctx, INTENTS_PREFIX)) {
    if (!isActiveAt(stored.lastModified, stored.intent.ownershipBoundMs, precision, now)) {
      expired.push(stored);
    }
  }
  // Recovery 3 expired.
  for (const listed of expired) {
    let stored = listed;
    const { intent } = stored;
    if (intent.op === "delete") {
      const outcome = await resumeDeletion(ctx, stored, refs);
      report.deletions.push({ key: stored.key, outcome });
      continue;
    }
    if (intent.state === "pending") {
      if ((await fenceIntent(ctx, stored, recoveryId)) === "conflict") {
        // Someone rewrote it since the listing: its owner (still pending: leave it to its
        // bound) or a fencer such as a branch deletion (fenced: dead, reclaim it now).
        const reread = await readIntent(ctx, stored.key);
        if (!reread || reread.intent.state === "pending") continue;
        stored = reread;
      } else {
        report.fencedIntents.push(stored.key);
      }
    }
    if (intent.op !== "create" && intent.prior) {
      // The owner may still hold an if-match on the prior ETag: move the canonical to
      // fresh bytes so that late compare-and-swap conflicts.
      const current = await readCanonical(ctx, refs.codec, intent.kind, intent.name);
      if (
        current &&
        current.etag === intent.prior.etag &&
        current.doc.generation !== intent.generation
      ) {
        const rewritten = await rewriteIfMatch(
          ctx,
          refs.codec,
          current.key,
          current.etag,
          current.doc,
        );
        if (rewritten.status === "applied") report.fencedCanonicals.push(current.key);
      }
    }
    // A create is never replayed: absence cannot tell "never landed" from "deleted since".
    await dropIntent(ctx, stored.key);
    report.reclaimedIntents.push(stored.key);
  }

  await removeOrphans(ctx, refs, report); // Recovery 4 orphans

  // Recovery 5 fences.
  for await (const meta of listAll(ctx.store, FENCES_PREFIX)) {
    const fence = await readFence(ctx, meta.key);
    if (!fence) continue;
    const owner = await readIntent(
      ctx,
      intentKey("branch", fence.fence.branch, fence.fence.intentId),
    );
    if (!owner) {
      await deleteUnconditionally(ctx, meta.key);
      report.removedFences.push(meta.key);
    }
  }

  // Recovery 6 report.
  report.referenced.push(...(await listReferencedVersions(ctx, { format: refs.format })));
  return report;
}

/**
 * A child branch or tag published by an owner that lost to its parent's deletion and
 * crashed before withdrawing it names an incarnation that no longer exists. Released-client
 * files carry no incarnation and are never touched (R11).
 */
async function removeOrphans(
  ctx: ProtocolContext,
  refs: References,
  report: ReferenceRecoveryReport,
): Promise<void> {
  const incarnations = new Map<string, string | null>();
  const children = new Map<string, number>();
  const branches: { name: string; key: string; etag: string; doc: BranchDocument }[] = [];
  for await (const branch of listCanonical(ctx, refs.codec, "branch")) {
    incarnations.set(branch.name, branch.doc.incarnation ?? null);
    branches.push({ name: branch.name, key: branch.key, etag: branch.etag, doc: branch.doc });
    const parent = branch.doc.parent?.branch;
    if (parent) children.set(parent, (children.get(parent) ?? 0) + 1);
  }
  const tags: { name: string; key: string; etag: string; doc: TagDocument }[] = [];
  for await (const tag of listCanonical(ctx, refs.codec, "tag")) {
    tags.push({ name: tag.name, key: tag.key, etag: tag.etag, doc: tag.doc });
    children.set(tag.doc.target.branch, (children.get(tag.doc.target.branch) ?? 0) + 1);
  }
  // Orphan: it recorded an incarnation of its branch that no longer exists (deleted or
  // re-created) and the version it names is gone with it. A reference whose version still
  // exists is kept whatever happened to the branch file (e.g. a released client removed it).
  const orphaned = async (target: VersionRef, recorded: string | undefined): Promise<boolean> => {
    if (recorded === undefined || target.branch === DEFAULT_BRANCH) return false;
    const current = incarnations.get(target.branch);
    if (current !== undefined && (current === null || current === recorded)) return false;
    const key = refs.format.manifestKey(target.branch, target.version);
    return (await ctx.store.head(key)) === null;
  };
  for (const branch of branches) {
    const parent = branch.doc.parent;
    if (!parent || !(await orphaned(parent, branch.doc.parentIncarnation))) continue;
    if ((children.get(branch.name) ?? 0) > 0) continue; // never cascade: report-free skip
    if (await hasPendingIntent(ctx, "branch", branch.name)) continue;
    const removed = await removeIfMatch(ctx, refs.codec, branch.key, branch.etag, branch.doc);
    if (removed === "applied") {
      report.removedOrphans.push(branch.key);
    }
  }
  for (const tag of tags) {
    if (!(await orphaned(tag.doc.target, tag.doc.branchIncarnation))) continue;
    if (await hasPendingIntent(ctx, "tag", tag.name)) continue;
    if ((await removeIfMatch(ctx, refs.codec, tag.key, tag.etag, tag.doc)) === "applied") {
      report.removedOrphans.push(tag.key);
    }
  }
}

async function hasPendingIntent(
  ctx: ProtocolContext,
  kind: "tag" | "branch",
  name: string,
): Promise<boolean> {
  for await (const meta of listAll(ctx.store, intentsOfPrefix(kind, name))) {
    if (meta.key.endsWith(".json")) return true;
  }
  return false;
}
