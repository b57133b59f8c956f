import { holdfastError, listAll } from "@holdfast/conditional-store";
import type { VersionEntry } from "@holdfast/dataset";
import { RETIREMENT_ROOT } from "@holdfast/protocol";
import {
  activeVersions,
  parseRetirementKey,
  type RetirementHandle,
  readRecord,
  recoverRetirements,
} from "@holdfast/retirement";
import { policyRetires, type RetainReason, tooRecent } from "./policy.js";
import { cancelReplacedBeforeReads } from "./protect.js";
import { VersionSet } from "./ranges.js";
import { addAll, type RunState } from "./run-state.js";
import { TAGGED_OLD_VERSIONS } from "./types.js";

/** Versions of one branch one retirement record will name. */
export interface BranchCandidates {
  readonly branch: string;
  readonly entries: VersionEntry[];
}

/** What earlier runs left: committed records to carry to deletion, and versions other live records hold. */
export interface Interrupted {
  /** Committed retirements (recovered or, later, this run's own), deleted in order. */
  readonly committed: RetirementHandle[];
  /** Versions named by live (draining or sealed) records of other runs: never candidates. */
  readonly busy: Map<string, Set<number>>;
}

/** The plan: candidates per record, and the data files every retained version names. */
export interface Plan {
  readonly candidates: BranchCandidates[];
  /**
   * The one set that grows with the dataset: data files of retained versions. Candidates
   * are held as (version, ETag, Last-Modified); their manifests are read once, at deletion.
   */
  readonly retainedFiles: Set<string>;
  /** Versions the plan listed, per branch: a later re-listing finds the manifests added since. */
  readonly listed: Map<string, VersionSet>;
}

/**
 * Cleanup 2 recover (docs/protocol.md §6): resolve what earlier runs left (committed work
 * always completes).
 */
export async function resolveInterrupted(state: RunState): Promise<Interrupted> {
  const { ctx, stats } = state;
  state.progress({ phase: "recover", done: 0 });
  const committed: RetirementHandle[] = [];
  const busy = new Map<string, Set<number>>();
  if (state.dryRun) {
    for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
      if (!parseRetirementKey(meta.key)) continue;
      const handle = await readRecord(ctx, meta.key);
      if (!handle || handle.record.state === "cancelled") continue;
      if (handle.record.state === "committed") committed.push(handle);
      else addAll(busy, handle.record.branch, activeVersions(handle.record));
    }
  } else {
    const report = await recoverRetirements(ctx, {
      leaseCensus: state.leaseCensus,
      referenceCensus: state.referenceCensus,
      owner: state.owner,
      storageNow: state.now,
      // A census failure gives up the sealed records it could not decide; before it is
      // thrown, the committed records' replaced versions are cancelled (a listing, no
      // manifest read), as after a recovery that succeeds (docs/protocol.md §6, Cleanup 2 recover).
      onCensusFailure: (partial) => cancelReplacedBeforeReads(state, partial.committed),
    });
    committed.push(...report.committed);
    for (const live of report.live) addAll(busy, live.record.branch, activeVersions(live.record));
    stats.recovered = {
      committed: report.committed.length,
      cancelled: report.cancelled.length,
      retained: report.retained.length,
    };
  }
  state.progress({ phase: "recover", done: committed.length });
  return { committed, busy };
}

/** Reads the manifest of a kept version (through the read pool) and adds its files to the retained set. */
export function keepFilesOf(
  state: RunState,
  retainedFiles: Set<string>,
  branch: string,
  version: number,
): Promise<void> {
  return state.pool.run(async () => {
    const manifest = await state.format.readManifest(state.ctx, branch, version);
    for (const file of manifest?.files ?? []) retainedFiles.add(file.key);
    state.planProgress.done(1);
  });
}

/** Receives the candidates of one record as soon as the plan has them (see {@link PlanOptions}). */
export type CandidateSink = (batch: BranchCandidates) => Promise<void>;

export interface PlanOptions {
  /**
   * Streams the plan: each record's candidates (at most `maxVersionsPerRecord`) go to the
   * sink as soon as they are known and are not kept, so a run holds one record's
   * candidates at a time (memory flat in the number of versions). Without a sink they are
   * collected in `Plan.candidates`.
   */
  readonly sink?: CandidateSink | undefined;
  /** A pass that only feeds the sink: nothing retained is counted or read. */
  readonly checkOnly?: boolean | undefined;
  /** The retained-file set to fill. @default a new set */
  readonly retainedFiles?: Set<string> | undefined;
}

