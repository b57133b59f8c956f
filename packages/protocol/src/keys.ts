/** Prefix of every holdfast control object (never data, never a manifest). */
export const CONTROL_PREFIX = "_holdfast/";

/** Storage-time probes written and removed by `storageNow`. */
export const CLOCK_PREFIX = "_holdfast/clock/";

/** `_holdfast/clock/{id}`: a storage-time probe. */
export function clockProbeKey(id: string): string {
  return `${CLOCK_PREFIX}${id}`;
}
