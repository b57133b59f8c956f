import type { z } from "zod";
import type { CleanupProgressShape } from "./cli.js";

/** A cleanup run's progress estimate, as the cleanup package's `ProgressEstimate` reports it. */
export interface ProgressEstimateFields {
  readonly phase: z.infer<typeof CleanupProgressShape>["phase"];
  readonly done: number;
  readonly total?: number | undefined;
  readonly left?: number | undefined;
  readonly ratePerSec?: number | undefined;
  readonly etaMs?: number | undefined;
  readonly elapsedMs: number;
}

/**
 * The progress document of a run (a cleanup job's `progress`, the body of each
 * `holdfast cleanup|recover --json` progress event): `total` only once known, every other
 * unknown as null.
 */
export function progressDocument(
  e: ProgressEstimateFields,
): z.infer<typeof CleanupProgressShape> & { elapsedMs: number } {
  return {
    phase: e.phase,
    done: e.done,
    ...(e.total === undefined ? {} : { total: e.total }),
    left: e.left ?? null,
    ratePerSec: e.ratePerSec ?? null,
    etaMs: e.etaMs ?? null,
    elapsedMs: e.elapsedMs,
  };
}
