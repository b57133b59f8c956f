import { cleanup, MIN_ORPHAN_GRACE_MS, ORPHAN_GRACE_BELOW_FLOOR, recover } from "@holdfast/cleanup";
import {
  decodeJson,
  type HoldfastError,
  type IdSource,
  isHoldfastError,
  MemoryStore,
  seededIds,
} from "@holdfast/conditional-store";
import {
  COMMIT_INTENT_PREFIX,
  commitVersion,
  createContext,
  type DataFile,
  defaultFormat,
  initDataset,
  manifestKey,
  type ProtocolContext,
  tryReadManifest,
  type VersionRef,
  writeDataFile,
} from "@holdfast/dataset";
import { acquireLease, type Lease, releaseLease, renewLease } from "@holdfast/leases";
import {
  censusReferences,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  recoverReferences,
  updateTag,
} from "@holdfast/refs-lifecycle";
import type { PlantedFault } from "./args.js";
import {
  type BranchModel,
  createStepChecker,
  type Protection,
  show,
  type TagModel,
} from "./checks.js";
import { type FaultRates, GatedStore, SimulatedCrash } from "./gated-store.js";
import { frozenFormat } from "./planted.js";
import { Scheduler } from "./scheduler.js";

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
  /** Actors that call renewLease/releaseLease with forged handles (a manifest's key and ETag). */
  forgers: number;
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
  forgers: 1,
  rounds: 10,
  faults: { applyThenLose: 0.04, loseBefore: 0.03, crash: 0.006 },
  maxClockSkewMs: 120_000,
};

/** Harsher settings for long runs: more lost answers and crashes, two taggers and two branchers racing. */
export const STRESS_SIMULATION: Omit<SimulationConfig, "seed"> = {
  ...DEFAULT_SIMULATION,
  taggers: 2,
  branchers: 2,
  restorers: 2,
  faults: { applyThenLose: 0.1, loseBefore: 0.06, crash: 0.01 },
};

