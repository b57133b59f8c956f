import { cleanup, recover } from "@holdfast/cleanup";
import { decodeJson } from "@holdfast/conditional-store";
import { manifestKey, type ProtocolContext, type VersionRef } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { censusReferences, recoverReferences } from "@holdfast/refs-lifecycle";
import { show } from "./checks.js";
import { BRANCH, NEVER_BEATS } from "./config.js";
import type { FaultRates } from "./gated-store.js";
import { describe, type SimulationWorld } from "./world.js";

/** The final recovery runs without injected faults. */
const CALM: FaultRates = { applyThenLose: 0, loseBefore: 0, crash: 0 };

/**
 * Invariant 5 (docs/guarantees.md), once every actor has stopped and the ownership bounds
 * and TTLs have passed: one pass of `recoverReferences`, `recover` and `cleanup` leaves no
 * retirement record, reference intent or termination fence behind; a branch that is gone
 * has no manifests or leases left; no tag or branch names a version of a branch that is
 * gone (orphan); every remaining version of every branch is acquirable. `checkStep` keeps
 * checking invariants 1, 2 and 4 while the recovery runs.
 */
export async function checkFinalRecovery(
  world: SimulationWorld,
  checkStep: () => Promise<void>,
): Promise<void> {
  const ctx = world.contextFor("recovery", CALM);
  await repairBrokenManifests(world);
  await runRecovery(world, ctx, checkStep);
  checkNothingStuck(world);
  await checkNoOrphans(world);
  await checkGoneBranchesLeaveNothing(world);
  await checkEveryVersionAcquirable(world, ctx);
}

/**
 * The manifests breakers left refused are repaired first (the original bytes put back: a
 * valid manifest naming the same files, another ETag), as an operator would before
 * recovery: a committed record naming one then settles by "A recorded manifest that was
 * replaced" (docs/protocol.md, Retirement).
 */
async function repairBrokenManifests(world: SimulationWorld): Promise<void> {
  for (const [key, broken] of world.broken) {
    if (broken.etag === undefined) continue;
    const current = await world.memory.head(key);
    if (current?.etag === broken.etag) {
      await world.memory.put(key, broken.original, { precondition: { ifMatch: broken.etag } });
    }
  }
  world.broken.clear();
}

async function runRecovery(
  world: SimulationWorld,
  ctx: ProtocolContext,
  checkStep: () => Promise<void>,
): Promise<void> {
  let done = false;
  const run = (async () => {
    try {
      await recoverReferences(ctx);
      await recover(ctx, {
        referenceCensus: censusReferences(ctx),
        heartbeatSleep: NEVER_BEATS,
      });
      await cleanup(
        ctx,
        // Every actor has stopped: no commit can be in flight.
        { retainVersions: Number.MAX_SAFE_INTEGER, orphanGraceMs: 0, noWriterActive: true },
        { referenceCensus: censusReferences(ctx), heartbeatSleep: NEVER_BEATS },
      );
    } catch (error) {
      world.violate(5, `final recovery failed: ${describe(error)}`);
    } finally {
      done = true;
    }
  })();
  await world.sched.run(() => done, checkStep);
  await run;
}

/** No retirement record, reference intent or termination fence is left behind. */
function checkNothingStuck(world: SimulationWorld): void {
  for (const key of world.memory.keys()) {
    if (key.startsWith("_holdfast/retirement/")) {
      world.violate(5, `retirement state left behind: ${key}`);
    }
    if (key.startsWith("_holdfast/refs/intents/")) {
      world.violate(5, `reference intent left behind: ${key}`);
    }
    if (key.startsWith("_holdfast/refs/fences/")) {
      world.violate(5, `branch termination fence left behind: ${key}`);
    }
  }
}

/**
 * No orphan survives its parent's deletion: once recovery ran, no visible tag or branch
 * names a version of a branch whose reference is gone and whose version is gone too.
 */
async function checkNoOrphans(world: SimulationWorld): Promise<void> {
  const { memory } = world;
  for (const key of memory.keys()) {
    if (!key.startsWith("_refs/tags/") && !key.startsWith("_refs/branches/")) continue;
    const got = await memory.get(key);
    if (!got) continue;
    const doc = decodeJson(got.body) as { target?: VersionRef; parent?: VersionRef | null };
    const named = doc.target ?? doc.parent ?? null;
    if (!named || named.branch === BRANCH) continue;
    if (await memory.head(`_refs/branches/${named.branch}.json`)) continue;
    if (await memory.head(manifestKey(named.branch, named.version))) continue;
    world.violate(5, `${key} names ${show(named)}, but that branch and version are gone (orphan)`);
  }
}

/** A deleted branch (by its caller or by recovery finishing the deletion) leaves nothing. */
async function checkGoneBranchesLeaveNothing(world: SimulationWorld): Promise<void> {
  const { memory } = world;
  for (const branch of world.branches) {
    if (await memory.head(`_refs/branches/${branch.name}.json`)) continue;
    for (const prefix of [`_versions/${branch.name}/`, `_holdfast/leases/${branch.name}/`]) {
      const left = memory.keys(prefix);
      if (left.length > 0 && (branch.state === "deleted" || branch.state === "deleting")) {
        world.violate(5, `branch ${branch.name} is gone but ${left[0]} is left behind`);
      }
    }
  }
}

/** Every remaining version of every branch can be leased (and released). */
async function checkEveryVersionAcquirable(
  world: SimulationWorld,
  ctx: ProtocolContext,
): Promise<void> {
  for (const key of world.memory.keys()) {
    const match = /^_versions\/([^/]+)\/(\d+)\.json$/.exec(key);
    if (!match) continue;
    const branch = match[1]!;
    const version = Number(match[2]);
    let probed = false;
    const probe = (async () => {
      try {
        const lease = await acquireLease(ctx, { branch, version, ttlMs: 1000 });
        await releaseLease(ctx, lease);
      } catch (error) {
        world.violate(5, `${branch}@${version} is neither acquirable nor gone: ${describe(error)}`);
      } finally {
        probed = true;
      }
    })();
    await world.sched.run(
      () => probed,
      async () => {},
    );
    await probe;
  }
}
