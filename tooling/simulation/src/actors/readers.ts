import { isHoldfastError } from "@holdfast/conditional-store";
import { manifestKey } from "@holdfast/dataset";
import { acquireLease, type Lease, releaseLease, renewLease } from "@holdfast/leases";
import type { Protection } from "../checks.js";
import { BRANCH } from "../config.js";
import { rethrowIfCrashed, type SimulationWorld } from "../world.js";

/**
 * Forgers: each round takes a real lease handle and swaps in a manifest's key and ETag;
 * release and renew must refuse it (`invalid-input`) and leave the manifest unchanged.
 */
export function spawnForgers(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("forger", config.forgers, async (ctx) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 3000));
      const version = sched.int(1, world.latestMain());
      let lease: Lease;
      try {
        lease = await acquireLease(ctx, { branch: BRANCH, version, ttlMs: 20_000 });
      } catch (error) {
        world.tolerate(ctx, error);
        continue;
      }
      // A handle whose key and ETag are a manifest's: release must not delete it and
      // renew must not overwrite it.
      const target = manifestKey(BRANCH, sched.int(1, world.latestMain()));
      const before = await world.memory.head(target);
      const forged = { ...lease, key: target, etag: before?.etag ?? lease.etag };
      for (const call of [() => releaseLease(ctx, forged), () => renewLease(ctx, forged)]) {
        try {
          await call();
          world.violate(1, `a forged lease handle naming ${target} was accepted`);
        } catch (error) {
          rethrowIfCrashed(ctx, error);
          if (isHoldfastError(error, "invalid-input")) world.bump("forgeryRefused");
          else throw error;
        }
      }
      const after = await world.memory.head(target);
      if (before && after && after.etag !== before.etag) {
        world.violate(1, `${target} was rewritten through a forged lease handle`);
      }
      await releaseLease(ctx, lease).catch((error: unknown) => {
        rethrowIfCrashed(ctx, error);
      });
    }
  });
}

/**
 * Readers: each round leases a version (mostly on main), renews it a few times and
 * releases it; each lease is recorded as a {@link Protection} the checker holds to.
 */
export function spawnReaders(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("reader", config.readers, async (ctx, _index, name) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 2000));
      // Mostly main; sometimes a version a branch commit reported (lineage of a branch).
      const { branch, version } = world.pickTarget(config.branchReadShare);
      const ttlMs = sched.pick([300, 1500, 5000, 20_000]);
      let lease: Lease;
      let sentAt = sched.clock.now();
      try {
        lease = await acquireLease(ctx, { branch, version, ttlMs });
      } catch (error) {
        world.tolerate(ctx, error, "acquireRefused");
        continue;
      }
      world.bump("acquired");
      const protection: Protection = {
        reader: name,
        branch,
        version,
        protectedUntil: sentAt + ttlMs,
      };
      world.protections.push(protection);
      for (let k = sched.int(0, 3); k > 0; k -= 1) {
        await sched.sleep(sched.int(0, Math.floor(ttlMs * 0.6)));
        if (sched.clock.now() >= protection.protectedUntil) break;
        sentAt = sched.clock.now();
        try {
          lease = await renewLease(ctx, lease);
          protection.protectedUntil = Math.max(protection.protectedUntil, sentAt + ttlMs);
          world.bump("renewed");
        } catch (error) {
          world.tolerate(ctx, error, "renewFailed");
          break;
        }
      }
      // The reader is done reading: it claims no protection from the moment it starts
      // releasing, since the release's delete may land long before its answer does
      // (seed 298: a lost answer and re-issues kept the call open after the lease was gone).
      protection.protectedUntil = Math.min(protection.protectedUntil, sched.clock.now());
      try {
        await releaseLease(ctx, lease);
      } catch (error) {
        world.tolerate(ctx, error);
      }
    }
  });
}
