import type { MemoryStore } from "@holdfast/conditional-store";
import { decodeJson } from "@holdfast/conditional-store";
import { manifestKey, parseManifestKey, VERSIONS_PREFIX, type VersionRef } from "@holdfast/dataset";
import type { Scheduler } from "./scheduler.js";

const BRANCH = "main";

/**
 * What the run knows about one tag (each tag is mutated by the one tagger that created it,
 * one operation at a time; names are never reused).
 */
export interface TagModel {
  name: string;
  /** Target of the latest create/update that returned success (null: none did). */
  promised: VersionRef | null;
  /** The last operation returned success and none ran since: the canonical must be visible and name `promised`. */
  settled: boolean;
  /**
   * active: may exist; deleting: a deletion returned no success (it may finish later);
   * deleted: a deletion returned success; never: creation definitely failed.
   */
  state: "active" | "deleting" | "deleted" | "never";
}

/** What the run knows about one branch (names are never reused). */
export interface BranchModel {
  name: string;
  /** The fork point: a main version, or a version of another branch (a child branch). */
  fork: VersionRef;
  /** Creation returned success (only then is the fork point promised). */
  created: boolean;
  state: "active" | "deleting" | "deleted" | "never";
  /** Commits on the branch that returned success. */
  commits: number;
}

export interface Protection {
  reader: string;
  branch: string;
  version: number;
  /** Real (scheduler) time before the write that last extended protection was sent. */
  protectedUntil: number;
}

export const show = (ref: VersionRef | null) => (ref ? `${ref.branch}@${ref.version}` : "none");
export const sameRef = (a: VersionRef | null, b: VersionRef | null) =>
  a !== null && b !== null && a.branch === b.branch && a.version === b.version;

/** What the step checker reads: the store, and what the run knows and promised. */
export interface CheckedWorld {
  readonly memory: MemoryStore;
  readonly sched: Scheduler;
  readonly protections: readonly Protection[];
  readonly tags: readonly TagModel[];
  readonly branches: readonly BranchModel[];
  /** Data files of commits reported as definite failures (an entry is removed once reported). */
  readonly failedCommitFiles: string[];
  /** Writes released or applied so far (any actor). */
  writes(): number;
  /**
   * Manifests a breaker replaced with bytes the format refuses, by key: the data files the
   * version's valid manifest names (the version still needs them; a repair puts it back).
   */
  readonly broken: ReadonlyMap<string, { readonly files: readonly string[] }>;
  violate(invariant: 1 | 2 | 3 | 4 | 5 | 7, message: string): void;
}

/**
 * The check run after every step: docs/guarantees.md invariants 1, 2 and 4 against the
 * store, and the newest version of every branch names only files that exist (cleanup never
 * retires a newest version, so a missing file there is a commit that named a deleted file).
 */
