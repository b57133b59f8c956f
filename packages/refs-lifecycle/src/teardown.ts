import { batches, listAll } from "@holdfast/conditional-store";
import { headHintKey, type ProtocolContext, versionsPrefix } from "@holdfast/dataset";
import { branchLeasesPrefix } from "@holdfast/leases";
import { retirementPrefix } from "@holdfast/retirement";

/**
 * Removes the branch incarnation's manifests, leases and retirement state (docs/protocol.md,
 * References). Only formats whose codec writes branches get here (the holdfast layout).
 */
export async function teardownBranch(ctx: ProtocolContext, branch: string): Promise<void> {
  for (const prefix of [
    versionsPrefix(branch),
    branchLeasesPrefix(branch),
    retirementPrefix(branch),
  ]) {
    await deletePrefix(ctx, prefix);
  }
  // The head hint goes last: a hint without versions is harmless (a search falls back).
  await ctx.store.delete(headHintKey(branch));
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
