import type { RetainReason } from "./policy.js";
import type { RunState } from "./run-state.js";

/**
 * Every reason each kept version is kept, not only the one that decided it: a version the
 * policy keeps (within `retainVersions`, too young, the latest) may also be leased, tagged
 * or forked from, and the operator should see that a reader holds it. After the plan's
 * decisions (nothing here changes one), per branch one lease census and one reference
 * census of its kept versions (reads only). A census that fails costs the run nothing: the
 * versions keep their deciding reason and a warning says so.
 */
export async function gatherReasons(state: RunState): Promise<void> {
  if (state.mode === "recover") return;
  const byBranch = new Map<string, RunState["stats"]["retained"]>();
  for (const kept of state.stats.retained) {
    const list = byBranch.get(kept.branch);
    if (list) list.push(kept);
    else byBranch.set(kept.branch, [kept]);
  }
  for (const [branch, list] of byBranch) {
    const versions = [...new Set(list.map((k) => k.version))];
    let found: ReadonlyMap<number, string>[];
    try {
      found = [
        await state.leaseCensus(branch, versions, state.now),
        await state.referenceCensus(branch, versions),
      ];
    } catch (error) {
      state.stats.warnings.push(
        `${branch}: could not gather every reason its kept versions are kept (${(error as Error).message}); each shows the reason that decided it`,
      );
      continue;
    }
    for (const kept of list) {
      const reasons: RetainReason[] = [kept.reason];
      for (const census of found) {
        const reason = census.get(kept.version);
        if (reason !== undefined && !reasons.includes(reason)) reasons.push(reason);
      }
      kept.reasons = reasons;
    }
  }
}
