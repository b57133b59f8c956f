import { cleanup, ORPHAN_GRACE_BELOW_FLOOR } from "@holdfast/cleanup";
import { decodeJson, isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { COMMIT_INTENT_PREFIX } from "@holdfast/dataset";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { MIN_VERSION_AGE_MS, NEVER_BEATS, ORPHAN_GRACE_MS, OWNERSHIP_BOUND_MS } from "../config.js";
import { GatedStore } from "../gated-store.js";
import {
  floorAboveLatestFormat,
  frozenFormat,
  lateValidationFormat,
  noDropView,
  noGiveUpView,
  refusingCensusFormat,
} from "../planted.js";
import { rethrowIfCrashed, type SimulationWorld } from "../world.js";

const RECORDS = "_holdfast/retirement/";

/** What one cleanup run did, as its store requests show it (see {@link runLogView}). */
export interface CleanupRunLog {
  active: boolean;
  /** The first manifest this run read while it held bytes the format refuses. */
  refusedRead: string | undefined;
  /**
   * Retirement records this run owns, and the owners it wrote them as: the records it
   * drained, and those it took over (a fence naming a new owner). A rewrite that keeps
   * another owner (the cancellation of a replaced manifest's version in a committed
   * record, which any cleaner sends: docs/protocol.md §5.5) leaves the record its owner's.
   */
  readonly records: Set<string>;
  readonly owners: Set<string>;
  /** Commit writes this run sent (its own records, or sealed ones it recovered). */
  commits: number;
  /** Rewrites this run sent of a committed record it does not own (`cancelReplaced`). */
  othersRewritten: number;
}

/**
 * Cleaners: each runs cleanup over every branch with the reference census, its host clock
 * skewed; one run in ten asks for an orphan grace below the floor, which must be refused.
 * A cleanup's start releases the writers dawdling for one ({@link SimulationWorld.dawdle}).
 * A run that read a manifest the format refuses (a breaker's, see `breakers.ts`) must not
 * commit afterwards, and when it fails with that refusal before any commit it leaves no
 * record of its own behind (docs/protocol.md §6.1).
 */
export function spawnCleaners(world: SimulationWorld): void {
  const { config, sched } = world;
  for (let c = 0; c < config.cleaners; c += 1) {
    const name = `cleaner-${c}`;
    const skew = sched.int(-config.maxClockSkewMs, config.maxClockSkewMs);
    const blind = config.plant === "blind-last-look";
    const late = config.plant === "late-validation";
    const log: CleanupRunLog = {
      active: false,
      refusedRead: undefined,
      records: new Set(),
      owners: new Set(),
      commits: 0,
      othersRewritten: 0,
    };
    const ctx = world.contextFor(
      name,
      config.faults,
      skew,
      blind ? COMMIT_INTENT_PREFIX : undefined,
      (store) =>
        runLogView(
          world,
          name,
          config.plant === "no-drop"
            ? noDropView(store)
            : config.plant === "no-give-up"
              ? noGiveUpView(store)
              : store,
          log,
        ),
    );
    // The format the cleaner binds; its reference codec gives the run's reference census.
    const format = blind
      ? frozenFormat(holdfastFormat)
      : late
        ? lateValidationFormat(holdfastFormat, world.broken)
        : config.plant === "floor-above-latest"
          ? floorAboveLatestFormat(holdfastFormat)
          : config.plant === "no-give-up"
            ? refusingCensusFormat(holdfastFormat, world.broken)
            : holdfastFormat;
    world.spawn(name, async () => {
      for (let r = 0; r < Math.max(1, Math.floor(config.rounds / 2)); r += 1) {
        await sched.sleep(sched.int(500, 6000));
        // Now and then a cleaner asks for a grace below the floor: it must be refused.
        const short = sched.random() < 0.1;
        for (const start of world.cleanupStartWaiters.splice(0)) start();
        Object.assign(log, {
          active: true,
          refusedRead: undefined,
          commits: 0,
          othersRewritten: 0,
        });
        log.records.clear();
        log.owners.clear();
        const lostBefore = ctx.store instanceof GatedStore ? ctx.store.lostAnswers : 0;
        try {
          const result = await cleanup(
            ctx,
            {
              retainVersions: sched.int(1, 3),
              orphanGraceMs: short ? sched.pick([0, 60_000]) : ORPHAN_GRACE_MS,
              minVersionAgeMs: MIN_VERSION_AGE_MS,
            },
            {
              format,
              ownershipBoundMs: OWNERSHIP_BOUND_MS,
              // Cleaners here race on purpose: skip the one-cleanup lock, and keep host
              // timers (the heartbeat) out of the seeded schedule.
              concurrent: true,
              heartbeatSleep: NEVER_BEATS,
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
          if (world.isRefusedManifest(error) && log.commits === 0) {
            world.bump("refusedBeforeCommit");
            if (log.othersRewritten > 0) world.bump("refusedAfterRewritingOthersRecord");
            const lost = ctx.store instanceof GatedStore && ctx.store.lostAnswers !== lostBefore;
            if (!lost) await checkNoRecordLeft(world, name, log);
          }
        } finally {
          log.active = false;
          if (log.refusedRead !== undefined) world.bump("cleanupReadRefused");
        }
      }
    });
  }
}

/**
 * A cleanup that failed with a manifest refusal before any commit gave up every record it
 * wrote (cancelled and deleted): none still owned by it remains (unless an answer was lost
 * meanwhile, which the caller rules out).
 */
async function checkNoRecordLeft(
  world: SimulationWorld,
  name: string,
  log: CleanupRunLog,
): Promise<void> {
  for (const key of log.records) {
    const got = await world.memory.get(key);
    if (!got) continue;
    const { owner, state } = decodeJson(got.body) as { owner?: string; state?: string };
    if (owner !== undefined && log.owners.has(owner)) {
      world.violate(
        5,
        `${name}'s cleanup was refused before its commit but left ${state} record ${key}`,
      );
    }
  }
}

/** The owner and state of the record stored at `key` (undefined when there is none). */
async function storedRecord(
  store: ObjectStore,
  key: string,
): Promise<{ owner?: string; state?: string } | undefined> {
  const got = await store.get(key);
  return got ? (decodeJson(got.body) as { owner?: string; state?: string }) : undefined;
}

/**
 * A cleaner's view of the store that logs its run: manifests it read while they held
 * refused bytes, and the retirement records it wrote. A commit written after such a read
 * breaks "Refuse before the commit" (docs/protocol.md §6.1): the run depended
 * on a manifest the format refuses and made an irreversible decision anyway.
 */
function runLogView(
  world: SimulationWorld,
  name: string,
  store: ObjectStore,
  log: CleanupRunLog,
): ObjectStore {
  return {
    backend: store.backend,
    location: store.location,
    capabilities: store.capabilities,
    async get(key, options) {
      const got = await store.get(key, options);
      if (got && log.active) {
        if (log.refusedRead === undefined && world.refusedEtags.has(`${key}@${got.etag}`)) {
          log.refusedRead = key;
        }
      }
      return got;
    },
    head: (key, options) => store.head(key, options),
    delete: (key, options) => store.delete(key, options),
    deleteMany: (keys, options) => store.deleteMany(keys, options),
    list: (prefix, options) => store.list(prefix, options),
    async put(key, body, options) {
      if (log.active && key.startsWith(RECORDS)) {
        const { owner, state, branch, versions } = decodeJson(body) as {
          owner?: string;
          state?: string;
          branch?: string;
          versions?: { version: number; cancelled: boolean }[];
        };
        const drain =
          state === "draining" &&
          options?.precondition !== undefined &&
          "ifNoneMatch" in options.precondition;
        // This view sits below the gate: the read sees the record the put replaces.
        const before = drain ? undefined : await storedRecord(store, key);
        if (owner !== undefined && (drain || before?.owner !== owner)) {
          log.records.add(key);
          log.owners.add(owner);
        }
        if (before?.state === "committed" && owner !== undefined && !log.owners.has(owner)) {
          log.othersRewritten += 1;
        }
        // A drain (a new record): written only once every manifest the run keeps or retires
        // was read and validated, so never after a read the format refuses.
        if (drain) {
          if (log.refusedRead !== undefined) {
            world.violate(
              5,
              `${name}'s cleanup drained ${key} after reading ${log.refusedRead}, which the format refuses`,
            );
          }
        }
        if (state !== undefined && branch !== undefined && versions) {
          world.cleanerWrote(
            state,
            branch,
            versions.filter((v) => !v.cancelled).map((v) => v.version),
          );
        }
        // A commit: a record moving to committed (a rewrite of a committed record, which
        // only cancels versions in it, decides nothing new).
        if (state === "committed" && before?.state !== "committed") {
          log.commits += 1;
          if (log.refusedRead !== undefined) {
            world.violate(
              5,
              `${name}'s cleanup committed ${key} after reading ${log.refusedRead}, which the format refuses`,
            );
          }
        }
      }
      return store.put(key, body, options);
    },
  };
}
