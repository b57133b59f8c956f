import { decodeJson, holdfastError, listAll } from "@holdfast/conditional-store";
import { COMMIT_INTENT_PREFIX, type VersionEntry } from "@holdfast/dataset";
import { CommitIntentSchema } from "@holdfast/dataset/internal";
import { precisionIntervalMs, truncSec } from "@holdfast/protocol";
import {
  cancelReplaced,
  isRetiredManifestRewritten,
  RetiredManifestRewrittenError,
  type RetirementHandle,
} from "@holdfast/retirement";
import type { Plan } from "./plan.js";
import { VersionSet } from "./ranges.js";
import type { RunState } from "./run-state.js";
import { type RetiredManifestCursor, RetiredManifests } from "./spill.js";

/** What the last look before deletion found. */
export interface LateCommits {
  /** Intents past their bound: a crashed writer's leftovers, removed by the sweep. */
  readonly expiredIntents: string[];
  /**
   * Versions whose manifest the last look listed, per branch: after every commit and
   * before any deletion, so a version of a committed record missing here had its manifest
   * deleted by an earlier run (which deletes a version's data files before its manifest).
   * The deletion reads nothing more of it. `undefined` when the last look did not run.
   */
  readonly present?: ReadonlyMap<string, VersionSet> | undefined;
}

/**
 * Cleanup 6 last look (docs/protocol.md §6), before any deletion, AFTER every retirement of this
 * run is committed (docs/protocol.md §2.5): R(commit intents), then R(manifests added since the
 * plan, on every branch, new branches included). Every data file a live intent or such a manifest
 * names joins the retained set, so neither the retirement deletions nor the orphan sweep can remove
 * a file a commit in flight (or just landed) names. Intents are read first: an intent is removed
 * only after its manifest landed, so whatever the order of events, one of the two reads sees it.
 */
export async function protectLateCommits(
  state: RunState,
  plan: Plan,
  committed: RetirementHandle[],
): Promise<LateCommits> {
  const { ctx, format, now } = state;
  const expiredIntents: string[] = [];
  const look = state.stats.lastLook;
  const keep = (key: string) => {
    if (plan.retainedFiles.has(key)) return;
    plan.retainedFiles.add(key);
    look.filesKept += 1;
  };
  // 1. Commit intents (fail-closed: an unreadable intent stops the run).
  for await (const meta of listAll(ctx.store, COMMIT_INTENT_PREFIX)) {
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // removed since the listing: its manifest landed (read below) or it failed
    let intent: ReturnType<typeof CommitIntentSchema.parse>;
    try {
      intent = CommitIntentSchema.parse(decodeJson(got.body));
    } catch (cause) {
      throw holdfastError("invalid-input", "cleanup", `commit intent ${meta.key} is unreadable`, {
        key: meta.key,
        code: "MALFORMED_OBJECT",
        cause,
        hint: "inspect the object; cleanup deletes nothing while it cannot read every intent",
      });
    }
    const expiresAt =
      truncSec(got.lastModified) +
      intent.boundMs +
      precisionIntervalMs(ctx.store.capabilities.timestampPrecisionMs);
    // `now` was probed at the start of the run: judging expiry by it keeps more alive.
    if (truncSec(now) > expiresAt) {
      expiredIntents.push(meta.key);
      continue;
    }
    look.intents += 1;
    for (const file of intent.files) keep(file);
  }
  // 2. Manifests added since the plan, on every branch (new branches included), and
  // manifests the committed records (this run's and recovered ones) retire whose key now
  // holds another object (ETag). The listing is the one the last look makes anyway; the
  // reads wait until it is complete, so a refused manifest cannot stop the run before the
  // replaced versions are cancelled.
  const retiring = new RetiringLookup(state, committed);
  const reads: { branch: string; version: number; replaced?: Retiring }[] = [];
  const replaced = new Map<string, Map<number, string>>();
  const present = new Map<string, VersionSet>();
  try {
    for (const branch of await format.listBranches(ctx)) {
      const listed = new VersionSet();
      present.set(branch, listed);
      await lookAtBranch(state, branch, plan.listed.get(branch), listed, retiring, {
        reads,
        replaced,
      });
    }
  } finally {
    await retiring.close();
  }
  // The recorded manifest of a replaced version is gone and the one present is not the
  // record's to retire: the version is cancelled in its committed record at once, before
  // its new manifest is read, so it is acquirable even if the format refuses that manifest
  // (docs/protocol.md §5.5).
  // A record whose deletion began cancels nothing: the run stops naming the version
  // (RETIRED_MANIFEST_REWRITTEN), once every other record's cancellations are written.
  let rewritten: unknown;
  for (const [recordKey, seenEtags] of replaced) {
    try {
      if (state.dryRun) refuseRewritten(state, committed, recordKey, seenEtags);
      else await cancelInRecord(state, committed, recordKey, seenEtags);
    } catch (error) {
      if (!isRetiredManifestRewritten(error)) throw error;
      rewritten ??= error;
    }
  }
  if (rewritten !== undefined) throw rewritten;
  for (const { branch, version, replaced: own } of reads) {
    await state.pool.run(async () => {
      // A manifest the format refuses stops the run here, before any deletion: the
      // retained set would be incomplete without its files.
      const manifest = await format.readManifest(ctx, branch, version);
      if (own) {
        state.stats.retained.push({ branch, version, reason: "changed" });
        // The deletion sees the mismatch (a plan's record, never rewritten) and reads nothing.
        own.manifests.replace(version, manifest);
      } else if (manifest) look.lateManifests += 1;
      for (const file of manifest?.files ?? []) keep(file.key);
    });
  }
  await state.pool.drain();
  return { expiredIntents, present };
}

