import { holdfastError, listAll } from "@holdfast/conditional-store";
import { RETIREMENT_ROOT } from "@holdfast/protocol";
import type { RetirementContext } from "./context.js";
import { fence, isFenced, readRecord } from "./machine.js";
import { parseRetirementKey } from "./record.js";

/** What {@link abandonRetirement} did. */
export interface AbandonResult {
  readonly key: string;
  /** State the record was in when it was abandoned. */
  readonly previousState: "draining" | "sealed" | "cancelled";
  readonly branch: string;
  readonly versions: number[];
}

/** Error code when an operator asks to abandon a committed retirement (it runs to completion). */
export const RETIREMENT_COMMITTED = "RETIREMENT_COMMITTED";

/**
 * The operator's "end it now" (`holdfast recover --abandon <id>`): finds the record whose
 * operation id (or key) is `id`, and if it is pre-commit (draining or sealed) fences it to
 * `cancelled` with fresh bytes and deletes it, whatever its ownership bound says. Safe at
 * any time: cancelling keeps every version, and a still-running owner's next if-match
 * fails (`RetirementFenced`) so it stops without deleting anything. A committed record is
 * refused (`refused`, RETIREMENT_COMMITTED): committed retirement always runs to
 * completion (`holdfast recover`).
 */
export async function abandonRetirement(
  ctx: RetirementContext,
  id: string,
  options: { owner?: string | undefined } = {},
): Promise<AbandonResult> {
  if (!/^[0-9A-Za-z_/.-]+$/.test(id)) {
    throw holdfastError("invalid-input", "abandonRetirement", `invalid retirement id ${id}`, {
      code: "INVALID_ID",
    });
  }
  const owner = options.owner ?? ctx.ids.next();
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const key = await findRecord(ctx, id);
    const handle = key ? await readRecord(ctx, key) : null;
    if (!key || !handle) {
      throw holdfastError("not-found", "abandonRetirement", `no retirement record ${id}`, {
        code: "RETIREMENT_NOT_FOUND",
        hint: "holdfast status lists retirements in flight with their ids",
      });
    }
    const { record } = handle;
    const versions = record.versions.filter((v) => !v.cancelled).map((v) => v.version);
    if (record.state === "committed") {
      throw holdfastError(
        "refused",
        "abandonRetirement",
        `retirement ${record.opId} is committed: it runs to completion, never back`,
        { key, code: RETIREMENT_COMMITTED, hint: "run holdfast recover to finish it" },
      );
    }
    if (record.state === "cancelled") {
      await ctx.store.delete(key);
      return { key, previousState: "cancelled", branch: record.branch, versions };
    }
    try {
      const cancelled = await fence(ctx, handle, "cancelled", { owner });
      await ctx.store.delete(cancelled.key);
    } catch (error) {
      if (isFenced(error)) continue; // moved meanwhile (maybe committed): look again
      throw error;
    }
    return { key, previousState: record.state, branch: record.branch, versions };
  }
  throw holdfastError("conflict", "abandonRetirement", `retirement ${id} keeps changing`, {
    code: "RetirementFenced",
    hint: "its owner is active; try again",
  });
}

async function findRecord(ctx: RetirementContext, id: string): Promise<string | null> {
  if (parseRetirementKey(id)) return id;
  for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
    const parts = parseRetirementKey(meta.key);
    if (parts && parts.opId === id) return meta.key;
  }
  return null;
}
