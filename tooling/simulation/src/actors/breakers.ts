import { decodeJson, encodeJson } from "@holdfast/conditional-store";
import { manifestKey, parseManifestKey } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { BRANCH, MIN_VERSION_AGE_MS } from "../config.js";
import type { FaultRates } from "../gated-store.js";
import type { SimulationWorld } from "../world.js";

/** A breaker writes as a foreign process would, without lost answers: it knows what it wrote. */
const CALM: FaultRates = { applyThenLose: 0, loseBefore: 0, crash: 0, repeat: 0 };

/** Where a breaker strikes (docs/protocol.md §6.1). */
type Moment = "window" | "before-plan" | "any";

/** Share of a breaker's rounds that strike a branch other than main (when one is live). */
const ON_BRANCH = 0.4;

/**
 * Manifest breakers: each round replaces a version's manifest with bytes the holdfast
 * format refuses (truncated JSON, JSON that is no manifest, another version's manifest),
 * as a buggy or foreign writer would (a put over the key: a new ETag; if-match on the ETag
 * it read, so it never puts a retired key back), and later repairs it: the original bytes
 * put back, a valid manifest naming the same files under yet another ETag. Most rounds
 * strike `main`; {@link ON_BRANCH} of them, drawn from the seed, another live branch or a
 * fork (a branch whose deletion was attempted is left alone). Half the rounds strike inside
 * a cleanup run: 0–40 steps after a cleaner drained or sealed a record of that kind of
 * branch, one of the versions it retires (after the run's read of that manifest, before or
 * after the seal, the commit and the last look); a quarter strike, as a cleanup starts, a
 * version it would retire, before its plan reads it; the rest any committed version at any
 * time. Some breaks are never repaired by the breaker (the final check repairs them).
 */
export function spawnBreakers(world: SimulationWorld): void {
  const { config, sched } = world;
  for (let b = 0; b < (config.breakers ?? 0); b += 1) {
    const name = `breaker-${b}`;
    const ctx = world.contextFor(name, CALM);
    const rounds = Math.max(1, Math.floor(config.rounds / 3));
    world.spawn(name, async () => {
      for (let r = 0; r < rounds; r += 1) {
        await sched.sleep(sched.int(0, 4000));
        const roll = sched.random();
        const moment: Moment = roll < 0.5 ? "window" : roll < 0.75 ? "before-plan" : "any";
        const onBranch = sched.random() < ON_BRANCH && world.liveBranches().length > 0;
        let key: string | undefined;
        if (moment === "window") {
          const after = sched.random() < 0.5 ? "draining" : "sealed";
          const retiring = await world.nextRecord(after, 20_000, ({ branch }) =>
            onBranch ? world.liveBranches().includes(branch) : branch === BRANCH,
          );
          if (retiring === undefined) continue;
          key = manifestKey(retiring.branch, sched.pick(retiring.versions));
          await sched.waitSteps(sched.int(0, 40));
        } else if (moment === "before-plan") {
          // As a cleanup starts, before its plan lists and reads the manifests.
          const started = new Promise<boolean>((resolve) =>
            world.cleanupStartWaiters.push(() => resolve(true)),
          );
          if (!(await Promise.race([started, sched.sleep(20_000).then(() => false)]))) continue;
          await sched.waitSteps(sched.int(0, 3));
          key = await nextCandidate(world, onBranch);
        } else key = anyVersion(world, onBranch);
        if (key === undefined || world.broken.has(key)) continue;
        const broke = await breakManifest(world, ctx, key);
        if (!broke) continue;
        world.bump(`broken:${moment}`);
        if (onBranch) world.bump(`broken:branch:${moment}`);
        // Now and then, in its last round, the breaker never repairs it (the final check
        // does); every cleanup until then is refused (its reference census reads every manifest).
        if (r === rounds - 1 && sched.random() < 0.15) continue;
        if (sched.random() < 0.5) await sched.waitSteps(sched.int(0, 80));
        else await sched.sleep(sched.int(0, 5000));
        if (await repairManifest(world, ctx, key)) world.bump("repaired");
      }
    });
  }
}

/** A live branch other than main (drawn from the seed), or undefined when none is live. */
function pickBranch(world: SimulationWorld): string | undefined {
  const live = world.liveBranches();
  return live.length > 0 ? world.sched.pick(live) : undefined;
}

/** Any committed version's manifest key: on main, or (`onBranch`) on a live branch. */
function anyVersion(world: SimulationWorld, onBranch: boolean): string | undefined {
  const { sched } = world;
  if (!onBranch) return manifestKey(BRANCH, sched.int(1, world.latestMain()));
  const branch = pickBranch(world);
  if (branch === undefined) return undefined;
  return manifestKey(branch, sched.pick(world.branchVersions(branch)));
}

