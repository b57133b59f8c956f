import { formatVersion, validateVersion } from "@holdfast/dataset";
import { validateName } from "@holdfast/protocol";
import { leaseTag } from "./secret.js";

/** Root of every lease object. */
export const LEASES_PREFIX = "_holdfast/leases/";

// `{leaseId}.{tag}.json` since lease schema 2; `{leaseId}.json` (no tag) from schema 1.
const LEASE_KEY =
  /^_holdfast\/leases\/([^/]+)\/(\d{20})\/([0-9A-HJKMNP-TV-Z]{26})(?:\.([0-9a-f]{32}))?\.json$/;

/** `_holdfast/leases/{branch}/`: every lease on a branch (what a census lists). */
export function branchLeasesPrefix(branch: string): string {
  return `${LEASES_PREFIX}${validateName(branch, "branch")}/`;
}

/** `_holdfast/leases/{branch}/{version:020d}/`: every lease on one version. */
export function versionLeasesPrefix(branch: string, version: number): string {
  return `${branchLeasesPrefix(branch)}${formatVersion(version)}/`;
}

/**
 * `_holdfast/leases/{branch}/{version:020d}/{leaseId}.{tag}.json`, where `tag` is
 * {@link leaseTag} of the lease's secret: the key binds the secret, so a handle whose
 * secret is not the lease's names another key (docs/protocol.md §4.2).
 */
export function leaseKey(branch: string, version: number, leaseId: string, secret: string): string {
  return `${versionLeasesPrefix(branch, validateVersion(version))}${leaseId}.${leaseTag(secret)}.json`;
}

/**
 * Inverse of {@link leaseKey}; `null` for a foreign key. Also parses the schema 1 shape
 * `{leaseId}.json` (then `tag` is `null`): such leases still protect their version until
 * they expire, but no handle can renew or release them.
 */
export function parseLeaseKey(
  key: string,
): { branch: string; version: number; leaseId: string; tag: string | null } | null {
  const match = LEASE_KEY.exec(key);
  if (!match) return null;
  const version = Number(match[2]!);
  if (!Number.isSafeInteger(version) || version < 1) return null;
  return { branch: match[1]!, version, leaseId: match[3]!, tag: match[4] ?? null };
}

/**
 * `_holdfast/refs/fences/{branch}.json`: the termination fence a branch deletion writes
 * (refs-lifecycle writes it and takes its key from here). An acquirer reads it after its
 * own lease write, so either it sees the fence or the deletion's lease check sees the lease.
 */
export function branchFenceKey(branch: string): string {
  return `_holdfast/refs/fences/${validateName(branch, "branch")}.json`;
}
