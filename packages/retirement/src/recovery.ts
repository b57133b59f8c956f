import { listAll } from "@holdfast/conditional-store";
import { isActiveAt, storageNow as probeStorageNow, RETIREMENT_ROOT } from "@holdfast/protocol";
import type { RetirementContext } from "./context.js";
import { activeVersions, fence, isFenced, type RetirementHandle, readRecord } from "./machine.js";
import { parseRetirementKey } from "./record.js";

/** Active leases among `versions` at storage time `referenceTime`: version → reason (`lease`). */
export type LeaseCensus = (
  branch: string,
  versions: number[],
  referenceTime: Date,
) => Promise<Map<number, string>>;

/**
 * Durable references among `versions` (intents first, then canonical tags and branches,
 * then descendant lineage): version → reason. Fails closed: throws on any read error.
 */
export type ReferenceCensus = (branch: string, versions: number[]) => Promise<Map<number, string>>;

export interface RecoverOptions {
  readonly leaseCensus: LeaseCensus;
  readonly referenceCensus: ReferenceCensus;
  /** ULID of the recovering cleaner (it becomes the owner of what it takes over). @default a fresh id */
  readonly owner?: string | undefined;
  /** Storage time to judge ownership bounds and leases against. @default a storage-time probe */
  readonly storageNow?: Date | undefined;
  /**
   * Runs when a sealed record's census failed, once every record is resolved and before that
   * failure is thrown, with what recovery did: the committed records (a failure never stops
   * them) and the records given up. Cleanup cancels there the committed records' versions
   * whose manifest was replaced, which needs a listing, not the refused input
   * (docs/protocol.md §5.3). An error it throws is thrown
   * instead of the census failure.
   */
  readonly onCensusFailure?: ((report: RecoveryReport) => Promise<void>) | undefined;
}

export interface RecoveryReport {
  /** Committed records to run to completion (delete what they retire, then `finalize`). */
  readonly committed: RetirementHandle[];
  /**
   * Records moved to `cancelled` and deleted: stale drains, seals every version of which was
   * protected, and seals whose census failed (given up before their commit).
   */
  readonly cancelled: string[];
  /** Records left alone: a live owner's drain or seal within its ownership bound. */
  readonly live: RetirementHandle[];
  /** Versions recovery kept because a lease or reference won, per branch. */
  readonly retained: { branch: string; version: number; reason: string }[];
}

/**
 * Scans all durable retirement state and resolves it (docs/protocol.md §5):
 * - cancelled records are deleted (terminal);
 * - a drain past its ownership bound is fenced (fresh-bytes rewrite to `cancelled`, so its
 *   old owner can no longer seal) and deleted; a live drain is left alone (L5);
 * - a pre-commit seal is censused: versions with an active lease or any durable reference
 *   cancelled at once, so their leases renew again (L12) and recovery never overrides
 *   them (L6, L10, L11); the rest is committed in the same write when the owner is past
 *   its bound or had to be fenced for that cancellation. The write is an if-match on the
 *   record as read before the census, so a live owner's cancellation in between makes it
 *   fail (L6); an unchanged sealed record admits no new lease or reference meanwhile;
 * - a seal whose census fails (the format refuses a manifest or reference the census reads,
 *   or a read fails) cannot be decided: it is given up before its commit (fenced to
 *   `cancelled` and deleted, whatever its owner's bound; nothing of it is deleted, so this is
 *   always safe) and recovery goes on with the other records, deciding nothing more: a
 *   later sealed record is given up as well, never committed. The first failure is thrown
 *   unchanged at the end, after `onCensusFailure`: a refusal leaves no pre-commit record
 *   behind and blocks no lease;
 * - committed records are returned: committed retirement always runs to completion.
 */
export async function recoverRetirements(
  ctx: RetirementContext,
  options: RecoverOptions,
): Promise<RecoveryReport> {
  const owner = options.owner ?? ctx.ids.next();
  let now = options.storageNow;
  const report: RecoveryReport = { committed: [], cancelled: [], live: [], retained: [] };
  const precision = ctx.store.capabilities.timestampPrecisionMs;
  let failed: { error: unknown } | undefined;
  for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
    if (!parseRetirementKey(meta.key)) continue;
    const handle = await readRecord(ctx, meta.key);
    if (!handle) continue;
    const { record } = handle;
    if (record.state === "cancelled") {
      await ctx.store.delete(handle.key);
      report.cancelled.push(handle.key);
      continue;
    }
    if (record.state === "committed") {
      report.committed.push(handle);
      continue;
    }
    now ??= await probeStorageNow(ctx);
    const ownerLive = isActiveAt(handle.lastModified!, record.ownershipBoundMs, precision, now);
    try {
      if (record.state === "draining") {
        if (ownerLive) {
          report.live.push(handle);
          continue;
        }
        await giveUp(ctx, handle, owner, report);
        continue;
      }
      // After a failure in this pass nothing more is decided (docs/protocol.md §5.3: refuse before
      // deciding): a later sealed record is given up too rather than committed, which is always
      // safe before its commit.
      if (failed) {
        await giveUp(ctx, handle, owner, report);
        continue;
      }
      // Sealed, not committed: leases and references win over the recovered claim.
      const versions = activeVersions(record);
      const kept = new Map<number, string>();
      try {
        merge(kept, await options.leaseCensus(record.branch, versions, now));
        const rest = versions.filter((v) => !kept.has(v));
        if (rest.length > 0) merge(kept, await options.referenceCensus(record.branch, rest));
      } catch (error) {
        // Undecidable (a refused manifest or reference, an unreadable object): given up
        // before its commit, live owner or not, so no version of it stays refused to leases
        // while the failure lasts (a lease the census found renews again). The live owner's
        // next if-match fails and it stops without deleting anything.
        failed ??= { error };
        await giveUp(ctx, handle, owner, report);
        continue;
      }
      for (const [version, reason] of kept) {
        report.retained.push({ branch: record.branch, version, reason });
      }
      if (ownerLive && kept.size === 0) {
        report.live.push(handle);
        continue;
      }
      // One if-match write cancels the protected versions and commits the rest. It fences
      // a live owner too (its next if-match fails and it stops): cancelling cannot wait
      // for the bound, or an admitted lease would stay unrenewable (L12).
      const next = await fence(ctx, handle, "committed", { owner, cancel: kept });
      if (next.record.state === "cancelled") {
        await ctx.store.delete(next.key);
        report.cancelled.push(next.key);
      } else {
        report.committed.push(next);
      }
    } catch (error) {
      // Someone else moved the record after we read it: their move stands; the next
      // recovery sees it.
      if (isFenced(error)) continue;
      throw error;
    }
  }
  if (failed) {
    await options.onCensusFailure?.(report);
    throw failed.error;
  }
  return report;
}

/** A pre-commit record recovery takes over and ends: if-match rewrite to `cancelled` (fresh bytes, new owner), then DELETE. */
async function giveUp(
  ctx: RetirementContext,
  handle: RetirementHandle,
  owner: string,
  report: RecoveryReport,
): Promise<void> {
  const fenced = await fence(ctx, handle, "cancelled", { owner });
  await ctx.store.delete(fenced.key);
  report.cancelled.push(handle.key);
}

function merge(into: Map<number, string>, from: ReadonlyMap<number, string>): void {
  for (const [version, reason] of from) if (!into.has(version)) into.set(version, reason);
}
