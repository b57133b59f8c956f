import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import { type ProtocolContext, resolverOptions } from "./context.js";
import { headHintKey, putHint, readHeadHint } from "./heads.js";
import { latestFromHint } from "./latest.js";
import { validateName } from "./names.js";

/**
 * Cleanup's step before it deletes any manifest of `branch` numbered up to `maxRetired`
 * (docs/protocol.md, Cleanup step 5): raises the branch's retired floor to at least
 * `maxRetired`, so commits that put `version + 1` without listing never land on a number
 * this deletion frees. When the hint predates floors (or there is none), the branch's
 * latest version is listed from it and the floor becomes `latest - 1`, which bounds every
 * earlier deletion (cleanup never deletes a branch's latest version).
 * Resolves only once the stored floor is at least `maxRetired`; throws otherwise.
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
    if (hint?.retiredFloor != null && hint.version !== null && hint.retiredFloor >= maxRetired) {
      return;
    }
    let next: { version: number; retiredFloor: number };
    if (hint?.retiredFloor != null && hint.version !== null) {
      // Above the old floor versions have no gaps, so maxRetired + 1 (never deleted: the
      // latest version is kept) exists.
      next = { version: Math.max(hint.version, maxRetired + 1), retiredFloor: maxRetired };
    } else {
      const top = (await latestFromHint(ctx, branch, hint)).latest;
      if (top === null || top <= maxRetired) {
        throw holdfastError(
          "invalid-input",
          "cleanup",
          `branch ${branch} has no version above ${maxRetired}: refusing to retire its latest`,
          { code: "RETIRE_LATEST" },
        );
      }
      next = { version: top, retiredFloor: top - 1 };
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
