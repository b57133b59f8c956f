import { batches, listAll } from "@holdfast/conditional-store";
import { headHintKey, type ProtocolContext, versionsPrefix } from "@holdfast/dataset";
import { branchLeasesPrefix } from "@holdfast/leases";
import { retirementPrefix } from "@holdfast/retirement";

/**
 * Removes the branch incarnation's manifests, leases and retirement state (docs/protocol.md,
 * References). Only formats whose codec writes branches get here (the holdfast layout).
 */
export async function teardownBranch(ctx: ProtocolContext, branch: string): Promise<void> {
  // The head hint goes first: its retired floor speaks for this incarnation only, and the
  // manifests deleted below never raise it. Without a hint a commit lists (docs/protocol.md
  // §2): it sees what an interrupted teardown left and never reuses a number of it.
  await ctx.store.delete(headHintKey(branch));
  for (const prefix of [
    versionsPrefix(branch),
    branchLeasesPrefix(branch),
    retirementPrefix(branch),
  ]) {
    await deletePrefix(ctx, prefix);
  }
}

async function deletePrefix(ctx: ProtocolContext, prefix: string): Promise<void> {
  const size = Math.max(1, ctx.store.capabilities.maxBatchDelete);
  let keys: string[] = [];
  const flush = async () => {
    for (const batch of batches(keys, size)) {
      const result = await ctx.store.deleteMany(batch);
      const failed = result.failed[0];
      if (failed) throw failed.error;
    }
    keys = [];
  };
  for await (const meta of listAll(ctx.store, prefix)) {
    keys.push(meta.key);
    if (keys.length >= size) await flush();
  }
  await flush();
}
