import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import { requireFormat } from "@holdfast/dataset/internal";
import type { ProtocolContext } from "@holdfast/protocol";
import {
  type ReferenceRecoveryKeys,
  recoverReferences,
  summarizeReferenceRecovery,
} from "@holdfast/refs-lifecycle";
import { cleanup, planCleanup, recover, recoverWith } from "./cleanup.js";
import { type CleanupPolicy, validatePolicy } from "./policy.js";
import type { CleanupOptions, CleanupStats } from "./types.js";

/** What a run that recovered references first did: their recovery's counts and keys, then the run's stats. */
export interface RecoveredRun {
  /** Counts of each reference recovery outcome; null when none ran (a dry run). */
  readonly references: Record<keyof ReferenceRecoveryKeys, number> | null;
  /** The objects each outcome acted on; null when none ran (a dry run). */
  readonly referenceKeys: ReferenceRecoveryKeys | null;
  readonly stats: CleanupStats;
}

/**
 * Finishes or undoes all interrupted work (the CLI's `recover`, the HTTP API's recover):
 * tag and branch operations first (`recoverReferences`: a retirement's recovery censuses
 * references, so their intents are settled before it, R6), then every retirement record
 * (`recover`). Both steps are safe at any time (docs/protocol.md §5.3, §7.8). A reference recovery
 * that fails still lets the retirement records be recovered (`recoverRetirementsAfter` below).
 */
export async function recoverAll(
  ctx: ProtocolContext,
  options: CleanupOptions,
): Promise<RecoveredRun & { references: NonNullable<RecoveredRun["references"]> }> {
  requireFormat((options as Partial<CleanupOptions> | undefined)?.format, "recoverAll");
  const report = await recoverRetirementsAfter(ctx, options, () =>
    recoverReferences(ctx, { format: options.format }),
  );
  const { references, referenceKeys } = summarizeReferenceRecovery(report);
  return { references, referenceKeys, stats: await recover(ctx, options) };
}

/**
 * Runs the reference recovery; when it fails, the retirement records are recovered anyway
 * before its error is thrown (docs/protocol.md §5.3), with
 * a reference census that fails the same way: nothing is decided after a refusal, so every
 * sealed record is given up (always safe before its commit; its versions lease again) and
 * the committed ones' replaced versions are cancelled, rather than a crashed cleaner's
 * sealed record refusing leases while the reference refusal lasts. When that recovery fails
 * otherwise, its error is thrown, naming the reference failure (kept as its `cause`).
 */
async function recoverRetirementsAfter<T>(
  ctx: ProtocolContext,
  options: CleanupOptions,
  references: () => Promise<T>,
): Promise<T> {
  try {
    return await references();
  } catch (referenceError) {
    try {
      await recoverWith(ctx, options, { referenceCensus: () => Promise.reject(referenceError) });
    } catch (retirementError) {
      if (retirementError === referenceError || !isHoldfastError(retirementError)) {
        throw retirementError;
      }
      throw holdfastError(
        retirementError.kind,
        retirementError.operation,
        `${retirementError.message} (reference recovery failed first: ${referenceError instanceof Error ? referenceError.message : String(referenceError)})`,
        {
          key: retirementError.key,
          code: retirementError.code,
          hint: retirementError.hint,
          cause: referenceError,
        },
      );
    }
    throw referenceError;
  }
}

/**
 * A cleanup as both apps run it (the CLI's `cleanup`, the HTTP API's cleanup jobs): the
 * policy is checked first (a bad one writes nothing, invariant 6); a run that writes then
 * recovers interrupted tag and branch operations (an expired intent would otherwise keep
 * the versions it names, reason `intent`), then cleans up. A dry run (`policy.dryRun`)
 * writes nothing but its clock probe, so it recovers nothing and only plans.
 */
export async function recoverAndCleanup(
  ctx: ProtocolContext,
  policy: CleanupPolicy,
  options: CleanupOptions,
): Promise<RecoveredRun> {
  requireFormat((options as Partial<CleanupOptions> | undefined)?.format, "recoverAndCleanup");
  validatePolicy(policy);
  if (policy.dryRun === true) {
    return {
      references: null,
      referenceKeys: null,
      stats: await planCleanup(ctx, policy, options),
    };
  }
  const report = await recoverRetirementsAfter(ctx, options, () =>
    recoverReferences(ctx, { format: options.format }),
  );
  const { references, referenceKeys } = summarizeReferenceRecovery(report);
  return { references, referenceKeys, stats: await cleanup(ctx, policy, options) };
}
