import { holdfastError, type IdSource, type ObjectStore } from "@holdfast/conditional-store";

/** Whole-second floor: HTTP Last-Modified precision (SPEC §3). */
export const PRECISION_FLOOR_MS = 1000;

function truncSec(ms: number): number {
  return Math.floor(ms / 1000) * 1000;
}

/**
 * True while an ownership bound measured from a record's Last-Modified has not passed at
 * storage time `now`: one precision interval is added so truncation never shortens it.
 */
export function boundHolds(
  lastModified: Date,
  boundMs: number,
  precisionMs: number,
  now: Date,
): boolean {
  const expiresAt =
    truncSec(lastModified.getTime()) + boundMs + Math.max(precisionMs, PRECISION_FLOOR_MS);
  return expiresAt > truncSec(now.getTime());
}

/** The store's "now": Last-Modified of a probe object this process writes, heads and deletes. */
export async function probeStorageNow(store: ObjectStore, ids: IdSource): Promise<Date> {
  const key = `_holdfast/clock/${ids.next()}`;
  await store.put(key, new Uint8Array(0));
  const meta = await store.head(key);
  await store.delete(key);
  if (!meta) {
    throw holdfastError("unsupported", "head", `storage-time probe ${key} vanished`, { key });
  }
  return meta.lastModified;
}
