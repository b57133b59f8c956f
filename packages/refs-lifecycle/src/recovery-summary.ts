import type { ReferenceRecoveryReport } from "./recovery.js";

/** The keys a reference recovery acted on, by what it did (a report without its census). */
export interface ReferenceRecoveryKeys {
  /** Expired pending intents revoked. */
  fencedIntents: string[];
  /** Canonicals rewritten so a stalled compare-and-swap conflicts. */
  fencedCanonicals: string[];
  /** Interrupted deletions (their intent keys) finished. */
  deletionsCompleted: string[];
  /** Interrupted deletions abandoned because the reference changed since. */
  deletionsAbandoned: string[];
  /** Intents removed (completed or revoked). */
  reclaimedIntents: string[];
  /** Canonicals of deleted parents removed. */
  removedOrphans: string[];
  /** Termination fences removed. */
  removedFences: string[];
}

/**
 * What a reference recovery did, as `holdfast recover --json` and the HTTP API's recover
 * answer report it: `references` counts each outcome, `referenceKeys` names the objects.
 */
export function summarizeReferenceRecovery(report: ReferenceRecoveryReport): {
  references: Record<keyof ReferenceRecoveryKeys, number>;
  referenceKeys: ReferenceRecoveryKeys;
} {
  const referenceKeys: ReferenceRecoveryKeys = {
    fencedIntents: [...report.fencedIntents],
    fencedCanonicals: [...report.fencedCanonicals],
    deletionsCompleted: report.deletions.filter((d) => d.outcome === "completed").map((d) => d.key),
    deletionsAbandoned: report.deletions.filter((d) => d.outcome === "abandoned").map((d) => d.key),
    reclaimedIntents: [...report.reclaimedIntents],
    removedOrphans: [...report.removedOrphans],
    removedFences: [...report.removedFences],
  };
  const references = Object.fromEntries(
    Object.entries(referenceKeys).map(([name, keys]) => [name, keys.length]),
  ) as Record<keyof ReferenceRecoveryKeys, number>;
  return { references, referenceKeys };
}