/**
 * The last look's listing of one branch: every version is noted in `listed`; a version a
 * committed record retires whose manifest is now another object (ETag) is `replaced` and
 * read; a version the plan did not list (`seen`) is read. Its own function: the loop is
 * resumed once per version, which makes it hot for the optimizing compiler, and a small
 * function costs little to compile.
 */
async function lookAtBranch(
  state: RunState,
  branch: string,
  seen: VersionSet | undefined,
  listed: VersionSet,
  retiring: RetiringLookup,
  found: {
    reads: { branch: string; version: number; replaced?: Retiring }[];
    replaced: Map<string, Map<number, string>>;
  },
): Promise<void> {
  const { reads, replaced } = found;
  for await (const entry of state.format.listVersions(state.ctx, branch)) {
    listed.add(entry.version);
    const own = await retiring.get(branch, entry);
    if (own && own.etag !== entry.etag) {
      const seenEtags = replaced.get(own.recordKey) ?? new Map<number, string>();
      replaced.set(own.recordKey, seenEtags.set(entry.version, entry.etag));
      reads.push({ branch, version: entry.version, replaced: own });
      continue;
    }
    if (!seen?.has(entry.version)) reads.push({ branch, version: entry.version });
  }
}

/**
 * The end of Cleanup 2 recover, before the plan reads any manifest: the versions the recovered
 * committed records retire whose manifest key now holds another object (ETag) are cancelled in
 * their records (`cancelReplaced`), as the last look does (docs/protocol.md §5.5). The plan reads
 * every manifest it keeps, so a manifest the format refuses anywhere (another version, another
 * branch) stops the run before its last look: without this step a replaced version stayed refused
 * to leases until every refusal of the dataset was gone. One listing of each branch such a record
 * retires versions of (1 LIST page per 1,000 versions), only when committed records were recovered;
 * nothing is read. A plan writes nothing: its last look reports what the run would do.
 */
export async function cancelReplacedBeforeReads(
  state: RunState,
  committed: RetirementHandle[],
): Promise<void> {
  if (state.dryRun || committed.length === 0) return;
  const byBranch = new Map<string, Map<number, { recordKey: string; etag: string }>>();
  for (const handle of committed) {
    const { branch } = handle.record;
    const versions = byBranch.get(branch) ?? new Map();
    byBranch.set(branch, versions);
    for (const v of handle.record.versions) {
      if (!v.cancelled) versions.set(v.version, { recordKey: handle.key, etag: v.manifestEtag });
    }
  }
  for (const [branch, versions] of byBranch) {
    const replaced = new Map<string, Map<number, string>>();
    for await (const entry of state.format.listVersions(state.ctx, branch)) {
      const own = versions.get(entry.version);
      if (!own || own.etag === entry.etag) continue;
      const seen = replaced.get(own.recordKey) ?? new Map<number, string>();
      replaced.set(own.recordKey, seen.set(entry.version, entry.etag));
    }
    for (const [recordKey, seen] of replaced) {
      await cancelInRecord(state, committed, recordKey, seen);
    }
  }
}