export function createStepChecker(world: CheckedWorld): () => Promise<void> {
  const { memory, sched, protections, tags, branches, failedCommitFiles, violate, broken } = world;
  const manifestCache = new Map<string, string[]>(); // key@etag -> data files
  /** What of a version is gone (its manifest, or a data file it names), or null. */
  const missingPart = async (version: number, branch = BRANCH): Promise<string | null> => {
    const files = await manifestFiles(manifestKey(branch, version));
    if (!files) return "its manifest";
    for (const file of files) if (!(await memory.head(file))) return `data file ${file}`;
    return null;
  };
  /** The data files a stored manifest names (parsed once per ETag), or null when it is gone. */
  async function manifestFiles(key: string): Promise<readonly string[] | null> {
    const meta = await memory.head(key);
    if (!meta) return null;
    // Replaced by a breaker: the version needs the files of the manifest it replaced.
    const replaced = broken.get(key);
    if (replaced) return replaced.files;
    const cacheKey = `${key}@${meta.etag}`;
    let files = manifestCache.get(cacheKey);
    if (!files) {
      const got = await memory.get(key);
      if (!got) return null;
      const parsed = decodeJson(got.body) as { files?: { key: string }[] };
      files = (parsed.files ?? []).map((f) => f.key);
      manifestCache.set(`${key}@${got.etag}`, files);
    }
    return files;
  }
  /**
   * A reference is visible although its deletion returned success (invariant 2) or its
   * creation failed definitely (invariant 4).
   */
  const reappeared = (what: "tag" | "branch", name: string, state: "deleted" | "never") =>
    violate(
      state === "deleted" ? 2 : 4,
      state === "deleted"
        ? `deleted ${what} ${name} is visible again`
        : `${what} ${name} is visible although its creation failed definitely`,
    );
  const brokenNewest = new Set<string>();
  const failuresCheckedAt = { writes: -1, count: 0 };
  let writesChecked = -1;
  /**
   * What the checks below depend on besides the passing of time: the store (it changes only
   * by writes) and the model. Time alone only ends protections, so it never makes a
   * violation appear: a step that changed neither finds exactly what the last one found.
   */
  const fingerprint = () => {
    let f = `${world.writes()}|${failedCommitFiles.length}`;
    for (const p of protections) f += `|${p.protectedUntil}`;
    for (const t of tags) f += `|${t.state}${t.settled ? 1 : 0}${show(t.promised)}`;
    for (const b of branches) f += `|${b.state}${b.created ? 1 : 0}`;
    return f;
  };
  let checkedAt = "";
  const checkStep = async () => {
    if (world.writes() !== writesChecked) {
      writesChecked = world.writes();
      await checkNewest();
    }
    const now = fingerprint();
    if (now === checkedAt) return;
    await checkRest();
    checkedAt = fingerprint();
  };
  const checkNewest = async () => {
    // The newest manifest of every branch names only files that exist: cleanup never
    // retires a newest version, so a missing file there is a commit that named a deleted
    // file (a restore, fork or stalled bulk commit racing a cleanup). Branches whose
    // deletion was attempted are skipped (their teardown removes manifests newest-first).
    const newest = new Map<string, number>();
    for (const key of memory.keys(VERSIONS_PREFIX)) {
      const parsed = parseManifestKey(key);
      if (!parsed) continue;
      if (parsed.version > (newest.get(parsed.branch) ?? 0))
        newest.set(parsed.branch, parsed.version);
    }
    for (const [branch, version] of newest) {
      const model = branches.find((m) => m.name === branch);
      if (model && model.state !== "active") continue;
      const slot = `${branch}@${version}`;
      if (brokenNewest.has(slot)) continue;
      const missing = await missingPart(version, branch);
      if (missing && missing !== "its manifest") {
        brokenNewest.add(slot);
        violate(1, `the newest version ${slot} names a deleted ${missing}`);
      }
    }
  };
  const checkRest = async () => {
    const now = sched.clock.now();
    // Invariant 1: a version under a lease whose TTL has not passed (real time) exists.
    for (const p of protections) {
      if (now >= p.protectedUntil) continue;
      // Deleting a branch removes its incarnation's leases (docs/protocol.md §7): from the moment a
      // deletion is attempted, leases on that branch promise nothing.
      if (p.branch !== BRANCH && branches.find((m) => m.name === p.branch)?.state !== "active") {
        continue;
      }
      const missing = await missingPart(p.version, p.branch);
      if (missing) {
        violate(
          1,
          `${p.reader}'s leased version ${p.branch}@${p.version} lost ${missing} while protected`,
        );
        p.protectedUntil = 0;
      }
    }
    // Invariant 2 (tags): a visible canonical naming the target of a publication that
    // returned success keeps that version intact; a tag whose last operation returned
    // success stays visible at that target; a deleted tag never reappears.
    for (const tag of tags) {
      const got = await memory.get(`_refs/tags/${tag.name}.json`);
      if (tag.state === "deleted" || tag.state === "never") {
        if (got) {
          reappeared("tag", tag.name, tag.state);
          tag.state = "active";
          tag.settled = false;
          tag.promised = null;
        }
        continue;
      }
      if (!got) {
        if (tag.settled) {
          violate(2, `tag ${tag.name} vanished although its last operation succeeded`);
          tag.settled = false;
        }
        continue;
      }
      const target = (decodeJson(got.body) as { target: VersionRef }).target;
      if (tag.settled && !sameRef(target, tag.promised)) {
        violate(
          2,
          `tag ${tag.name} names ${show(target)}, its last success set ${show(tag.promised)}`,
        );
        tag.settled = false;
      }
      if (tag.promised !== null && sameRef(target, tag.promised)) {
        const missing = await missingPart(tag.promised.version, tag.promised.branch);
        if (missing) {
          violate(2, `${show(tag.promised)} of visible tag ${tag.name} lost ${missing}`);
          tag.promised = null;
          tag.settled = false;
        }
      }
    }
    // Invariant 2 (branches): while the reference of a branch whose creation returned
    // success is visible, its fork point keeps manifest and data files; until a deletion
    // is attempted it stays visible; a deleted branch never reappears (reference or manifests).
    let manifestBranches: Set<string> | undefined;
    for (const branch of branches) {
      const visible = (await memory.head(`_refs/branches/${branch.name}.json`)) !== null;
      if (branch.state === "deleted" || branch.state === "never") {
        if (visible) {
          reappeared("branch", branch.name, branch.state);
          branch.state = "active";
          branch.created = false;
        }
        if (branch.state === "deleted") {
          manifestBranches ??= new Set(
            memory.keys(VERSIONS_PREFIX).flatMap((k) => parseManifestKey(k)?.branch ?? []),
          );
          if (manifestBranches.has(branch.name)) {
            violate(2, `deleted branch ${branch.name} has manifests again`);
            branch.state = "active";
            branch.created = false;
          }
        }
        continue;
      }
      if (!branch.created) continue;
      if (!visible) {
        if (branch.state === "active") {
          violate(2, `branch ${branch.name} vanished although created and never deleted`);
          branch.created = false;
        }
        continue;
      }
      const missing = await missingPart(branch.fork.version, branch.fork.branch);
      if (missing) {
        violate(2, `fork point ${show(branch.fork)} of branch ${branch.name} lost ${missing}`);
        branch.created = false;
      }
    }
    // Invariant 4: a commit reported as a definite failure did not land.
    // Manifests change only by writes: rechecked when one ran or a new failure was recorded.
    if (
      failedCommitFiles.length > 0 &&
      (world.writes() !== failuresCheckedAt.writes ||
        failedCommitFiles.length !== failuresCheckedAt.count)
    ) {
      failuresCheckedAt.writes = world.writes();
      failuresCheckedAt.count = failedCommitFiles.length;
      const named = new Set<string>();
      for (const key of memory.keys(VERSIONS_PREFIX)) {
        for (const f of (await manifestFiles(key)) ?? []) named.add(f);
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

  return checkStep;
}
