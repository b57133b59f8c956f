import { z } from "zod";
import { CONTROL_PREFIX } from "./keys.js";

/**
 * Root of every retirement record: `@holdfast/retirement` writes them, a commit that
 * reuses files reads them (docs/protocol.md §2.5, §5).
 */
export const RETIREMENT_ROOT = `${CONTROL_PREFIX}retirement/`;

/** Retirement states. `committed` is the irreversible deletion boundary; `cancelled` is terminal. */
export const RetirementState = z.enum(["draining", "sealed", "committed", "cancelled"]);
export type RetirementState = z.infer<typeof RetirementState>;

/**
 * The part of a retirement record a commit reads (Commit 4 records, docs/protocol.md §2.5):
 * its state, branch and which versions it retires. Loose, so every field the state
 * machine adds is kept out of a commit's concern.
 */
export const RetirementRecordState = z.looseObject({
  state: z.string(),
  branch: z.string(),
  versions: z.array(z.looseObject({ version: z.number(), cancelled: z.boolean() })),
});
export type RetirementRecordState = z.infer<typeof RetirementRecordState>;
