import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { tryReadManifest } from "@holdfast/dataset";
import { createContext, RETIREMENT_ROOT } from "@holdfast/protocol";
import { holdfastFormat, INTENTS_PREFIX, listTags } from "@holdfast/refs-lifecycle";
import { CLEANUP_LOCK_KEY } from "@holdfast/retirement";

/** Whether a version is whole: its manifest and every data file it names are on the store. */
export async function versionIsWhole(
  store: ObjectStore,
  branch: string,
  version: number,
): Promise<boolean> {
  const ctx = createContext(store);
  const found = await tryReadManifest(ctx, branch, version);
  if (!found) return false;
  for (const file of found.manifest.files) {
    if (!(await store.head(file.key))) return false;
  }
  return true;
}

/**
 * The invariant audit after a run (docs/guarantees.md, invariants): every tagged version is
 * whole, and after recovery no retirement record, reference intent or cleanup lock is left.
 */
export async function auditAfterRecovery(store: ObjectStore): Promise<string[]> {
  const failures: string[] = [];
  const ctx = createContext(store);
  for (const tag of await listTags(ctx, { format: holdfastFormat })) {
    if (!(await versionIsWhole(store, tag.target.branch, tag.target.version))) {
      failures.push(
        `tag ${tag.name} names ${tag.target.branch}@${tag.target.version}, which is not whole`,
      );
    }
  }
  for (const prefix of [RETIREMENT_ROOT, INTENTS_PREFIX]) {
    for await (const meta of listAll(store, prefix))
      failures.push(`left after recovery: ${meta.key}`);
  }
  if (await store.head(CLEANUP_LOCK_KEY)) failures.push(`left after recovery: ${CLEANUP_LOCK_KEY}`);
  return failures;
}
