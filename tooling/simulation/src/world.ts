import {
  type HoldfastError,
  type IdSource,
  isHoldfastError,
  MemoryStore,
  type ObjectStore,
  type RandomBytes,
  seededIds,
  seededRandomBytes,
} from "@holdfast/conditional-store";
import {
  commitVersion,
  type DataFile,
  manifestKey,
  tryReadManifest,
  writeDataFile,
} from "@holdfast/dataset";
import { markHoldfastDataset } from "@holdfast/dataset/internal";
import { createContext, type ProtocolContext, type VersionRef } from "@holdfast/protocol";
import type { BrokenManifest } from "./actors/breakers.js";
import type { BranchModel, Protection, TagModel } from "./checks.js";
import {
  BRANCH,
  MIN_VERSION_AGE_MS,
  type SimulationConfig,
  type SimulationResult,
  type Violation,
} from "./config.js";
import { type FaultRates, GatedStore, SimulatedCrash } from "./gated-store.js";
import { observeLandings } from "./landings.js";
import { Scheduler } from "./scheduler.js";

/**
 * One run's shared state: the memory store behind every actor's gated view, the seeded
 * scheduler, what the run knows and promised (the models the checker reads), and the
 * moves every kind of actor makes (commit, pick a version, dawdle, read a source).
 */
