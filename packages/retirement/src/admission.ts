import { listAll } from "@holdfast/conditional-store";
import { isActiveAt, storageNow as probeStorageNow } from "@holdfast/protocol";
import type { RetirementContext } from "./context.js";
import { decodeRetirementRecord, parseRetirementKey, retirementPrefix } from "./record.js";

/** What retirement says about one version right now, as seen by an acquirer or a publisher. */
export type AdmissionState = "open" | "draining" | "sealed" | "committed";

export interface Admission {
  /**
   * `open`: no live retirement covers the version (none, cancelled, or an abandoned drain);
   * `draining`: new leases/references are refused, admitted leases may renew;
   * `sealed`: renewals fail too; `committed`: the version is being deleted, irreversibly.
   */
  readonly state: AdmissionState;
  /** The record that decided a non-open state. */
  readonly record?: { readonly key: string; readonly etag: string } | undefined;
  /**
   * `open` only because a committed record, or a cancelled one (it may have been committed),
   * names the version cancelled. That cancellation can be newer than a finalizer's view of
   * the record, which still counts the version retired, so an acquirer that reads this
   * rewrites its lease before it returns it (docs/protocol.md §5.4).
   * Never set for a version no record names, nor for a record still draining or sealed
   * (every committed view of it shows its cancellations).
   */
  readonly reopened?: true | undefined;
}

export interface ReadAdmissionOptions {
  /**
   * Storage time to judge drain ownership bounds against. When absent and a draining
   * record is found, a storage-time probe is written (3 requests); no probe otherwise.
   */
  readonly storageNow?: Date | undefined;
}

const SEVERITY: Record<AdmissionState, number> = { open: 0, draining: 1, sealed: 2, committed: 3 };

/**
 * Reads the retirement admission state of `(branch, version)`: one LIST of the branch's
 * records, then a GET of each record whose key range covers the version. The caller writes
 * its own object first, then calls this (write-then-read, docs/protocol.md §4), so either it
 * sees the drain or the cleaner's census sees its write. A drain past its ownership bound
 * (storage time) counts as open; unreadable records throw (fail closed).
 */
export async function readAdmission(
  ctx: RetirementContext,
  branch: string,
  version: number,
  options: ReadAdmissionOptions = {},
): Promise<Admission> {
  let storageNow = options.storageNow;
  let result: Admission = { state: "open" };
  let reopened = false;
  for await (const meta of listAll(ctx.store, retirementPrefix(branch))) {
    const parts = parseRetirementKey(meta.key);
    if (!parts || parts.branch !== branch) continue;
    if (version < parts.minVersion || version > parts.maxVersion) continue;
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // finalized between list and get
    const record = decodeRetirementRecord(got.body, meta.key);
    const entry = record.versions.find((v) => v.version === version);
    if (!entry) continue;
    if (record.state === "cancelled" || entry.cancelled) {
      // Cancelled after a commit (`cancelReplaced`, or the last version's cancellation that
      // made the record cancelled): a finalizer holding the committed view may not show it.
      if (record.state === "committed" || record.state === "cancelled") reopened = true;
      continue;
    }
    let state: AdmissionState = record.state;
    if (state === "draining") {
      storageNow ??= await probeStorageNow(ctx);
      const precision = ctx.store.capabilities.timestampPrecisionMs;
      if (!isActiveAt(got.lastModified, record.ownershipBoundMs, precision, storageNow)) {
        state = "open"; // owner gone past its bound: abandoned, recovery will fence it
      }
    }
    if (SEVERITY[state] > SEVERITY[result.state]) {
      result = { state, record: { key: meta.key, etag: got.etag } };
    }
  }
  return result.state === "open" && reopened ? { ...result, reopened: true } : result;
}
