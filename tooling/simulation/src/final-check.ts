import { cleanup, recover } from "@holdfast/cleanup";
import { decodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { manifestKey, parseManifestKey, VERSIONS_PREFIX, versionsPrefix } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import { holdfastFormat, recoverReferences } from "@holdfast/refs-lifecycle";
import { isRetiredManifestRewritten } from "@holdfast/retirement";
import { show } from "./checks.js";
import { BRANCH, NEVER_BEATS } from "./config.js";
import type { FaultRates } from "./gated-store.js";
import { floorAboveLatestFormat, noDropView, PLANTED_NO_DROP } from "./planted.js";
import { describe, type SimulationWorld } from "./world.js";

/** The final recovery runs without injected faults. */
const CALM: FaultRates = { applyThenLose: 0, loseBefore: 0, crash: 0, repeat: 0 };

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
  if (world.broken.size > 0) {
    // Breaks left: one pass meets them (refusals expected; with the planted fault
    // `no-drop` its drops are refused too), then they are repaired, and no version may
    // stay un-leasable for good (docs/protocol.md §5.5). The pass after it runs as usual.
    const noDrop = world.config.plant === "no-drop" ? noDropView : undefined;
    const meets = world.contextFor("recovery-meets-breaks", CALM, 0, undefined, noDrop);
    const planted = (error: unknown) => isHoldfastError(error) && error.code === PLANTED_NO_DROP;
    await runRecovery(
      world,
      meets,
      checkStep,
      (e) => world.isRefusedManifest(e) || planted(e) || isRetiredManifestRewritten(e),
    );
    await repairBrokenManifests(world);
    await checkLeasableUnlessRetiring(world, ctx);
  }
  await removeRewrittenManifests(world, ctx, checkStep);
  await runRecovery(world, ctx, checkStep);
  checkNothingStuck(world);
  await checkNoOrphans(world);
  await checkGoneBranchesLeaveNothing(world);
  await checkEveryVersionAcquirable(world, ctx);
}

/**
 * The manifests breakers left refused are repaired (the original bytes put back: a valid
 * manifest naming the same files, another ETag), as an operator would.
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

/**
 * A record whose deletion began and whose manifest was rewritten since (by a breaker) stops
 * every recovery with `RETIRED_MANIFEST_REWRITTEN`: a legitimate, reported stop (counted as
 * `stoppedOnRewrittenManifest`). The operator's answer (docs/operations.md, "Stuck states")
 * is to remove that manifest; the next pass then finishes the record.
 */
async function removeRewrittenManifests(
  world: SimulationWorld,
  ctx: ProtocolContext,
  checkStep: () => Promise<void>,
): Promise<void> {
  for (let pass = 0; pass < 20; pass += 1) {
    const met: string[] = [];
    await runRecovery(world, ctx, checkStep, (error) => {
      if (!isRetiredManifestRewritten(error) || error.key === undefined) return false;
      met.push(error.key);
      return true;
    });
    if (met.length === 0) return;
    for (const key of new Set(met)) {
      world.bump("stoppedOnRewrittenManifest");
      world.note(`operator removes ${key}, rewritten after its record's deletion began`);
      await world.memory.delete(key);
    }
  }
}

/**
 * One pass of `recoverReferences`, `recover` and `cleanup`; an error is a violation unless
 * `expected` accepts it (then the next step still runs).
 */
