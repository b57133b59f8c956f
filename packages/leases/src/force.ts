import { holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { type LeaseEntry, listLeases } from "./list.js";

/** A lease id as `lease list` prints it: a ULID (26 characters of Crockford base32). */
const LEASE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/i;

/**
 * Removes the lease `leaseId` whoever holds it, with the caller's store credentials and no
 * handle (the CLI's `lease release --force`): its holder loses protection, and its next
 * renewal fails LEASE_LOST (docs/protocol.md §4.2). A malformed id is `invalid-input`
 * (INVALID_LEASE_ID) before any request; an id no listed lease has is `not-found`
 * (LEASE_NOT_FOUND). One listing and one delete. Returns the lease removed.
 */
export async function forceReleaseLease(
  ctx: ProtocolContext,
  leaseId: string,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<LeaseEntry> {
  if (!LEASE_ID.test(leaseId)) {
    throw holdfastError(
      "invalid-input",
      "releaseLease",
      `invalid lease id ${JSON.stringify(leaseId)}: expected a 26-character ULID`,
      { code: "INVALID_LEASE_ID", hint: "list lease ids with lease list" },
    );
  }
  let found: LeaseEntry | undefined;
  const { signal } = options;
  for await (const entry of listLeases(ctx, signal === undefined ? {} : { signal })) {
    if (entry.leaseId.toUpperCase() === leaseId.toUpperCase()) found = entry;
  }
  if (!found) {
    throw holdfastError("not-found", "releaseLease", `no lease ${leaseId}`, {
      code: "LEASE_NOT_FOUND",
      hint: "it may have been released already or removed with its retired version",
    });
  }
  await ctx.store.delete(found.key, { signal });
  return found;
}
