import { branchFenceKey } from "@holdfast/leases";
import { validateName } from "@holdfast/protocol";
import type { ReferenceKind } from "./schema.js";

/** Folder of canonical tags (released layout). */
export const TAGS_PREFIX = "_refs/tags/";
/** Folder of canonical branches (released layout). */
export const BRANCHES_PREFIX = "_refs/branches/";
/** Root of every lifecycle sidecar; released clients never enumerate it. */
export const REFS_SIDECAR_PREFIX = "_holdfast/refs/";
/** All admission intents (what the cleaner's census lists first). */
export const INTENTS_PREFIX = `${REFS_SIDECAR_PREFIX}intents/`;
/** Branch incarnation-termination fences. */
export const FENCES_PREFIX = `${REFS_SIDECAR_PREFIX}fences/`;

const FOLDER: Record<ReferenceKind, string> = { tag: "tags", branch: "branches" };

/** `_refs/{tags|branches}/{name}.json` */
export function canonicalKey(kind: ReferenceKind, name: string): string {
  return `_refs/${FOLDER[kind]}/${validateName(name, kind)}.json`;
}

/** Canonical folder of a kind. */
export function canonicalPrefix(kind: ReferenceKind): string {
  return kind === "tag" ? TAGS_PREFIX : BRANCHES_PREFIX;
}

/** Name from a canonical key, or null for a foreign key in the folder. */
export function nameFromCanonicalKey(kind: ReferenceKind, key: string): string | null {
  const prefix = canonicalPrefix(kind);
  if (!key.startsWith(prefix) || !key.endsWith(".json")) return null;
  const name = key.slice(prefix.length, -".json".length);
  return name.length > 0 && !name.includes("/") ? name : null;
}

/** Listing prefix of the intents of one reference. */
export function intentsOfPrefix(kind: ReferenceKind, name: string): string {
  return `${INTENTS_PREFIX}${FOLDER[kind]}/${validateName(name, kind)}/`;
}

/** `_holdfast/refs/intents/{tags|branches}/{name}/{intentId}.json`: unique per operation. */
export function intentKey(kind: ReferenceKind, name: string, intentId: string): string {
  return `${intentsOfPrefix(kind, name)}${intentId}.json`;
}

/** `_holdfast/refs/fences/{branch}.json` */
export function fenceKey(branch: string): string {
  // One definition of the key: lease acquirers read it (leases' `branchFenceKey`).
  return branchFenceKey(branch);
}
