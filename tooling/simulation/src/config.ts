import { MIN_ORPHAN_GRACE_MS } from "@holdfast/cleanup";
import type { PlantedFault } from "./args.js";
import type { FaultRates } from "./gated-store.js";

/** Knobs of one simulated run; everything else derives from the seed. */
export interface SimulationConfig {
  seed: number;
  readers: number;
  writers: number;
  cleaners: number;
  taggers: number;
  /** Actors that fork branches (from main or from other branches), commit on them and delete them. */
  branchers: number;
  /**
   * Share of reader rounds that lease a version some branch commit reported (the branch
   * may be live, being deleted or deleted already: a reader with a stale name).
   */
  branchReadShare: number;
  /** Writers that restore an old main version: its files committed again as the newest (sometimes holding a lease on the source). */
  restorers: number;
  /** Writers that fork by manifest only: a new branch whose first version names a main version's files and parent. */
  forkers: number;
  /** Writers that commit many files, sometimes stalling longer than the orphan grace before the commit. */
  bulkWriters: number;
  /**
   * Writers that append: the newest main version's files plus one new file, naming no
   * sources (docs/protocol.md §2.5, rule H). Optional: 0.
   */
  appenders?: number;
  /**
   * Writers of a holdfast that keeps no head hint: they list to find the next version and
   * never write the hint, so the others' hint lags (docs/protocol.md §2). Optional: 0.
   */
  hintlessWriters?: number;
  /**
   * Actors that replace main versions' manifests with bytes the format refuses and later
   * repair them (see `actors/breakers.ts`). Optional: 0.
   */
  breakers?: number;
  /** Actors that call renewLease/releaseLease with forged handles (a manifest's key and ETag). */
  forgers: number;
  /** Actors that lease and clean through a folder inside the dataset (`actors/insiders.ts`). Optional: 0. */
  insiders?: number;
  /**
   * Actors that build lease handles from the lease listing (every listed field, a made-up
   * secret) and try to release, shorten or stretch the readers' leases.
   */
  leaseAttackers: number;
  /** Operations per actor. */
  rounds: number;
  faults: FaultRates;
  /** Cleaner host clocks may be this far off (ms, either way); storage time must not care. */
  maxClockSkewMs: number;
  /** Receives one line per released request, fault and outcome (see HOLDFAST_SIM_TRACE). */
  trace?: (line: string) => void;
  /**
   * A fault planted on purpose, to prove the checker sees what it guards against (tests
   * only; see {@link PlantedFault}).
   */
  plant?: PlantedFault;
}

export type { PlantedFault } from "./args.js";

export const DEFAULT_SIMULATION: Omit<SimulationConfig, "seed"> = {
  readers: 4,
  writers: 2,
  cleaners: 2,
  taggers: 1,
  branchers: 1,
  branchReadShare: 0.25,
  restorers: 1,
  forkers: 1,
  bulkWriters: 1,
  appenders: 1,
  forgers: 1,
  leaseAttackers: 1,
  breakers: 1,
  insiders: 1,
  rounds: 10,
  faults: { applyThenLose: 0.04, loseBefore: 0.03, crash: 0.006, repeat: 0.03 },
  maxClockSkewMs: 120_000,
};

/** Harsher settings for long runs: more lost answers and crashes, two taggers and two branchers racing. */
export const STRESS_SIMULATION: Omit<SimulationConfig, "seed"> = {
  ...DEFAULT_SIMULATION,
  taggers: 2,
  branchers: 2,
  restorers: 2,
  faults: { applyThenLose: 0.1, loseBefore: 0.06, crash: 0.01, repeat: 0.06 },
};

/** The settings of a named profile (`default` or `stress`). */
export function profileConfig(profile: "default" | "stress"): Omit<SimulationConfig, "seed"> {
  return profile === "stress" ? STRESS_SIMULATION : DEFAULT_SIMULATION;
}

/** A broken invariant, with the step it was seen at (rerun the seed to reproduce). */
export interface Violation {
  invariant: 1 | 2 | 3 | 4 | 5 | 7;
  step: number;
  message: string;
}

export interface SimulationResult {
  seed: number;
  steps: number;
  violations: Violation[];
  stats: Record<string, number>;
}

/** The branch writers, restorers and forgers use; branchers fork off it. */
export const BRANCH = "main";
/** Ownership bound of every retirement and reference intent in a run. */
export const OWNERSHIP_BOUND_MS = 30_000;
/** A heartbeat timer that never fires (only the abort at the run's end ends it). */
export const NEVER_BEATS = (_ms: number, signal?: AbortSignal) =>
  new Promise<void>((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
/** Data files younger than this are never orphans: the floor cleanup accepts with writers running. */
export const ORPHAN_GRACE_MS = MIN_ORPHAN_GRACE_MS;
/** Longer than a writer's whole re-issue window (0.2+0.4+0.8+1.6 s): see cleanup's minVersionAgeMs. */
export const MIN_VERSION_AGE_MS = 10_000;
