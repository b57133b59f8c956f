import { batches, listAll } from "@holdfast/conditional-store";
import type { DatasetFormat, ProtocolContext } from "@holdfast/dataset";
import { branchLeasesPrefix } from "@holdfast/leases";
import { retirementPrefix } from "@holdfast/retirement";

/**
 * Removes the branch incarnation's manifests (through its format), leases and retirement
 * state (docs/protocol.md, References). Only formats whose codec writes branches get here.
 */
export async function teardownBranch(
  ctx: ProtocolContext,
  format: DatasetFormat,
  branch: string,
): Promise<void> {
  await format.teardownVersions(ctx, branch);
  for (const prefix of [branchLeasesPrefix(branch), retirementPrefix(branch)]) {
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
