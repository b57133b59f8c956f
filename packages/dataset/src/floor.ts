import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import { type ProtocolContext, validateName } from "@holdfast/protocol";
import { resolverOptions } from "@holdfast/protocol/internal";
import { headHintKey, putHint, readHeadHint } from "./heads.js";
import { latestFromHint } from "./latest.js";

/**
 * Cleanup's step before it deletes any manifest of `branch` numbered up to `maxRetired`
 * (docs/protocol.md §6, Cleanup 7 floor): raises the branch's retired floor to at least
 * `maxRetired`, so commits that put `version + 1` without listing never land on a number
 * this deletion frees. When the hint predates floors (or there is none), the branch's
 * latest version is listed from it and the floor becomes `latest - 1`, which bounds every
 * earlier deletion (cleanup never deletes a branch's latest version).
 *
 * A branch torn down under a committed record (docs/protocol.md §2.1, F1 "A branch torn down
 * under a record"): when the branch's latest is at or below `maxRetired`, the record's
 * higher numbers belong to a deleted incarnation whose manifests are gone (a manifest's
 * `txnId` makes its ETag unique, so the recorded one never comes back), and the floor is
 * raised only to `latest - 1`; a branch with no version at all keeps no hint to raise.
 * Resolves once the stored floor covers every number the deletion can free; throws otherwise.
 */
export async function raiseRetiredFloor(
  ctx: ProtocolContext,
  branch: string,
  maxRetired: number,
): Promise<void> {
  validateName(branch, "branch");
  if (!ctx.store.capabilities.atomicConditionalUpdate) return; // no commit probes there
  for (let attempt = 0; attempt < 16; attempt += 1) {
    const hint = await readHeadHint(ctx, branch);
    const at = hint?.version ?? null;
    const floor = at !== null ? (hint?.retiredFloor ?? null) : null;
    if (floor !== null && floor >= maxRetired) return;
    let next: { version: number; retiredFloor: number };
    if (floor !== null && at !== null && at > maxRetired) {
      // Above the old floor versions have no gaps: the hint's version exists and stays.
      next = { version: at, retiredFloor: maxRetired };
    } else {
      // No floor, or a hint at or below the record (lagging, or a re-created branch): list.
      const { latest: top, atOrAboveHint } = await latestFromHint(ctx, branch, hint);
      if (top === null) return; // torn down: nothing of the branch is left to free
      const kept = floor !== null && atOrAboveHint ? floor : null;
      // With a floor, only the record's own numbers below the latest can be freed; without
      // one, every earlier deletion is bounded by the latest.
      const target = kept !== null ? Math.min(maxRetired, top - 1) : top - 1;
      if (kept !== null && kept >= target) return;
      next = { version: top, retiredFloor: target };
    }
    try {
      if ((await putHint(ctx, branch, next, hint, resolverOptions(ctx))) === "applied") return;
    } catch (error) {
      // An unknown outcome is decided by the next read of the hint.
      if (!isHoldfastError(error, "unresolved")) throw error;
    }
  }
  throw holdfastError(
    "conflict",
    "cleanup",
    `could not raise the retired floor of ${branch}: the head hint kept changing`,
    { key: headHintKey(branch), code: "HEAD_HINT_CONTENDED", hint: "retry the cleanup" },
  );
}
