import {
  deleteIfMatch,
  encodeJson,
  isHoldfastError,
  putIfMatch,
} from "@holdfast/conditional-store";
import { manifestKey } from "@holdfast/dataset";
import {
  acquireLease,
  type Lease,
  type LeaseEntry,
  listLeases,
  MAX_TTL_MS,
  MIN_TTL_MS,
  releaseLease,
  renewLease,
} from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import { resolverOptions } from "@holdfast/protocol/internal";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
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
        lease = await acquireLease(ctx, {
          format: holdfastFormat,
          branch: BRANCH,
          version,
          ttlMs: 20_000,
        });
      } catch (error) {
        world.tolerate(ctx, error);
        continue;
      }
      // A handle whose key and ETag are a manifest's: release must not delete it and
      // renew must not overwrite it.
      const target = manifestKey(BRANCH, sched.int(1, world.latestMain()));
      const before = await world.memory.head(target);
      const foreign = world.foreignWrites;
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
      // A breaker's put (a foreign writer) changes the ETag too: only a forger's write counts.
      if (before && after && after.etag !== before.etag && world.foreignWrites === foreign) {
        world.violate(1, `${target} was rewritten through a forged lease handle`);
      }
      await releaseLease(ctx, lease).catch((error: unknown) => {
        rethrowIfCrashed(ctx, error);
      });
    }
  });
}

/** What a lease attacker tries with a handle it built from the lease listing. */
type LeaseAttack = "release" | "shorten" | "stretch";

/**
 * Lease attackers: each round lists main's leases (what any process, or any reader token
 * through the server, can see), builds a handle for one of them from every listed field
 * and a made-up secret, and tries to release it, shorten it to MIN_TTL_MS or stretch it to
 * MAX_TTL_MS. renewLease/releaseLease must refuse the handle (`invalid-input`: its key is
 * not its secret's, docs/protocol.md §4.2). With the planted fault
 * `forgeable-leases` the forged call is applied as the library applied it before lease
 * secrets, and the checker must see a reader's version lost while protected (invariant 1).
 */
export function spawnLeaseAttackers(world: SimulationWorld): void {
  const { config, sched } = world;
  world.spawnEach("lease-attacker", config.leaseAttackers, async (ctx) => {
    for (let r = 0; r < config.rounds; r += 1) {
      await sched.sleep(sched.int(0, 1500));
      const listed: LeaseEntry[] = [];
      try {
        for await (const entry of listLeases(ctx, { branch: BRANCH })) listed.push(entry);
      } catch (error) {
        world.tolerate(ctx, error);
        continue;
      }
      if (listed.length === 0) continue;
      const target = sched.pick(listed);
      const attack = sched.pick<LeaseAttack>(["release", "shorten", "stretch"]);
      const random = ctx.random;
      if (random === undefined) throw new Error("the simulation seeds every context's randomness");
      const forged: Lease = {
        leaseId: target.leaseId,
        branch: target.branch,
        version: target.version,
        ttlMs: attack === "shorten" ? MIN_TTL_MS : attack === "stretch" ? MAX_TTL_MS : 20_000,
        secret: Buffer.from(random(32)).toString("base64url"),
        key: target.key,
        etag: target.etag,
        renewal: 0,
        writerId: ctx.ids.next(),
        writtenAtLocalMs: ctx.clock.now(),
      };
      if (config.plant === "forgeable-leases") {
        await applyAsBeforeSecrets(world, ctx, forged, attack);
        continue;
      }
      try {
        if (attack === "release") await releaseLease(ctx, forged);
        else await renewLease(ctx, forged);
        world.violate(
          1,
          `a lease handle forged from the listing (${attack}) was accepted for ${target.key}`,
        );
      } catch (error) {
        rethrowIfCrashed(ctx, error);
        if (isHoldfastError(error, "invalid-input")) world.bump("leaseForgeryRefused");
        else throw error;
      }
    }
  });
}

/**
 * Planted fault `forgeable-leases` (tests only): a forged handle's release or renewal as
 * renewLease/releaseLease carried it out before lease secrets, when a handle was checked
 * against its branch, version and leaseId only: an if-match write (or delete) at the
 * listed ETag, and on a conflict the same once more at the ETag read back.
 */
async function applyAsBeforeSecrets(
  world: SimulationWorld,
  ctx: ProtocolContext,
  forged: Lease,
  attack: LeaseAttack,
): Promise<void> {
  const options = resolverOptions(ctx);
  try {
    if (attack === "release" && !ctx.store.capabilities.atomicConditionalDelete) {
      await ctx.store.delete(forged.key);
    } else if (attack === "release") {
      const first = await deleteIfMatch(ctx.store, forged.key, forged.etag, options);
      const current = first.status === "applied" ? null : await ctx.store.head(forged.key);
      if (current) await deleteIfMatch(ctx.store, forged.key, current.etag, options);
    } else {
      const body = encodeJson({
        schema: 2,
        leaseId: forged.leaseId,
        branch: forged.branch,
        version: forged.version,
        ttlMs: forged.ttlMs,
        renewal: 1,
        writerId: forged.writerId,
        proof: "0".repeat(64),
      });
      const first = await putIfMatch(ctx.store, forged.key, body, forged.etag, options);
      const current = first.status === "applied" ? null : await ctx.store.head(forged.key);
      if (current) await putIfMatch(ctx.store, forged.key, body, current.etag, options);
    }
    world.bump("leaseForgeryApplied");
  } catch (error) {
    world.tolerate(ctx, error);
  }
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
        lease = await acquireLease(ctx, { format: holdfastFormat, branch, version, ttlMs });
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
      // (a lost answer and its re-issues can keep the call open after the lease is gone).
      protection.protectedUntil = Math.min(protection.protectedUntil, sched.clock.now());
      try {
        await releaseLease(ctx, lease);
      } catch (error) {
        world.tolerate(ctx, error);
      }
    }
  });
}