async function runRecovery(
  world: SimulationWorld,
  ctx: ProtocolContext,
  checkStep: () => Promise<void>,
  expected: (error: unknown) => boolean = () => false,
): Promise<void> {
  let done = false;
  // The planted fault `floor-above-latest` is the holdfast format's old rule: every
  // cleanup has it, the final recovery's too (see `planted.ts`).
  const planted =
    world.config.plant === "floor-above-latest"
      ? { format: floorAboveLatestFormat(holdfastFormat) }
      : {};
  const steps = [
    () => recoverReferences(ctx, { format: holdfastFormat }),
    () =>
      recover(ctx, {
        format: holdfastFormat,
        heartbeatSleep: NEVER_BEATS,
        ...planted,
      }),
    () =>
      cleanup(
        ctx,
        // Every actor has stopped: no commit can be in flight.
        { retainVersions: Number.MAX_SAFE_INTEGER, orphanGraceMs: 0, noWriterActive: true },
        {
          format: holdfastFormat,
          heartbeatSleep: NEVER_BEATS,
          ...planted,
        },
      ),
  ];
  const run = (async () => {
    try {
      for (const step of steps) {
        try {
          await step();
        } catch (error) {
          if (!expected(error)) throw error;
          world.note(`final recovery step refused: ${describe(error)}`);
        }
      }
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
    for (const prefix of [versionsPrefix(branch.name), `_holdfast/leases/${branch.name}/`]) {
      const left = memory.keys(prefix);
      if (left.length > 0 && (branch.state === "deleted" || branch.state === "deleting")) {
        world.violate(5, `branch ${branch.name} is gone but ${left[0]} is left behind`);
      }
    }
  }
}

/**
 * No version stays un-leasable for good: once the breaks met by a recovery pass are
 * repaired, every version of every branch (main, live branches, forks) whose manifest is
 * present can be leased, unless a record legitimately holds it: committed with its
 * recorded manifest (ETag) still at the key (the run stopped before its deletion), or
 * sealed (its recovery waits for the next pass). A version of a committed record whose
 * manifest was replaced must not wait for another run.
 */
async function checkLeasableUnlessRetiring(
  world: SimulationWorld,
  ctx: ProtocolContext,
): Promise<void> {
  const { memory } = world;
  // "branch@version" -> recorded ETag (null: sealed, or committed with its deletion begun)
  const held = new Map<string, string | null>();
  for (const key of memory.keys("_holdfast/retirement/")) {
    const got = await memory.get(key);
    if (!got) continue;
    const record = decodeJson(got.body) as {
      branch?: string;
      state?: string;
      deletionStartedAt?: string;
      versions?: { version: number; manifestEtag: string; cancelled: boolean }[];
    };
    if (record.state !== "committed" && record.state !== "sealed") continue;
    // A marked record's version whose manifest was rewritten stays refused (its files may
    // be partly deleted): the recovery pass stopped on it by name, RETIRED_MANIFEST_REWRITTEN.
    const anyEtag = record.state === "sealed" || record.deletionStartedAt !== undefined;
    for (const v of record.versions ?? []) {
      if (!v.cancelled) held.set(`${record.branch}@${v.version}`, anyEtag ? null : v.manifestEtag);
    }
  }
  for (const key of memory.keys(VERSIONS_PREFIX)) {
    const parsed = parseManifestKey(key);
    const meta = parsed ? await memory.head(key) : null;
    if (!parsed || !meta) continue;
    const { branch, version } = parsed;
    const recorded = held.get(`${branch}@${version}`);
    if (recorded === null || recorded === meta.etag) continue;
    const error = await probeAcquire(world, ctx, branch, version);
    if (error !== null) {
      world.violate(
        5,
        `${branch}@${version} stays un-leasable after a recovery pass and the repair of its manifest: ${describe(error)}`,
      );
    }
  }
}

/** Leases and releases `branch@version` through the scheduler: null, or the error met. */
async function probeAcquire(
  world: SimulationWorld,
  ctx: ProtocolContext,
  branch: string,
  version: number,
): Promise<unknown> {
  let probed = false;
  let failure: unknown = null;
  const probe = (async () => {
    try {
      const lease = await acquireLease(ctx, {
        format: holdfastFormat,
        branch,
        version,
        ttlMs: 1000,
      });
      await releaseLease(ctx, lease);
    } catch (error) {
      failure = error;
    } finally {
      probed = true;
    }
  })();
  await world.sched.run(
    () => probed,
    async () => {},
  );
  await probe;
  return failure;
}

/** Every remaining version of every branch can be leased (and released). */
async function checkEveryVersionAcquirable(
  world: SimulationWorld,
  ctx: ProtocolContext,
): Promise<void> {
  for (const key of world.memory.keys(VERSIONS_PREFIX)) {
    const parsed = parseManifestKey(key);
    if (!parsed) continue;
    const { branch, version } = parsed;
    const error = await probeAcquire(world, ctx, branch, version);
    if (error !== null) {
      world.violate(5, `${branch}@${version} is neither acquirable nor gone: ${describe(error)}`);
    }
  }
}
