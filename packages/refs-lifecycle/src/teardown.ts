import { deleteAllUnder } from "@holdfast/conditional-store";
import type { DatasetFormat } from "@holdfast/dataset";
import { branchLeasesPrefix } from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import { retirementPrefix } from "@holdfast/retirement";

/**
 * Removes the branch incarnation's manifests (through its format), leases and retirement
 * state (docs/protocol.md §7). Only formats whose codec writes branches get here.
 */
export async function teardownBranch(
  ctx: ProtocolContext,
  format: DatasetFormat,
  branch: string,
): Promise<void> {
  await format.teardownVersions(ctx, branch);
  for (const prefix of [branchLeasesPrefix(branch), retirementPrefix(branch)]) {
    await deleteAllUnder(ctx.store, prefix);
  }
}
