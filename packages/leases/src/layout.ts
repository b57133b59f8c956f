import { formatVersion, validateName, validateVersion } from "@holdfast/dataset";

/** Root of every lease object. */
export const LEASES_PREFIX = "_holdfast/leases/";

const LEASE_KEY = /^_holdfast\/leases\/([^/]+)\/(\d{20})\/([0-9A-HJKMNP-TV-Z]{26})\.json$/;

/** `_holdfast/leases/{branch}/`: every lease on a branch (what a census lists). */
export function branchLeasesPrefix(branch: string): string {
  return `${LEASES_PREFIX}${validateName(branch, "branch")}/`;
}

/** `_holdfast/leases/{branch}/{version:020d}/`: every lease on one version. */
export function versionLeasesPrefix(branch: string, version: number): string {
  return `${branchLeasesPrefix(branch)}${formatVersion(version)}/`;
}

/** `_holdfast/leases/{branch}/{version:020d}/{leaseId}.json` */
export function leaseKey(branch: string, version: number, leaseId: string): string {
  return `${versionLeasesPrefix(branch, validateVersion(version))}${leaseId}.json`;
}

/** Inverse of {@link leaseKey}; `null` for a foreign key. */
export function parseLeaseKey(
  key: string,
): { branch: string; version: number; leaseId: string } | null {
  const match = LEASE_KEY.exec(key);
  if (!match) return null;
  const version = Number(match[2]!);
  if (!Number.isSafeInteger(version) || version < 1) return null;
  return { branch: match[1]!, version, leaseId: match[3]! };
}

/**
 * `_holdfast/refs/fences/{branch}.json`: the termination fence a branch deletion writes
 * (refs-lifecycle writes it and takes its key from here). An acquirer reads it after its
 * own lease write, so either it sees the fence or the deletion's lease check sees the lease.
 */
export function branchFenceKey(branch: string): string {
  return `_holdfast/refs/fences/${validateName(branch, "branch")}.json`;
}