export class SimulationWorld {
  readonly sched: Scheduler;
  readonly memory: MemoryStore;
  /** Every actor draws from one seeded id source, so ids are unique and replayable. */
  readonly ids: IdSource;
  /** Every actor draws lease secrets from one seeded source too (replayable, tests only). */
  readonly random: RandomBytes;
  readonly violations: Violation[] = [];
  readonly stats: Record<string, number> = {};
  readonly protections: Protection[] = [];
  readonly tags: TagModel[] = [];
  readonly branches: BranchModel[] = [];
  /** main version -> txnId reported as committed. */
  readonly committed = new Map<number, string>();
  /** main version -> virtual time its commit returned. */
  readonly committedAt = new Map<number, number>();
  /** "branch@version" -> txnId. */
  readonly branchCommitted = new Map<string, string>();
  /** "branch@version" -> virtual time its commit returned (branches other than main). */
  readonly branchCommittedAt = new Map<string, number>();
  /** Data files of commits reported as definite failures. */
  readonly failedCommitFiles: string[] = [];
  /** The actors' bodies, in the order they were started. */
  readonly actors: Promise<void>[] = [];
  /** Resolvers of actors waiting for the next cleanup run to start. */
  readonly cleanupStartWaiters: (() => void)[] = [];
  /**
   * Manifests a breaker replaced with bytes the format refuses and has not repaired yet, by
   * key (named before the put is sent): what the version's valid manifest was.
   */
  readonly broken = new Map<string, BrokenManifest>();
  /** `key@etag` of every object a breaker put that the format refuses. */
  readonly refusedEtags = new Set<string>();
  /** Manifest keys a breaker ever replaced: a refusal naming one is an expected answer. */
  readonly everBroken = new Set<string>();
  /** Writes of breakers so far (a forger's "rewritten" check skips keys they touched). */
  foreignWrites = 0;
  /** Actors waiting for a cleaner to drain or seal a retirement record of a branch they accept. */
  readonly #recordWaiters: {
    state: string;
    accepts: (record: RecordWritten) => boolean;
    wake: (record: RecordWritten) => void;
  }[] = [];
  /** Actors still running. */
  running = 0;
  /** Writes released or applied so far (any actor): the newest-version check runs only after one. */
  writes = 0;
  readonly #gatedStores = new Map<string, GatedStore>();
  /** The memory store as actors reach it, and what each manifest landed below (see `landings.ts`). */
  readonly #observed: ObjectStore;
  readonly #landedBelow: Map<string, number | null>;

  constructor(readonly config: SimulationConfig) {
    this.sched = new Scheduler(config.seed);
    this.memory = new MemoryStore({ clock: this.sched.clock, timestampPrecisionMs: 1000 });
    const observed = observeLandings(this.memory);
    this.#observed = observed.store;
    this.#landedBelow = observed.landedBelow;
    this.ids = seededIds(config.seed);
    this.random = seededRandomBytes(config.seed);
    if (config.trace) this.sched.trace = config.trace;
  }

  /** The run's outcome as `runSimulation` returns it. */
  result(): SimulationResult {
    const { config, sched, violations, stats } = this;
    return { seed: config.seed, steps: sched.steps, violations, stats };
  }

  bump(name: string): void {
    this.stats[name] = (this.stats[name] ?? 0) + 1;
  }

  /** Counts an error by its kind and code under `what:kind/code`. */
  bumpError(what: string, error: unknown): void {
    this.bump(`${what}:${isHoldfastError(error) ? `${error.kind}/${error.code ?? "-"}` : "other"}`);
  }

  violate(invariant: Violation["invariant"], message: string): void {
    this.sched.trace?.(`VIOLATION invariant ${invariant}: ${message}`);
    this.violations.push({ invariant, step: this.sched.steps, message });
  }

  /** A trace line for an operation's outcome. */
  note(line: string): void {
    this.sched.trace?.(`  => ${line}`);
  }

  /**
   * A protocol context for `actor`: its own gated view of the store (faults at `faults`,
   * keys under `hiddenPrefix` hidden) and a host clock `skewMs` off storage time.
   */
  contextFor(
    actor: string,
    faults: FaultRates,
    skewMs = 0,
    hiddenPrefix?: string,
    view: (store: ObjectStore) => ObjectStore = (store) => store,
  ) {
    const store = new GatedStore(
      view(this.#observed),
      this.sched,
      actor,
      faults,
      () => {
        this.writes += 1;
      },
      hiddenPrefix,
    );
    this.#gatedStores.set(actor, store);
    // The dataset is holdfast's (seedDataset initializes it before any actor runs): the
    // format guard's marker check would only add a request to every schedule.
    markHoldfastDataset(store);
    return createContext(store, {
      clock: { now: () => this.sched.clock.now() + skewMs },
      ids: this.ids,
      random: this.random,
      sleep: this.sched.sleep,
      reissue: { pausesMs: [200, 400, 800, 1600] },
    });
  }

  /** Initializes the dataset and commits four versions on main, without faults or gates. */
  async seedDataset(init: (ctx: ProtocolContext) => Promise<unknown>): Promise<void> {
    const setup = createContext(this.memory, {
      clock: this.sched.clock,
      ids: this.ids,
      random: this.random,
      sleep: this.sched.sleep,
    });
    await init(setup);
    for (let i = 0; i < 4; i += 1) await this.commitOne(setup);
  }

  /**
   * Starts actor `name`. A crash is the process dying: whatever error the library made of
   * it, the actor stops; any other unexpected error breaks invariant 4.
   */
  spawn(name: string, body: () => Promise<void>): void {
    const run = async () => {
      this.running += 1;
      try {
        await body();
      } catch (error) {
        if (error instanceof SimulatedCrash || this.#gatedStores.get(name)?.crashed) {
          this.bump("crashes");
        } else this.violate(4, `${name} failed with an unexpected error: ${describe(error)}`);
      } finally {
        this.running -= 1;
      }
    };
    this.actors.push(run());
  }

  /**
   * Starts `count` actors named `kind-i`, each on its own context with the run's fault
   * rates, in index order (the order is part of the schedule a seed names).
   */
  spawnEach(
    kind: string,
    count: number,
    body: (ctx: ProtocolContext, index: number, name: string) => Promise<void>,
    view?: (store: ObjectStore) => ObjectStore,
  ): void {
    for (let i = 0; i < count; i += 1) {
      const name = `${kind}-${i}`;
      const ctx = this.contextFor(name, this.config.faults, 0, undefined, view);
      this.spawn(name, () => body(ctx, i, name));
    }
  }

  /**
   * An error an actor met: a crash ends the actor, an unexpected error is thrown on (to
   * {@link spawn}: invariant 4). An expected one is returned, after a trace line naming
   * `what` and counting it under `counter` and its kind, where given.
   */
  tolerate(ctx: ProtocolContext, error: unknown, counter?: string, what?: string): HoldfastError {
    rethrowIfCrashed(ctx, error);
    if (!this.isExpected(error)) throw error;
    if (what !== undefined) this.note(`${what}: ${describe(error)}`);
    if (counter !== undefined) {
      this.bump(counter);
      this.bumpError(counter, error);
    }
    return error;
  }

  /**
   * An expected answer (see {@link isExpected}), or the format's refusal of a manifest a
   * breaker replaced (`invalid-input`, MALFORMED_OBJECT, naming that key).
   */
  isExpected(error: unknown): error is HoldfastError {
    return isExpected(error) || this.isRefusedManifest(error);
  }

  /** The format refused a manifest a breaker replaced (docs/protocol.md §6.1). */
  isRefusedManifest(error: unknown): error is HoldfastError {
    return (
      isHoldfastError(error, "invalid-input") &&
      error.code === "MALFORMED_OBJECT" &&
      error.key !== undefined &&
      this.everBroken.has(error.key)
    );
  }

  /**
   * Resolves with the branch and versions the next retirement record a cleaner drains or
   * seals (`state`) that `accepts` takes will retire (uncancelled), or undefined
   * after `ms`. A drain is followed by census 1 and the seal; the seal by census 2, the
   * reference census, the commit and the last look (the manifests were read before the
   * drain).
   */
  nextRecord(
    state: "draining" | "sealed",
    ms: number,
    accepts: (record: RecordWritten) => boolean = (record) => record.branch === BRANCH,
  ): Promise<RecordWritten | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const waiter = {
        state,
        accepts,
        wake: (record: RecordWritten) => {
          done = true;
          resolve(record);
        },
      };
      this.#recordWaiters.push(waiter);
      void this.sched.sleep(ms).then(() => {
        if (done) return;
        const i = this.#recordWaiters.indexOf(waiter);
        if (i >= 0) this.#recordWaiters.splice(i, 1);
        resolve(undefined);
      });
    });
  }

  /**
   * A cleaner wrote a record of `branch` in `state` retiring `versions`: wakes the actors
   * waiting for one it accepts.
   */
  cleanerWrote(state: string, branch: string, versions: number[]): void {
    if (versions.length === 0 || this.#recordWaiters.length === 0) return;
    for (let i = this.#recordWaiters.length - 1; i >= 0; i -= 1) {
      const waiter = this.#recordWaiters[i]!;
      const record = { branch, versions };
      if (waiter.state !== state || !waiter.accepts(record)) continue;
      this.#recordWaiters.splice(i, 1);
      waiter.wake(record);
    }
  }

  /** Commits one version on `branch` (main by default); true when it returned success. */
  async commitOne(
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
      this.recordCommit(branch, result);
      this.bump(branch === BRANCH ? "commits" : "branchCommits");
      return true;
    } catch (error) {
      rethrowIfCrashed(ctx, error);
      this.note(`commit on ${branch}: ${describe(error)}`);
      if (isHoldfastError(error, "unresolved")) this.bump("commitsUnresolved");
      else if (this.isExpected(error)) {
        if (file) this.failedCommitFiles.push(file.key);
        this.bump("commitsFailed");
        this.bumpError("commitsFailed", error);
      } else throw error;
      return false;
    }
  }

  /** Records a commit that returned success; two winners of one version break invariant 3. */
  recordCommit(branch: string, result: { version: number; txnId: string }): void {
    const ledger = branch === BRANCH ? this.committed : this.branchCommitted;
    const slot = branch === BRANCH ? result.version : `${branch}@${result.version}`;
    const other = (ledger as Map<unknown, string>).get(slot);
    if (other !== undefined && other !== result.txnId) {
      this.violate(3, `two commits both won version ${result.version} of ${branch}`);
    }
    const above = this.#landedBelow.get(manifestKey(branch, result.version));
    if (above != null) {
      this.violate(
        7,
        `commit ${branch}@${result.version} returned success but landed below version ${above}`,
      );
    }
    (ledger as Map<unknown, string>).set(slot, result.txnId);
    if (branch === BRANCH) this.committedAt.set(result.version, this.sched.clock.now());
    else this.branchCommittedAt.set(slot as string, this.sched.clock.now());
    this.note(`commit ${branch}@${result.version} ok`);
  }

  /** A commit of files the writer did not just write (restore, fork, stalled bulk commit). */
  async commitReusing(
    ctx: ProtocolContext,
    what: string,
    options: Parameters<typeof commitVersion>[1],
  ): Promise<boolean> {
    try {
      const result = await commitVersion(ctx, options);
      this.recordCommit(options.branch, result);
      this.bump(`${what}Committed`);
      return true;
    } catch (error) {
      this.tolerate(ctx, error, `${what}Failed`, `${what} on ${options.branch}`);
      return false;
    }
  }

  /**
   * Branches other than main with a version some commit reported committed and no deletion
   * attempted (forks have no model and are never deleted), in the order they were first
   * committed to (part of the schedule a seed names).
   */
  liveBranches(): string[] {
    const names = new Set<string>();
    for (const slot of this.branchCommitted.keys()) names.add(slot.slice(0, slot.lastIndexOf("@")));
    return [...names].filter((name) => {
      const model = this.branches.find((m) => m.name === name);
      return model === undefined || model.state === "active";
    });
  }

  /** Versions of `branch` (not main) some commit reported committed, ascending. */
  branchVersions(branch: string): number[] {
    const versions: number[] = [];
    for (const slot of this.branchCommitted.keys()) {
      const at = slot.lastIndexOf("@");
      if (slot.slice(0, at) === branch) versions.push(Number(slot.slice(at + 1)));
    }
    return versions.sort((a, b) => a - b);
  }

  latestMain(): number {
    return [...this.committed.keys()].sort((a, b) => b - a)[0] ?? 1;
  }

  /**
   * A main version a cleanup may retire next: one of the newest few already older than the
   * cleaners' minimum version age, never the newest (what a restore races against).
   */
  retirableSoon(): number {
    const { sched } = this;
    const top = this.latestMain();
    const old = [...this.committedAt]
      .filter(([v, at]) => v < top && sched.clock.now() - at >= MIN_VERSION_AGE_MS)
      .map(([v]) => v)
      .sort((a, b) => b - a);
    return old.length > 0 ? sched.pick(old.slice(0, 4)) : Math.max(1, top - sched.int(2, 8));
  }

  /**
   * A version to name: usually a main version, sometimes (probability `onBranch`) a
   * version a branch commit reported as committed (the branch may be being deleted: the
   * race the fence and dependency census exist for).
   */
  pickTarget(onBranch: number): VersionRef {
    const onBranches = [...this.branchCommitted.keys()];
    if (onBranches.length > 0 && this.sched.random() < onBranch) {
      const slot = this.sched.pick(onBranches);
      const at = slot.lastIndexOf("@");
      return { branch: slot.slice(0, at), version: Number(slot.slice(at + 1)) };
    }
    return { branch: BRANCH, version: this.sched.int(1, this.latestMain()) };
  }

  /**
   * The files and sources of a commit that names files it read from `sources`. With the
   * planted fault `unprotected-reuse` the files are disguised as just written and no source
   * is named, so the commit skips the reuse protocol (the writer before commits that
   * reuse files were protected: no intent, no record check, no HEADs).
   */
  reuse(files: DataFile[], sources: VersionRef[]) {
    if (this.config.plant !== "unprotected-reuse") return { files, sources };
    const now = this.sched.clock.now();
    const disguised = files.map((f) =>
      Object.defineProperty({ ...f }, "writtenAtMs", { value: now, enumerable: false }),
    );
    return { files: disguised, sources: [] };
  }

  /**
   * Between its read and its commit a writer often dawdles: for a while (whole cleanups may
   * run meanwhile), or until a cleanup starts and then for a random number of requests, so
   * its commit lands in the middle of that cleanup's run (the race of docs/protocol.md §2.5).
   */
  async dawdle(): Promise<void> {
    const { sched } = this;
    const roll = sched.random();
    if (roll < 0.3) return;
    if (roll < 0.6) return sched.sleep(sched.int(0, 20_000));
    const started = new Promise<void>((resolve) => this.cleanupStartWaiters.push(resolve));
    await Promise.race([started, sched.sleep(20_000)]);
    await sched.waitSteps(sched.int(0, 80));
  }

  /** Reads a main version's manifest through `ctx`: the files a restore or fork names again. */
  async readSource(ctx: ProtocolContext, version: number): Promise<DataFile[] | null> {
    const record = await tryReadManifest(ctx, BRANCH, version);
    return record?.manifest.files ?? null;
  }
}

/** What a cleaner's record write retires: its branch and uncancelled versions. */
export interface RecordWritten {
  readonly branch: string;
  readonly versions: number[];
}

/** A crashed actor's error becomes a {@link SimulatedCrash}, whatever the library made of it. */
export function rethrowIfCrashed(ctx: ProtocolContext, error: unknown): void {
  if (error instanceof SimulatedCrash || (ctx.store instanceof GatedStore && ctx.store.crashed)) {
    throw new SimulatedCrash("crashed");
  }
}

/** Errors an actor may legitimately meet (refusals, conflicts, unknown outcomes). */
export function isExpected(error: unknown): error is HoldfastError {
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

export function describe(error: unknown): string {
  if (isHoldfastError(error)) return `${error.kind}/${error.code ?? "-"}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}\n${error.stack}` : String(error);
}