/**
 * The manifest key of a version a cleanup would retire now. On main: present, past the
 * minimum age and more than the cleaners' largest `retainVersions` (3) below the newest,
 * else one retired soon. With `onBranch`, on a live branch drawn from the seed (branches
 * have few versions, retired with `retainVersions` 1): present, below the branch's newest
 * and past the minimum age, else any present one below the newest.
 */
async function nextCandidate(
  world: SimulationWorld,
  onBranch: boolean,
): Promise<string | undefined> {
  const { sched, memory } = world;
  if (!onBranch) {
    const top = world.latestMain();
    const old: number[] = [];
    for (const [version, at] of world.committedAt) {
      if (version >= top - 3 || sched.clock.now() - at < MIN_VERSION_AGE_MS) continue;
      if (await memory.head(manifestKey(BRANCH, version))) old.push(version);
    }
    const version = old.length > 0 ? sched.pick(old.sort((a, b) => a - b)) : world.retirableSoon();
    return manifestKey(BRANCH, version);
  }
  const branch = pickBranch(world);
  if (branch === undefined) return undefined;
  const versions = world.branchVersions(branch);
  const top = versions[versions.length - 1] ?? 1;
  const old: number[] = [];
  const below: number[] = [];
  for (const version of versions) {
    if (version >= top || !(await memory.head(manifestKey(branch, version)))) continue;
    below.push(version);
    const at = world.branchCommittedAt.get(`${branch}@${version}`) ?? sched.clock.now();
    if (sched.clock.now() - at >= MIN_VERSION_AGE_MS) old.push(version);
  }
  const pool = old.length > 0 ? old : below.length > 0 ? below : [top];
  return manifestKey(branch, sched.pick(pool));
}

/** What a breaker replaced: the valid manifest's bytes and the files it names. */
export interface BrokenManifest {
  readonly original: Uint8Array;
  readonly files: readonly string[];
  /** ETag of the refused bytes (until their put returned: undefined). */
  etag: string | undefined;
}

/**
 * Replaces the manifest at `key` with refused bytes; false when it is gone or changed under
 * the breaker. `world.broken` names the key (and the files its version needs) before the
 * put is sent, so the step checker never reads a refused manifest as the version's.
 */
async function breakManifest(
  world: SimulationWorld,
  ctx: ProtocolContext,
  key: string,
): Promise<boolean> {
  const got = await ctx.store.get(key);
  if (!got || world.broken.has(key)) return false;
  const doc = decodeJson(got.body) as { files?: { key: string }[]; version?: number };
  const broken: BrokenManifest = {
    original: got.body,
    files: (doc.files ?? []).map((f) => f.key),
    etag: undefined,
  };
  const bytes = await refusedBytes(world, got.body, key);
  world.broken.set(key, broken);
  try {
    const put = await ctx.store.put(key, bytes, { precondition: { ifMatch: got.etag } });
    broken.etag = put.etag;
    world.refusedEtags.add(`${key}@${put.etag}`);
    world.everBroken.add(key);
    world.foreignWrites += 1;
    world.note(`${key} replaced by bytes the format refuses (${put.etag})`);
    return true;
  } catch (error) {
    world.broken.delete(key);
    world.tolerate(ctx, error);
    return false;
  }
}

/** Puts the original bytes back over the refused ones (if-match): a valid manifest, a new ETag. */
export async function repairManifest(
  world: SimulationWorld,
  ctx: ProtocolContext,
  key: string,
): Promise<boolean> {
  const broken = world.broken.get(key);
  if (!broken?.etag) return false;
  try {
    await ctx.store.put(key, broken.original, { precondition: { ifMatch: broken.etag } });
    world.foreignWrites += 1;
    world.note(`${key} repaired`);
    return true;
  } catch (error) {
    // Deleted since (a cleanup that committed before the break and deleted after its last look).
    world.tolerate(ctx, error);
    return false;
  } finally {
    world.broken.delete(key);
  }
}

/** One of the ways a buggy or foreign writer breaks a manifest, each refused by the format. */
async function refusedBytes(
  world: SimulationWorld,
  body: Uint8Array,
  key: string,
): Promise<Uint8Array> {
  const { sched, memory } = world;
  const roll = sched.random();
  if (roll < 0.3) return body.slice(0, Math.floor(body.length / 2)); // truncated: not JSON
  if (roll < 0.5) return new Uint8Array(0); // empty
  if (roll < 0.75) return encodeJson({ schema: 1, note: "not a manifest" }); // JSON, no manifest
  // Another version's manifest (names another version: refused).
  const parsed = parseManifestKey(key);
  const next = parsed ? manifestKey(parsed.branch, parsed.version + 1) : undefined;
  const other = next ? await memory.get(next) : null;
  return other && next && !world.broken.has(next)
    ? other.body
    : encodeJson({ schema: 1, branch: parsed?.branch ?? BRANCH, version: -1, files: "none" });
}