/** A version a committed record retires, by manifest key. */
interface Retiring {
  readonly recordKey: string;
  /** The recorded manifest identity. */
  readonly etag: string;
  /** Manifests the deletion uses for the record (read before the drain, or after this look). */
  readonly manifests: RetiredManifests;
}

/**
 * Cancels the replaced versions of one committed record (`cancelReplaced`, an if-match
 * rewrite) and puts the record as written in `committed`: the deletion then skips them and
 * finalize leaves their leases. A record left with nothing to retire is cancelled: deleted.
 */
async function cancelInRecord(
  state: RunState,
  committed: RetirementHandle[],
  recordKey: string,
  seen: Map<number, string>,
): Promise<void> {
  const at = committed.findIndex((h) => h.key === recordKey);
  if (at < 0) return;
  const after = await cancelReplaced(state.ctx, recordKey, seen, {
    handle: committed[at],
    manifestKey: (branch, version) => state.format.manifestKey(branch, version),
  });
  for (const version of seen.keys()) {
    state.stats.warnings.push(
      `${committed[at]!.record.branch}@${version}: manifest replaced since it was drained; cancelled in ${recordKey}`,
    );
  }
  if (after?.record.state === "committed") {
    committed[at] = after;
    return;
  }
  committed.splice(at, 1);
  await state.retiredManifests.get(recordKey)?.discard();
  state.retiredManifests.delete(recordKey);
  if (after?.record.state === "cancelled") await state.ctx.store.delete(recordKey);
}

/** A plan writes nothing, but meets what the run would: a replaced version of a marked record. */
function refuseRewritten(
  state: RunState,
  committed: readonly RetirementHandle[],
  recordKey: string,
  seen: Map<number, string>,
): void {
  const handle = committed.find((h) => h.key === recordKey);
  if (handle?.record.deletionStartedAt === undefined) return;
  for (const v of handle.record.versions) {
    const now = seen.get(v.version);
    if (!v.cancelled && now !== undefined && now !== v.manifestEtag) {
      throw new RetiredManifestRewrittenError(handle, v.version, now, {
        manifestKey: (branch, version) => state.format.manifestKey(branch, version),
      });
    }
  }
}

/**
 * The versions the committed records retire, with their recorded ETags, looked up as the
 * last look lists them: recovered records' from their version lists (in memory already),
 * this run's from their spills, one pass per record in the listing's ascending order, so
 * the look holds no per-version map of this run's retirements.
 */
class RetiringLookup {
  /** Recovered records: branch -> version -> the recorded ETag. */
  readonly #recovered = new Map<string, Map<number, Retiring>>();
  /** This run's records per branch, with the version range each spilled. */
  readonly #own = new Map<
    string,
    { recordKey: string; manifests: RetiredManifests; cursor: RetiredManifestCursor }[]
  >();

  constructor(
    private readonly state: RunState,
    committed: readonly RetirementHandle[],
  ) {
    for (const handle of committed) {
      const recordKey = handle.key;
      const { branch } = handle.record;
      let manifests = state.retiredManifests.get(recordKey);
      if (manifests) {
        // This run's record: what it retires was read before its drain, with the recorded ETag.
        const own = this.#own.get(branch) ?? [];
        this.#own.set(branch, own);
        own.push({ recordKey, manifests, cursor: manifests.cursor() });
        continue;
      }
      manifests = RetiredManifests.recovered();
      state.retiredManifests.set(recordKey, manifests);
      const versions = this.#recovered.get(branch) ?? new Map<number, Retiring>();
      this.#recovered.set(branch, versions);
      for (const v of handle.record.versions) {
        if (v.cancelled) continue;
        versions.set(v.version, { recordKey, etag: v.manifestEtag, manifests });
      }
    }
  }

  /** The committed record retiring the listed manifest's key, if any. */
  async get(branch: string, entry: VersionEntry): Promise<Retiring | undefined> {
    if (this.state.format.manifestKey(branch, entry.version) !== entry.key) return undefined;
    let found = this.#recovered.get(branch)?.get(entry.version);
    for (const own of this.#own.get(branch) ?? []) {
      if (!own.manifests.covers(entry.version)) continue;
      const read = await own.cursor.get(entry.version);
      // Absent at the read: nothing of it to compare (as before the spill).
      if (read?.manifest) {
        found = { recordKey: own.recordKey, etag: read.manifest.etag, manifests: own.manifests };
      }
    }
    return found;
  }

  async close(): Promise<void> {
    for (const own of [...this.#own.values()].flat()) await own.cursor.close();
  }
}