/** Cleanup 3 plan: keep the latest / newest N / non-matching; read retained manifests only. */
/**
 * One branch's listing, in order: every version is noted in `seen`; a version some committed
 * record is deleting is passed; each other one is classified once `window` newer ones follow
 * it. Answers the last `window` (or fewer), which the policy keeps, and how many were listed. The loop is its own small
 * function: it is resumed once per version, which makes it hot for the optimizing compiler.
 */
async function classifyListed(
  versions: AsyncIterable<VersionEntry>,
  seen: VersionSet,
  skip: ReadonlySet<number> | undefined,
  window: number,
  classify: (entry: VersionEntry) => Promise<void>,
  counter: { found(n: number): void; done(n: number): void } | undefined,
): Promise<{ recent: VersionEntry[]; count: number }> {
  const recent: VersionEntry[] = [];
  let count = 0;
  for await (const entry of versions) {
    count += 1;
    counter?.found(1);
    seen.add(entry.version);
    if (skip?.has(entry.version)) {
      counter?.done(1); // a committed record is deleting it: nothing to decide
      continue;
    }
    recent.push(entry);
    // Only a version with `window` newer ones after it can be a candidate.
    if (recent.length > window) await classify(recent.shift()!);
  }
  return { recent, count };
}

export async function planCandidates(
  state: RunState,
  interrupted: Interrupted,
  options: PlanOptions = {},
): Promise<Plan> {
  const { ctx, format, policy, mode, now } = state;
  const { committed, busy } = interrupted;
  const beingDeleted = new Map<string, Set<number>>();
  for (const h of committed) addAll(beingDeleted, h.record.branch, activeVersions(h.record));
  const retainedFiles = options.retainedFiles ?? new Set<string>();
  const candidates: BranchCandidates[] = [];
  const perRecord = Math.max(1, state.options.maxVersionsPerRecord ?? 10_000);
  const emit = async (batch: BranchCandidates) => {
    if (options.sink) await options.sink(batch);
    else candidates.push(batch);
  };
  const listed = new Map<string, VersionSet>();
  const branches = await format.listBranches(ctx);
  const selected = new Set(policy.branches ?? branches);
  const window = Math.max(1, policy.retainVersions ?? 1);
  // Progress (not for the tag check's pass): versions listed, each done once decided and,
  // when the run needs it, its manifest read (keepFilesOf, Retirer.read).
  const counter = options.checkOnly ? undefined : state.planProgress;
  counter?.start();
  const retain = async (entry: VersionEntry, reason: RetainReason) => {
    if (options.checkOnly) return;
    state.stats.retained.push({ branch: entry.branch, version: entry.version, reason });
    await keepFilesOf(state, retainedFiles, entry.branch, entry.version);
  };
  // `recover` reads manifests only when committed work needs the retained-file set.
  const planBranches = mode === "recover" && committed.length === 0 ? [] : branches;
  for (const branch of planBranches) {
    const mine: VersionEntry[] = [];
    const seen = new VersionSet();
    listed.set(branch, seen);
    const classify = async (entry: VersionEntry) => {
      if (mode !== "recover" && selected.has(branch) && !busy.get(branch)?.has(entry.version)) {
        if (policyRetires(policy, entry, now)) {
          if (tooRecent(policy.minVersionAgeMs, entry, now)) await retain(entry, "recent");
          else {
            mine.push(entry);
            if (mine.length >= perRecord) await emit({ branch, entries: mine.splice(0) });
          }
          return;
        }
        await retain(entry, "policy");
      } else {
        await retain(entry, busy.get(branch)?.has(entry.version) ? "retiring" : "policy");
      }
    };
    const { recent } = await classifyListed(
      format.listVersions(ctx, branch),
      seen,
      beingDeleted.get(branch),
      window,
      classify,
      counter,
    );
    for (const [i, entry] of recent.entries()) {
      await retain(entry, i === recent.length - 1 ? "latest" : "policy");
    }
    if (mine.length > 0) await emit({ branch, entries: mine.splice(0) });
  }
  counter?.listed();
  await state.pool.drain();
  return { candidates, retainedFiles, listed };
}

/** Cleanup 4 tag check: must fail before any new retirement write (one record's candidates). */
export async function refuseTaggedCandidates(
  state: RunState,
  { branch, entries }: BranchCandidates,
): Promise<void> {
  const refs = await state.referenceCensus(
    branch,
    entries.map((e) => e.version),
  );
  const tagged = [...refs].filter(([, reason]) => reason === "tag").map(([v]) => v);
  if (tagged.length > 0) {
    throw holdfastError(
      "refused",
      "cleanup",
      `policy would retire tagged version(s) ${tagged.join(", ")} of ${branch}`,
      {
        code: TAGGED_OLD_VERSIONS,
        hint: "delete the tags or turn off errorIfTaggedOldVersions",
      },
    );
  }
}
