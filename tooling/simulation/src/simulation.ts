import { cleanup, recover } from "@holdfast/cleanup";
import {
  decodeJson,
  type HoldfastError,
  type IdSource,
  isHoldfastError,
  MemoryStore,
  seededIds,
} from "@holdfast/conditional-store";
import {
  commitVersion,
  createContext,
  initDataset,
  manifestKey,
  type ProtocolContext,
  writeDataFile,
} from "@holdfast/dataset";
import { acquireLease, type Lease, releaseLease, renewLease } from "@holdfast/leases";
import {
  censusReferences,
  createTag,
  deleteTag,
  recoverReferences,
} from "@holdfast/refs-lifecycle";
import { type FaultRates, GatedStore, SimulatedCrash } from "./gated-store.js";
import { Scheduler } from "./scheduler.js";

/** Knobs of one simulated run; everything else derives from the seed. */
export interface SimulationConfig {
  seed: number;
  readers: number;
  writers: number;
  cleaners: number;
  taggers: number;
  /** Operations per actor. */
  rounds: number;
  faults: FaultRates;
  /** Cleaner host clocks may be this far off (ms, either way); storage time must not care. */
  maxClockSkewMs: number;
}

export const DEFAULT_SIMULATION: Omit<SimulationConfig, "seed"> = {
  readers: 4,
  writers: 2,
  cleaners: 2,
  taggers: 1,
  rounds: 10,
  faults: { applyThenLose: 0.04, loseBefore: 0.03, crash: 0.006 },
  maxClockSkewMs: 120_000,
};

/** A broken invariant, with the step it was seen at (rerun the seed to reproduce). */
export interface Violation {
  invariant: 1 | 2 | 3 | 4 | 5;
  step: number;
  message: string;
}

export interface SimulationResult {
  seed: number;
  steps: number;
  violations: Violation[];
  stats: Record<string, number>;
}

const BRANCH = "main";
const OWNERSHIP_BOUND_MS = 30_000;
/** Data files younger than this are never orphans: a commit writes them before its manifest. */
const ORPHAN_GRACE_MS = 60_000;
/** Longer than a writer's whole re-issue window (0.2+0.4+0.8+1.6 s): see cleanup's minVersionAgeMs. */
const MIN_VERSION_AGE_MS = 10_000;

interface Protection {
  reader: string;
  version: number;
  /** Real (scheduler) time before the write that last extended protection was sent. */
  protectedUntil: number;
}

/**
 * Runs readers (acquire/renew/release), writers (commit), taggers (create/delete tags) and
 * cleaners (cleanup with crashes and lost answers) against one memory store under a seeded
 * scheduler, checking SPEC §7 invariants 1–4 after every step and invariant 5 after a final
 * recovery once every ownership bound and TTL has passed.
 */
