import { cleanup, ORPHAN_GRACE_BELOW_FLOOR } from "@holdfast/cleanup";
import { isHoldfastError } from "@holdfast/conditional-store";
import { COMMIT_INTENT_PREFIX, defaultFormat } from "@holdfast/dataset";
import { censusReferences } from "@holdfast/refs-lifecycle";
import { MIN_VERSION_AGE_MS, NEVER_BEATS, ORPHAN_GRACE_MS, OWNERSHIP_BOUND_MS } from "../config.js";
import { frozenFormat } from "../planted.js";
import { rethrowIfCrashed, type SimulationWorld } from "../world.js";

/**
 * Cleaners: each runs cleanup over every branch with the reference census, its host clock
 * skewed; one run in ten asks for an orphan grace below the floor, which must be refused.
 * A cleanup's start releases the writers dawdling for one ({@link SimulationWorld.dawdle}).
 */
export function spawnCleaners(world: SimulationWorld): void {
  const { config, sched } = world;
  for (let c = 0; c < config.cleaners; c += 1) {
    const name = `cleaner-${c}`;
    const skew = sched.int(-config.maxClockSkewMs, config.maxClockSkewMs);
    const blind = config.plant === "blind-last-look";
    const ctx = world.contextFor(
      name,
      config.faults,
      skew,
      blind ? COMMIT_INTENT_PREFIX : undefined,
    );
    world.spawn(name, async () => {
      for (let r = 0; r < Math.max(1, Math.floor(config.rounds / 2)); r += 1) {
        await sched.sleep(sched.int(500, 6000));
        // Now and then a cleaner asks for a grace below the floor: it must be refused.
        const short = sched.random() < 0.1;
        for (const start of world.cleanupStartWaiters.splice(0)) start();
        try {
          const result = await cleanup(
            ctx,
            {
              retainVersions: sched.int(1, 3),
              orphanGraceMs: short ? sched.pick([0, 60_000]) : ORPHAN_GRACE_MS,
              minVersionAgeMs: MIN_VERSION_AGE_MS,
            },
            {
              referenceCensus: censusReferences(ctx),
              ownershipBoundMs: OWNERSHIP_BOUND_MS,
              // Cleaners here race on purpose: skip the one-cleanup lock, and keep host
              // timers (the heartbeat) out of the seeded schedule.
              concurrent: true,
              heartbeatSleep: NEVER_BEATS,
              ...(blind ? { format: frozenFormat(defaultFormat) } : {}),
            },
          );
          world.stats.retired = (world.stats.retired ?? 0) + result.retired.length;
          if (short) world.violate(4, `${name}'s cleanup accepted an orphan grace below the floor`);
          world.bump("cleanups");
        } catch (error) {
          rethrowIfCrashed(ctx, error);
          if (short && isHoldfastError(error, "invalid-input")) {
            if (error.code !== ORPHAN_GRACE_BELOW_FLOOR) throw error;
            world.bump("graceRefused");
            continue;
          }
          world.tolerate(ctx, error, "cleanupFailed");
        }
      }
    });
  }
}