/** The settings of a named profile (`default` or `stress`). */
export function profileConfig(profile: "default" | "stress"): Omit<SimulationConfig, "seed"> {
  return profile === "stress" ? STRESS_SIMULATION : DEFAULT_SIMULATION;
}

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
/** A heartbeat timer that never fires (only the abort at the run's end ends it). */
const NEVER_BEATS = (_ms: number, signal?: AbortSignal) =>
  new Promise<void>((_, reject) => {
    signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
/** Data files younger than this are never orphans: the floor cleanup accepts with writers running. */
const ORPHAN_GRACE_MS = MIN_ORPHAN_GRACE_MS;
/** Longer than a writer's whole re-issue window (0.2+0.4+0.8+1.6 s): see cleanup's minVersionAgeMs. */
const MIN_VERSION_AGE_MS = 10_000;

/**
 * Runs readers (acquire/renew/release), writers (commit), taggers (create/delete tags) and
 * cleaners (cleanup with crashes and lost answers) against one memory store under a seeded
 * scheduler, checking docs/guarantees.md invariants 1–4 after every step and invariant 5 after a final
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
  const violate = (invariant: Violation["invariant"], message: string) => {
    sched.trace?.(`VIOLATION invariant ${invariant}: ${message}`);
    violations.push({ invariant, step: sched.steps, message });
  };
  if (config.trace) sched.trace = config.trace;
  const note = (line: string) => sched.trace?.(`  => ${line}`);

  const contextFor = (
    actor: string,
    faults: FaultRates,
    skewMs = 0,
    hiddenPrefix?: string,
  ): ProtocolContext => {
    const store = new GatedStore(
      memory,
      sched,
      actor,
      faults,
      () => {
        writes += 1;
      },
      hiddenPrefix,
    );
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
  const tags: TagModel[] = [];
  const branches: BranchModel[] = [];
  const committed = new Map<number, string>(); // main version -> txnId reported as committed
  const committedAt = new Map<number, number>(); // main version -> virtual time its commit returned
  const branchCommitted = new Map<string, string>(); // "branch@version" -> txnId
  const failedCommitFiles: string[] = []; // data files of commits reported as definite failures
  let running = 0;
  /** Writes released or applied so far (any actor): the newest-version check runs only after one. */
  let writes = 0;

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

  /** Commits one version on `branch` (main by default); true when it returned success. */
  async function commitOne(
    ctx: ProtocolContext,
    branch = BRANCH,
    parent?: { branch: string; version: number },
  ): Promise<boolean> {
    let file: { key: string; size: number } | undefined;
    try {
      file = await writeDataFile(ctx, new TextEncoder().encode(`payload-${ctx.ids.next()}`));
      const result = await commitVersion(ctx, {
        branch,
        files: [file],
        ...(parent ? { parent } : {}),
      });
      recordCommit(branch, result);
      bump(branch === BRANCH ? "commits" : "branchCommits");
      return true;
    } catch (error) {
      rethrowIfCrashed(ctx, error);
      note(`commit on ${branch}: ${describe(error)}`);
      if (isHoldfastError(error, "unresolved")) bump("commitsUnresolved");
      else if (isExpected(error)) {
        if (file) failedCommitFiles.push(file.key);
        bump("commitsFailed");
        bumpError("commitsFailed", error);
      } else throw error;
      return false;
    }
  }

  /** Records a commit that returned success; two winners of one version break invariant 3. */
  function recordCommit(branch: string, result: { version: number; txnId: string }): void {
    const ledger = branch === BRANCH ? committed : branchCommitted;
    const slot = branch === BRANCH ? result.version : `${branch}@${result.version}`;
    const other = (ledger as Map<unknown, string>).get(slot);
    if (other !== undefined && other !== result.txnId) {
      violate(3, `two commits both won version ${result.version} of ${branch}`);
    }
    (ledger as Map<unknown, string>).set(slot, result.txnId);
    if (branch === BRANCH) committedAt.set(result.version, sched.clock.now());
    note(`commit ${branch}@${result.version} ok`);
  }

  /** A commit of files the writer did not just write (restore, fork, stalled bulk commit). */
  async function commitReusing(
    ctx: ProtocolContext,
    what: string,
    options: Parameters<typeof commitVersion>[1],
  ): Promise<boolean> {
    try {
      const result = await commitVersion(ctx, options);
      recordCommit(options.branch, result);
      bump(`${what}Committed`);
      return true;
    } catch (error) {
      rethrowIfCrashed(ctx, error);
      if (!isExpected(error)) throw error;
      note(`${what} on ${options.branch}: ${describe(error)}`);
      bump(`${what}Failed`);
      bumpError(`${what}Failed`, error);
      return false;
    }
  }

  const latestMain = () => [...committed.keys()].sort((a, b) => b - a)[0] ?? 1;
  /**
   * A main version a cleanup may retire next: one of the newest few already older than the
   * cleaners' minimum version age, never the newest (what a restore races against).
   */
  const retirableSoon = () => {
    const top = latestMain();
    const old = [...committedAt]
      .filter(([v, at]) => v < top && sched.clock.now() - at >= MIN_VERSION_AGE_MS)
      .map(([v]) => v)
      .sort((a, b) => b - a);
    return old.length > 0 ? sched.pick(old.slice(0, 4)) : Math.max(1, top - sched.int(2, 8));
  };
  /**
   * A version to name: usually a main version, sometimes (probability `onBranch`) a
   * version a branch commit reported as committed (the branch may be being deleted: the
   * race the fence and dependency census exist for).
   */
  const pickTarget = (onBranch: number): VersionRef => {
    const onBranches = [...branchCommitted.keys()];
    if (onBranches.length > 0 && sched.random() < onBranch) {
      const slot = sched.pick(onBranches);
      const at = slot.lastIndexOf("@");
      return { branch: slot.slice(0, at), version: Number(slot.slice(at + 1)) };
    }
    return { branch: BRANCH, version: sched.int(1, latestMain()) };
  };

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

  /**
   * The files and sources of a commit that names files it read from `sources`. With the
   * planted fault `unprotected-reuse` the files are disguised as just written and no source
   * is named, so the commit skips the reuse protocol (the writer before issue 9's hole 1
   * was closed: no intent, no record check, no HEADs).
   */
  const reuse = (files: DataFile[], sources: VersionRef[]) => {
    if (config.plant !== "unprotected-reuse") return { files, sources };
    const now = sched.clock.now();
    const disguised = files.map((f) =>
      Object.defineProperty({ ...f }, "writtenAtMs", { value: now, enumerable: false }),
    );
    return { files: disguised, sources: [] };
  };

  /** Resolvers of actors waiting for the next cleanup run to start. */
  const cleanupStartWaiters: (() => void)[] = [];
  /**
   * Between its read and its commit a writer often dawdles: for a while (whole cleanups may
   * run meanwhile), or until a cleanup starts and then for a random number of requests, so
   * its commit lands in the middle of that cleanup's run (the race of docs/protocol.md,
   * "Commits that reuse files").
   */
  const dawdle = async () => {
    const roll = sched.random();
    if (roll < 0.3) return;
    if (roll < 0.6) return sched.sleep(sched.int(0, 20_000));
    const started = new Promise<void>((resolve) => cleanupStartWaiters.push(resolve));
    await Promise.race([started, sched.sleep(20_000)]);
    await sched.waitSteps(sched.int(0, 80));
  };

  /** Reads a main version's manifest through `ctx`: the files a restore or fork names again. */
  const readSource = async (ctx: ProtocolContext, version: number) => {
    const record = await tryReadManifest(ctx, BRANCH, version);
    return record?.manifest.files ?? null;
  };

  for (let w = 0; w < config.restorers; w += 1) {
    const name = `restorer-${w}`;
    const ctx = contextFor(name, config.faults);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          // Mostly a version just behind the newest (what a cleanup retires next); a revert
          // restores the newest version's parent.
          const top = latestMain();
          const roll = sched.random();
          const kind = roll < 0.2 ? "revert" : roll < 0.35 ? "undeclared" : "restore";
          const version =
            kind === "revert"
              ? Math.max(1, top - 1)
              : sched.random() < 0.8
                ? retirableSoon()
                : sched.int(1, top);
          const source = { branch: BRANCH, version };
          // Half the time the writer holds a lease on the source across its read and commit.
          let lease: Lease | undefined;
          if (sched.random() < 0.5) {
            try {
              lease = await acquireLease(ctx, { ...source, ttlMs: 60_000 });
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (!isExpected(error)) throw error;
              bump("restoreLeaseRefused");
              continue;
            }
          }
          try {
            const files = await readSource(ctx, source.version);
            if (!files) {
              bump("restoreSourceGone");
              continue;
            }
            await dawdle();
            // A restore or revert: the old version's files committed again as the newest
            // version, naming its source (or, "undeclared", not naming it).
            await commitReusing(ctx, kind, {
              branch: BRANCH,
              ...reuse(files, kind === "undeclared" ? [] : [source]),
            });
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            bump("restoreReadFailed");
          } finally {
            if (lease) await releaseLease(ctx, lease).catch(() => {});
          }
        }
      }),
    );
  }

  for (let w = 0; w < config.forkers; w += 1) {
    const name = `forker-${w}`;
    const ctx = contextFor(name, config.faults);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          const source = { branch: BRANCH, version: sched.int(1, latestMain()) };
          let files: Awaited<ReturnType<typeof readSource>>;
          try {
            files = await readSource(ctx, source.version);
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            continue;
          }
          if (!files) continue;
          await dawdle();
          // A fork written as a manifest only: version 1 of a new branch names the source
          // as parent and its files, with no reference file.
          const branch = `f${config.seed}-${w}-${r}`;
          if (
            (await commitReusing(ctx, "fork", {
              branch,
              parent: source,
              ...reuse(files, [source]),
            })) &&
            sched.random() < 0.5
          ) {
            await commitOne(ctx, branch);
          }
        }
      }),
    );
  }

  for (let w = 0; w < config.bulkWriters; w += 1) {
    const name = `bulk-writer-${w}`;
    const ctx = contextFor(name, config.faults);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < Math.max(1, Math.floor(config.rounds / 3)); r += 1) {
          await sched.sleep(sched.int(0, 3000));
          const files = [];
          try {
            for (let f = sched.int(5, 30); f > 0; f -= 1) {
              files.push(await writeDataFile(ctx, new TextEncoder().encode(`bulk-${f}`)));
              await sched.sleep(sched.int(0, 200));
            }
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            continue;
          }
          // Sometimes the writer stalls past the fresh window, or past the orphan grace
          // (cleaners may sweep the files meanwhile: the commit must then refuse).
          if (sched.random() < 0.3) {
            await sched.sleep(sched.pick([20 * 60_000, ORPHAN_GRACE_MS + 10 * 60_000]));
          }
          await commitReusing(ctx, "bulk", { branch: BRANCH, files });
        }
      }),
    );
  }

  for (let w = 0; w < config.forgers; w += 1) {
    const name = `forger-${w}`;
    const ctx = contextFor(name, config.faults);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          const version = sched.int(1, latestMain());
          let lease: Lease;
          try {
            lease = await acquireLease(ctx, { branch: BRANCH, version, ttlMs: 20_000 });
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            continue;
          }
          // A handle whose key and ETag are a manifest's: release must not delete it and
          // renew must not overwrite it.
          const target = manifestKey(BRANCH, sched.int(1, latestMain()));
          const before = await memory.head(target);
          const forged = { ...lease, key: target, etag: before?.etag ?? lease.etag };
          for (const call of [() => releaseLease(ctx, forged), () => renewLease(ctx, forged)]) {
            try {
              await call();
              violate(1, `a forged lease handle naming ${target} was accepted`);
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (isHoldfastError(error, "invalid-input")) bump("forgeryRefused");
              else throw error;
            }
          }
          const after = await memory.head(target);
          if (before && after && after.etag !== before.etag) {
            violate(1, `${target} was rewritten through a forged lease handle`);
          }
          await releaseLease(ctx, lease).catch((error: unknown) => {
            rethrowIfCrashed(ctx, error);
          });
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
          // Mostly main; sometimes a version a branch commit reported (lineage of a branch).
          const { branch, version } = pickTarget(config.branchReadShare);
          const ttlMs = sched.pick([300, 1500, 5000, 20_000]);
          let lease: Lease;
          let sentAt = sched.clock.now();
          try {
            lease = await acquireLease(ctx, { branch, version, ttlMs });
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
          const protection: Protection = {
            reader: name,
            branch,
            version,
            protectedUntil: sentAt + ttlMs,
          };
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
          // The reader is done reading: it claims no protection from the moment it starts
          // releasing, since the release's delete may land long before its answer does
          // (seed 298: a lost answer and re-issues kept the call open after the lease was gone).
          protection.protectedUntil = Math.min(protection.protectedUntil, sched.clock.now());
          try {
            await releaseLease(ctx, lease);
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
          }
        }
      }),
    );
  }

  for (let t = 0; t < config.taggers; t += 1) {
    const name = `tagger-${t}`;
    const ctx = contextFor(name, config.faults);
    const mine: TagModel[] = [];
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          const roll = sched.random();
          const updatable = mine.filter((m) => m.state === "active");
          const deletable = mine.filter((m) => m.state === "active" || m.state === "deleting");
          if (deletable.length > 0 && roll < 0.3) {
            const tag = sched.pick(deletable);
            // From here the tag may vanish (recovery or a retry may finish the deletion):
            // it protects its promised version only while its canonical file is visible.
            const before = { state: tag.state, settled: tag.settled };
            tag.state = "deleting";
            tag.settled = false;
            try {
              await deleteTag(ctx, tag.name, { ownershipBoundMs: OWNERSHIP_BOUND_MS });
              tag.state = "deleted";
              note(`deleteTag ${tag.name} ok`);
              bump("tagsDeleted");
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (!isExpected(error)) throw error;
              note(`deleteTag ${tag.name}: ${describe(error)}`);
              if (isHoldfastError(error, "not-found")) {
                // Definite: no canonical and no deletion in flight (an earlier deletion whose
                // answer was lost finished, or it never landed): it must never be visible again.
                tag.state = "deleted";
              } else if (!isHoldfastError(error, "unresolved", "ambiguous")) {
                // Definite failure: the prior state is restored exactly.
                tag.state = before.state;
                tag.settled = before.settled;
              }
              bump("tagDeleteFailed");
              bumpError("tagDeleteFailed", error);
            }
            continue;
          }
          if (updatable.length > 0 && roll < 0.6) {
            const tag = sched.pick(updatable);
            const target = pickTarget(0.2);
            const settledBefore = tag.settled;
            tag.settled = false;
            try {
              await updateTag(
                ctx,
                { name: tag.name, target },
                { ownershipBoundMs: OWNERSHIP_BOUND_MS },
              );
              tag.promised = target;
              tag.settled = true;
              note(`updateTag ${tag.name} -> ${show(target)} ok`);
              bump("tagsUpdated");
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (!isExpected(error)) throw error;
              note(`updateTag ${tag.name} -> ${show(target)}: ${describe(error)}`);
              // A definite failure left (or restored) the prior content.
              if (!isHoldfastError(error, "unresolved", "ambiguous")) tag.settled = settledBefore;
              bump("tagUpdateFailed");
              bumpError("tagUpdateFailed", error);
            }
            continue;
          }
          const target = pickTarget(0.2);
          const tag: TagModel = {
            name: `t${config.seed}-${t}-${r}`,
            promised: null,
            settled: false,
            state: "active",
          };
          tags.push(tag);
          mine.push(tag);
          try {
            await createTag(
              ctx,
              { name: tag.name, target },
              { ownershipBoundMs: OWNERSHIP_BOUND_MS },
            );
            tag.promised = target;
            tag.settled = true;
            note(`createTag ${tag.name} -> ${show(target)} ok`);
            bump("tagsCreated");
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            note(`createTag ${tag.name} -> ${show(target)}: ${describe(error)}`);
            if (!isHoldfastError(error, "unresolved", "ambiguous")) tag.state = "never";
            bump("tagCreateFailed");
            bumpError("tagCreateFailed", error);
          }
        }
      }),
    );
  }

  for (let b = 0; b < config.branchers; b += 1) {
    const name = `brancher-${b}`;
    const ctx = contextFor(name, config.faults);
    const mine: BranchModel[] = [];
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < config.rounds; r += 1) {
          await sched.sleep(sched.int(0, 3000));
          const roll = sched.random();
          const committable = mine.filter((m) => m.created && m.state === "active");
          const deletable = mine.filter((m) => m.state === "active" || m.state === "deleting");
          if (deletable.length > 0 && roll < 0.25) {
            const branch = sched.pick(deletable);
            const before = branch.state;
            branch.state = "deleting";
            try {
              await deleteBranch(ctx, branch.name, { ownershipBoundMs: OWNERSHIP_BOUND_MS });
              branch.state = "deleted";
              note(`deleteBranch ${branch.name} ok`);
              bump("branchesDeleted");
            } catch (error) {
              rethrowIfCrashed(ctx, error);
              if (!isExpected(error)) throw error;
              note(`deleteBranch ${branch.name}: ${describe(error)}`);
              if (isHoldfastError(error, "not-found")) branch.state = "deleted";
              else if (!isHoldfastError(error, "unresolved", "ambiguous")) branch.state = before;
              bump("branchDeleteFailed");
              bumpError("branchDeleteFailed", error);
            }
            continue;
          }
          if (committable.length > 0 && (roll < 0.7 || committable.length >= 3)) {
            const branch = sched.pick(committable);
            // Version 1 of a branch names its fork point as parent (lineage); later
            // versions name their predecessor on the branch (commitVersion's default).
            const parent = branch.commits === 0 ? branch.fork : undefined;
            if (await commitOne(ctx, branch.name, parent)) branch.commits += 1;
            continue;
          }
          const branch: BranchModel = {
            name: `b${config.seed}-${b}-${r}`,
            fork: pickTarget(0.3),
            created: false,
            state: "active",
            commits: 0,
          };
          branches.push(branch);
          mine.push(branch);
          try {
            await createBranch(
              ctx,
              { name: branch.name, parent: branch.fork },
              { ownershipBoundMs: OWNERSHIP_BOUND_MS },
            );
            branch.created = true;
            note(`createBranch ${branch.name} at ${show(branch.fork)} ok`);
            bump("branchesCreated");
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (!isExpected(error)) throw error;
            note(`createBranch ${branch.name} at ${show(branch.fork)}: ${describe(error)}`);
            if (!isHoldfastError(error, "unresolved", "ambiguous")) branch.state = "never";
            bump("branchCreateFailed");
            bumpError("branchCreateFailed", error);
          }
        }
      }),
    );
  }

  for (let c = 0; c < config.cleaners; c += 1) {
    const name = `cleaner-${c}`;
    const skew = sched.int(-config.maxClockSkewMs, config.maxClockSkewMs);
    const blind = config.plant === "blind-last-look";
    const ctx = contextFor(name, config.faults, skew, blind ? COMMIT_INTENT_PREFIX : undefined);
    actors.push(
      actor(name, async () => {
        for (let r = 0; r < Math.max(1, Math.floor(config.rounds / 2)); r += 1) {
          await sched.sleep(sched.int(500, 6000));
          // Now and then a cleaner asks for a grace below the floor: it must be refused.
          const short = sched.random() < 0.1;
          for (const start of cleanupStartWaiters.splice(0)) start();
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
            stats.retired = (stats.retired ?? 0) + result.retired.length;
            if (short) violate(4, `${name}'s cleanup accepted an orphan grace below the floor`);
            bump("cleanups");
          } catch (error) {
            rethrowIfCrashed(ctx, error);
            if (short && isHoldfastError(error, "invalid-input")) {
              if (error.code !== ORPHAN_GRACE_BELOW_FLOOR) throw error;
              bump("graceRefused");
              continue;
            }
            if (!isExpected(error)) throw error;
            bump("cleanupFailed");
            bumpError("cleanupFailed", error);
          }
        }
      }),
    );
  }

  const checkStep = createStepChecker({
    memory,
    sched,
    protections,
    tags,
    branches,
    failedCommitFiles,
    writes: () => writes,
    violate,
  });

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
      await recover(finalCtx, {
        referenceCensus: censusReferences(finalCtx),
        heartbeatSleep: NEVER_BEATS,
      });
      await cleanup(
        finalCtx,
        // Every actor has stopped: no commit can be in flight.
        { retainVersions: Number.MAX_SAFE_INTEGER, orphanGraceMs: 0, noWriterActive: true },
        { referenceCensus: censusReferences(finalCtx), heartbeatSleep: NEVER_BEATS },
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
    if (key.startsWith("_holdfast/refs/fences/"))
      violate(5, `branch termination fence left behind: ${key}`);
  }
  // No orphan survives its parent's deletion: once recovery ran, no visible tag or branch
  // names a version of a branch whose reference is gone and whose version is gone too.
  for (const key of memory.keys()) {
    if (!key.startsWith("_refs/tags/") && !key.startsWith("_refs/branches/")) continue;
    const got = await memory.get(key);
    if (!got) continue;
    const doc = decodeJson(got.body) as { target?: VersionRef; parent?: VersionRef | null };
    const named = doc.target ?? doc.parent ?? null;
    if (!named || named.branch === BRANCH) continue;
    if (await memory.head(`_refs/branches/${named.branch}.json`)) continue;
    if (await memory.head(manifestKey(named.branch, named.version))) continue;
    violate(5, `${key} names ${show(named)}, but that branch and version are gone (orphan)`);
  }
  // A deleted branch (by its caller or by recovery finishing the deletion) leaves nothing.
  for (const branch of branches) {
    if (await memory.head(`_refs/branches/${branch.name}.json`)) continue;
    for (const prefix of [`_versions/${branch.name}/`, `_holdfast/leases/${branch.name}/`]) {
      const left = memory.keys(prefix);
      if (left.length > 0 && (branch.state === "deleted" || branch.state === "deleting")) {
        violate(5, `branch ${branch.name} is gone but ${left[0]} is left behind`);
      }
    }
  }
  for (const key of memory.keys()) {
    const match = /^_versions\/([^/]+)\/(\d+)\.json$/.exec(key);
    if (!match) continue;
    const branch = match[1]!;
    const version = Number(match[2]);
    let probed = false;
    const probe = (async () => {
      try {
        const lease = await acquireLease(finalCtx, { branch, version, ttlMs: 1000 });
        await releaseLease(finalCtx, lease);
      } catch (error) {
        violate(5, `${branch}@${version} is neither acquirable nor gone: ${describe(error)}`);
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