export async function runSimulation(config: SimulationConfig): Promise<SimulationResult> {
  const sched = new Scheduler(config.seed);
  const memory = new MemoryStore({ clock: sched.clock, timestampPrecisionMs: 1000 });
  const ids = seededIds(config.seed);
  const violations: Violation[] = [];
  const gatedStores = new Map<string, GatedStore>();
  const stats: Record<string, number> = {};
  const bump = (name: string) => {
    stats[name] = (stats[name] ?? 0) + 1;
  };
  const bumpError = (what: string, error: unknown) =>
    bump(`${what}:${isHoldfastError(error) ? `${error.kind}/${error.code ?? "-"}` : "other"}`);
  const violate = (invariant: Violation["invariant"], message: string) =>
    violations.push({ invariant, step: sched.steps, message });

  const contextFor = (actor: string, faults: FaultRates, skewMs = 0): ProtocolContext => {
    const store = new GatedStore(memory, sched, actor, faults);
    gatedStores.set(actor, store);
    return createContext(store, {
      clock: { now: () => sched.clock.now() + skewMs },
      ids: sharedIds(ids),
      sleep: sched.sleep,
      reissue: { pausesMs: [200, 400, 800, 1600] },
    });
  };
  const calm: FaultRates = { applyThenLose: 0, loseBefore: 0, crash: 0 };

  const protections: Protection[] = [];
  const liveTags = new Map<string, number>(); // created successfully, not deleted successfully
  const deletedTags = new Set<string>();
  const deletingTags = new Map<string, number>(); // deletion attempted, outcome not success
  const committed = new Map<number, string>(); // version -> txnId reported as committed
  const failedCommitFiles: string[] = []; // data files of commits reported as definite failures
  let running = 0;

  // Seed the dataset without faults.
  const setup = createContext(memory, {
    clock: sched.clock,
    ids: sharedIds(ids),
    sleep: sched.sleep,
  });
  await initDataset(setup);
  for (let i = 0; i < 4; i += 1) await commitOne(setup);

  const actor = async (name: string, body: () => Promise<void>) => {
    running += 1;
    try {
      await body();
    } catch (error) {
      // A crash is the process dying: whatever error the library made of it, the actor stops.
      if (error instanceof SimulatedCrash || gatedStores.get(name)?.crashed) bump("crashes");
      else violate(4, `${name} failed with an unexpected error: ${describe(error)}`);
    } finally {
      running -= 1;
    }
  };

  async function commitOne(ctx: ProtocolContext): Promise<void> {
    let file: { key: string; size: number } | undefined;
    try {
      file = await writeDataFile(ctx, new TextEncoder().encode(`payload-${ctx.ids.next()}`));
      const result = await commitVersion(ctx, { branch: BRANCH, files: [file] });
      const other = committed.get(result.version);
      if (other !== undefined && other !== result.txnId) {
        violate(3, `two commits both won version ${result.version}`);
      }
      committed.set(result.version, result.txnId);
      bump("commits");
    } catch (error) {
      rethrowIfCrashed(ctx, error);
      if (isHoldfastError(error, "unresolved")) bump("commitsUnresolved");
      else if (isExpected(error)) {
        if (file) failedCommitFiles.push(file.key);
        bump("commitsFailed");
        bumpError("commitsFailed", error);
      } else throw error;
    }
  }

  const actors: Promise<void>[] = [];
  for (let w = 0; w < config.writers; w += 1) {
    const ctx = contextFor(`writer-${w}`, config.faults);
    actors.push(
      actor(`writer-${w}`, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          await commitOne(ctx);
        }
      }),
    );
  }

  for (let i = 0; i < config.readers; i += 1) {
    const name = `reader-${i}`;
    const ctx = contextFor(name, config.faults);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 2000));
          const latest = [...committed.keys()].sort((a, b) => b - a)[0] ?? 1;
          const version = sched.int(1, latest);
          const ttlMs = sched.pick([300, 1500, 5000, 20_000]);
          let lease: Lease;
          let sentAt = sched.clock.now();
          try {
            lease = await acquireLease(ctx, { branch: BRANCH, version, ttlMs });
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (isExpected(error)) {
              bump("acquireRefused");
              bumpError("acquireRefused", error);
              continue;
            }
            throw error;
          }
          bump("acquired");
          const protection: Protection = { reader: name, version, protectedUntil: sentAt + ttlMs };
          protections.push(protection);
          for (let k = sched.int(0, 3); k > 0; k -= 1) {
            await sched.sleep(sched.int(0, Math.floor(ttlMs * 0.6)));
            if (sched.clock.now() >= protection.protectedUntil) break;
            sentAt = sched.clock.now();
            try {
              lease = await renewLease(ctx, lease);
              protection.protectedUntil = Math.max(protection.protectedUntil, sentAt + ttlMs);
              bump("renewed");
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (!isExpected(error)) throw error;
              bump("renewFailed");
              bumpError("renewFailed", error);
              break;
            }
          }
          try {
            await releaseLease(ctx, lease);
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
          }
          // Protection is no longer claimed once release was attempted.
          protection.protectedUntil = Math.min(protection.protectedUntil, sched.clock.now());
        }
      }),
    );
  }

  for (let t = 0; t < config.taggers; t += 1) {
    const name = `tagger-${t}`;
    const ctx = contextFor(name, config.faults);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          const existing = [...liveTags.keys()];
          if (existing.length > 0 && sched.random() < 0.4) {
            const tag = sched.pick(existing);
            // From here the tag may vanish (recovery may finish an interrupted deletion):
            // it protects its version only while its canonical file is visible.
            const target = liveTags.get(tag)!;
            liveTags.delete(tag);
            deletingTags.set(tag, target);
            try {
              await deleteTag(ctx, tag, { ownershipBoundMs: OWNERSHIP_BOUND_MS });
              deletingTags.delete(tag);
              deletedTags.add(tag);
              bump("tagsDeleted");
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (!isExpected(error)) throw error;
              bump("tagDeleteFailed");
              bumpError("tagDeleteFailed", error);
            }
            continue;
          }
          const latest = [...committed.keys()].sort((a, b) => b - a)[0] ?? 1;
          const version = sched.int(1, latest);
          const tag = `t${config.seed}-${t}-${r}`;
          try {
            await createTag(
              ctx,
              { name: tag, target: { branch: BRANCH, version } },
              { ownershipBoundMs: OWNERSHIP_BOUND_MS },
            );
            liveTags.set(tag, version);
            bump("tagsCreated");
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            bump("tagCreateFailed");
            bumpError("tagCreateFailed", error);
          }
        }
      }),
    );
  }

  for (let c = 0; c < config.cleaners; c += 1) {
    const name = `cleaner-${c}`;
    const skew = sched.int(-config.maxClockSkewMs, config.maxClockSkewMs);
    const ctx = contextFor(name, config.faults, skew);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < Math.max(1, Math.floor(config.rounds / 2)); r += 1) {
          await sched.sleep(sched.int(500, 6000));
          try {
            const result = await cleanup(
              ctx,
              {
                retainVersions: sched.int(1, 3),
                orphanGraceMs: ORPHAN_GRACE_MS,
                minVersionAgeMs: MIN_VERSION_AGE_MS,
              },
              { referenceCensus: censusReferences(ctx), ownershipBoundMs: OWNERSHIP_BOUND_MS },
            );
            stats.retired = (stats.retired ?? 0) + result.retired.length;
            bump("cleanups");
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            bump("cleanupFailed");
            bumpError("cleanupFailed", error);
          }
        }
      }),
    );
  }

  const manifestCache = new Map<string, string[]>(); // key@etag -> data files
  /** What of a version is gone (its manifest, or a data file it names), or null. */
  const missingPart = async (version: number): Promise<string | null> => {
    const got = await memory.get(manifestKey(BRANCH, version));
    if (!got) return "its manifest";
    const cacheKey = `${got.key}@${got.etag}`;
    let files = manifestCache.get(cacheKey);
    if (!files) {
      const parsed = decodeJson(got.body) as { files?: { key: string }[] };
      files = (parsed.files ?? []).map((f) => f.key);
      manifestCache.set(cacheKey, files);
    }
    for (const file of files) if (!(await memory.head(file))) return `data file ${file}`;
    return null;
  };
  const checkStep = async () => {
    const now = sched.clock.now();
    // Invariant 1: a version under a lease whose TTL has not passed (real time) exists.
    for (const p of protections) {
      if (now >= p.protectedUntil) continue;
      const missing = await missingPart(p.version);
      if (missing) {
        violate(1, `${p.reader}'s leased version ${p.version} lost ${missing} while protected`);
        p.protectedUntil = 0;
      }
    }
    // Invariant 2: tags whose creation succeeded protect their version; deleted ones stay gone.
    for (const [tag, version] of liveTags) {
      const missing = await missingPart(version);
      if (missing) {
        violate(2, `tagged version ${version} (tag ${tag}) lost ${missing}`);
        liveTags.delete(tag);
      }
    }
    for (const [tag, version] of liveTags) {
      if (!(await memory.head(`_refs/tags/${tag}.json`))) {
        violate(2, `tag ${tag} vanished although its creation succeeded and nobody deleted it`);
        liveTags.delete(tag);
        void version;
      }
    }
    for (const [tag, version] of deletingTags) {
      if (!(await memory.head(`_refs/tags/${tag}.json`))) continue;
      const missing = await missingPart(version);
      if (missing) {
        violate(
          2,
          `version ${version} of still-visible tag ${tag} (deletion interrupted) lost ${missing}`,
        );
        deletingTags.delete(tag);
      }
    }
    for (const tag of deletedTags) {
      if (await memory.head(`_refs/tags/${tag}.json`)) {
        violate(2, `deleted tag ${tag} is visible again`);
        deletedTags.delete(tag);
      }
    }
    // Invariant 4: a commit reported as a definite failure did not land.
    if (failedCommitFiles.length > 0) {
      const named = new Set<string>();
      for (const key of memory.keys()) {
        if (!key.startsWith("_versions/")) continue;
        const got = await memory.get(key);
        if (!got) continue;
        const cacheKey = `${key}@${got.etag}`;
        let files = manifestCache.get(cacheKey);
        if (!files) {
          const parsed = decodeJson(got.body) as { files?: { key: string }[] };
          files = (parsed.files ?? []).map((f) => f.key);
          manifestCache.set(cacheKey, files);
        }
        for (const f of files) named.add(f);
      }
      for (const f of failedCommitFiles) {
        if (named.has(f)) {
          violate(4, `a commit reported as failed landed (data file ${f})`);
          failedCommitFiles.splice(failedCommitFiles.indexOf(f), 1);
          break;
        }
      }
    }
  };

  const all = Promise.all(actors);
  await sched.run(() => running === 0, checkStep);
  await all;

  // Invariant 5: after the bounds pass, recovery leaves nothing stuck.
  sched.advance(OWNERSHIP_BOUND_MS + 25 * 60 * 60 * 1000);
  const finalCtx = contextFor("recovery", calm);
  let finalDone = false;
  const finalRun = (async () => {
    try {
      await recoverReferences(finalCtx);
      await recover(finalCtx, { referenceCensus: censusReferences(finalCtx) });
      await cleanup(
        finalCtx,
        { retainVersions: Number.MAX_SAFE_INTEGER, orphanGraceMs: 0 },
        { referenceCensus: censusReferences(finalCtx) },
      );
    } catch (error) {
      violate(5, `final recovery failed: ${describe(error)}`);
    } finally {
      finalDone = true;
    }
  })();
  await sched.run(() => finalDone, checkStep);
  await finalRun;
  for (const key of memory.keys()) {
    if (key.startsWith("_holdfast/retirement/")) violate(5, `retirement state left behind: ${key}`);
    if (key.startsWith("_holdfast/refs/intents/"))
      violate(5, `reference intent left behind: ${key}`);
  }
  for (const key of memory.keys()) {
    const match = /^_versions\/main\/(\d+)\.json$/.exec(key);
    if (!match) continue;
    const version = Number(match[1]);
    let probed = false;
    const probe = (async () => {
      try {
        const lease = await acquireLease(finalCtx, { branch: BRANCH, version, ttlMs: 1000 });
        await releaseLease(finalCtx, lease);
      } catch (error) {
        violate(5, `version ${version} is neither acquirable nor gone: ${describe(error)}`);
      } finally {
        probed = true;
      }
    })();
    await sched.run(
      () => probed,
      async () => {},
    );
    await probe;
  }
  return { seed: config.seed, steps: sched.steps, violations, stats };
}

function rethrowIfCrashed(ctx: ProtocolContext, error: unknown): void {
  if (error instanceof SimulatedCrash || (ctx.store instanceof GatedStore && ctx.store.crashed)) {
    throw new SimulatedCrash("crashed");
  }
}

/** Errors an actor may legitimately meet (refusals, conflicts, unknown outcomes). */
function isExpected(error: unknown): error is HoldfastError {
  return isHoldfastError(
    error,
    "conflict",
    "refused",
    "unresolved",
    "ambiguous",
    "not-found",
    "aborted",
  );
}

function describe(error: unknown): string {
  if (isHoldfastError(error)) return `${error.kind}/${error.code ?? "-"}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error);
}

/** Every actor draws from one seeded id source, so ids are unique and replayable. */
function sharedIds(ids: IdSource): IdSource {
  return ids;
}
