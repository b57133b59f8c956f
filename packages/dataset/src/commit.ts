import {
  encodeJson,
  HoldfastError,
  holdfastError,
  isHoldfastError,
  putIfAbsent,
  validateKey,
} from "@holdfast/conditional-store";
import { type ProtocolContext, type VersionRef, validateName } from "@holdfast/protocol";
import { parseStored, resolverOptions } from "@holdfast/protocol/internal";
import {
  type CommitCover,
  coverReusedFiles,
  MAX_RETIREMENT_WAIT_MS,
  markCommitted,
  reusedFiles,
} from "./commit-intent.js";
import { tryReadManifest, validateSignal } from "./dataset.js";
import { advanceHeadHint, canProbe, type ProbeHint, readHeadHint, settleProbe } from "./heads.js";
import { latestFromHint, latestVersionFrom } from "./latest.js";
import { isDataKey, manifestKey, parseManifestKey, validateVersion } from "./layout.js";
import { type DataFile, type Manifest, ManifestSchema } from "./manifest.js";

/** What a successful commit returns. */
export interface CommitResult {
  readonly branch: string;
  readonly version: number;
  readonly key: string;
  readonly etag: string;
  readonly txnId: string;
}

export interface CommitOptions {
  readonly branch: string;
  readonly files: readonly DataFile[];
  /**
   * Lineage of the new version. Omitted: the branch's latest version at commit time (or
   * `null` for a branch's first version). A fork's first version names its parent branch's version.
   */
  readonly parent?: VersionRef | null;
  /** Most definite conflicts to absorb by moving to the next version number. @default 16 */
  readonly maxAttempts?: number;
  readonly signal?: AbortSignal;
  /**
   * Versions whose manifests the reused files were read from (a restore, a revert, a
   * manifest-only fork). Each must still exist when the commit checks, after writing its
   * intent. Files not written by `writeDataFile` within `FRESH_FILE_WINDOW_MS` are
   * reused: the commit covers them with an intent whether or not sources are given.
   * Without sources, reused files named by the version the commit builds on (`parent`, or
   * the branch's latest) count as read from it, which a cleanup never retires while it is
   * the latest: an append of the latest's files plus new ones needs no sources.
   */
  readonly sources?: readonly VersionRef[];
  /**
   * How long a commit that reuses files waits for a committed retirement that may delete
   * them (its files come from a version being retired, or from no version it can check)
   * before it refuses with `RetirementInProgressError`. Injected clock and sleep; at most
   * `MAX_RETIREMENT_WAIT_MS`. @default 0 (refuse at once)
   */
  readonly retirementWaitMs?: number;
}

/**
 * Commits a new version: create-only put of the next manifest `_versions/{branch}/{n}.json`.
 * Only a definite conflict (another writer's manifest, seen or answered without any lost
 * answer before it) moves on to n+1. A re-issue that meets a conflict is decided by the
 * stored manifest's txnId; when it cannot be decided the commit is thrown as `unresolved`
 * (never as failed: its files may be needed by a landed commit). Invariants 3 and 4, C8.
 * The steps are docs/protocol.md §2, Commit 2–9 (Commit 1 is `writeDataFile`).
 */
export async function commitVersion(
  ctx: ProtocolContext,
  options: CommitOptions,
): Promise<CommitResult> {
  const checked = checkCommitOptions(ctx, options); // Commit 2 check
  // Commit 3 intent, 4 records, 5 sources: files this commit did not write itself are
  // covered by an intent until the manifest lands.
  const reused = reusedFiles(ctx, options.files);
  const cover =
    reused.length > 0 || checked.sources.length > 0
      ? await coverReusedFiles(ctx, {
          txnId: checked.txnId,
          branch: checked.branch,
          reused,
          sources: checked.sources,
          parent: checked.parent,
          retirementWaitMs: checked.retirementWaitMs,
          signal: checked.signal,
        })
      : undefined;
  // From here a manifest naming these handles may land: a later commit of them is reuse.
  markCommitted(options.files);
  try {
    const result = await putNextManifest(ctx, { ...checked, cover }); // Commit 6 hint … 8 advance
    // Commit 9 release; a leftover intent expires and is swept.
    await cover?.release().catch(() => {});
    return result;
  } catch (error) {
    // Commit 9 release on a definite failure. An unknown outcome keeps the intent: the
    // manifest may still land and needs it.
    if (cover && !isHoldfastError(error, "unresolved")) await cover.release().catch(() => {});
    throw error;
  }
}

/** A commit's inputs once checked (Commit 2), shared by its later steps. */
interface CheckedCommit {
  readonly branch: string;
  readonly files: readonly DataFile[];
  /** The caller's `parent`; `undefined`: the branch's latest at commit time. */
  readonly parent: VersionRef | null | undefined;
  readonly sources: readonly VersionRef[];
  readonly maxAttempts: number;
  readonly retirementWaitMs: number;
  readonly txnId: string;
  readonly signal: AbortSignal | undefined;
}

/** What the manifest put needs: the checked commit and the intent covering its reused files. */
interface ManifestPut extends CheckedCommit {
  readonly cover: CommitCover | undefined;
}

/**
 * Commit 2 check: every input validated before any request, and the commit's txnId drawn.
 */
function checkCommitOptions(ctx: ProtocolContext, options: CommitOptions): CheckedCommit {
  const branch = validateName(options.branch, "branch");
  const files = validateFiles(options.files);
  const parent = options.parent === undefined ? undefined : validateParent(options.parent);
  const maxAttempts = options.maxAttempts ?? 16;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw holdfastError("invalid-input", "commit", `maxAttempts must be a positive integer`);
  }
  validateSignal(options.signal, "commit");
  const sources = validateSources(options.sources);
  const retirementWaitMs = options.retirementWaitMs ?? 0;
  if (
    !Number.isSafeInteger(retirementWaitMs) ||
    retirementWaitMs < 0 ||
    retirementWaitMs > MAX_RETIREMENT_WAIT_MS
  ) {
    throw holdfastError(
      "invalid-input",
      "commit",
      `retirementWaitMs must be an integer from 0 to ${MAX_RETIREMENT_WAIT_MS}`,
      { code: "INVALID_WAIT" },
    );
  }
  const txnId = ctx.ids.next();
  return {
    branch,
    files,
    parent,
    sources,
    maxAttempts,
    retirementWaitMs,
    txnId,
    signal: options.signal,
  };
}

/**
 * Commit 6 hint → 7 manifest → 8 advance, until a manifest of this commit is the branch's
 * latest: read the head hint, put the version after it (or after the latest listed from
 * it), then move the hint on. A definite conflict tries the next number, at most
 * `maxAttempts` times.
 */
async function putNextManifest(ctx: ProtocolContext, put: ManifestPut): Promise<CommitResult> {
  const { branch, txnId, signal } = put;
  // Commit 6 hint.
  const hint = await readHeadHint(ctx, branch, signal);
  let current = hint; // the hint the closing write compares against
  // Above a hint with a retired floor the next number is tried straight away; otherwise
  // (and after that try meets a version) the latest is listed from the hint.
  let probe: ProbeHint | null = canProbe(ctx.store, hint) ? hint : null;
  // The latest version listed from the hint, and the floor a closing hint write carries:
  // the hint's own, or (none, or the search started over) one below the latest, since every
  // deletion so far is below the latest version (cleanup keeps it).
  const search = async (): Promise<{ latest: number | null; floor: number }> => {
    const found = await latestFromHint(ctx, branch, hint, signal);
    const floor =
      found.atOrAboveHint && hint?.retiredFloor != null
        ? hint.retiredFloor
        : Math.max(0, (found.latest ?? 1) - 1);
    return { latest: found.latest, floor };
  };
  let { latest, floor } = probe
    ? { latest: probe.version as number | null, floor: probe.retiredFloor }
    : await search();

  for (let attempt = 0; attempt < put.maxAttempts; attempt += 1) {
    const version = (latest ?? 0) + 1;
    validateVersion(version);
    const manifest = manifestOf(ctx, put, version, latest);
    const key = manifestKey(branch, version);
    put.cover?.assertOpen();
    // Commit 7 manifest.
    const etag = await putManifest(ctx, key, manifest, signal);
    if (etag !== undefined && probe) {
      // Commit 8 advance, for a number taken above the hint without listing.
      const settled = await settleProbe(ctx, branch, version, probe).catch((error: unknown) => {
        throw unresolvedCommit(key, txnId, error);
      });
      probe = null;
      if (!settled.fresh) {
        current = settled.hint;
        // Our manifest landed; list to see whether it is the latest. If a version sits
        // above it, the number had been retired under a lagging hint: the manifest is an
        // old version nobody builds on, and the commit goes again above the latest.
        const above = await latestVersionFrom(ctx, branch, version, signal).catch(
          (error: unknown) => {
            throw unresolvedCommit(key, txnId, error);
          },
        );
        if (above !== null && above > version) {
          latest = above;
          floor = Math.max(settled.hint?.retiredFloor ?? 0, above - 1);
          continue;
        }
      }
      return { branch, version, key, etag, txnId };
    }
    if (etag !== undefined) {
      // Commit 8 advance.
      await advanceHeadHint(ctx, branch, version, floor, current);
      return { branch, version, key, etag, txnId };
    }
    if (probe) {
      // The hint lags (a commit whose hint write failed): list from it.
      probe = null;
      ({ latest, floor } = await search());
      continue;
    }
    // Definite conflict: another writer holds version n. Try n+1.
    latest = version;
  }
  throw holdfastError(
    "conflict",
    "commit",
    `commit on ${branch} lost ${put.maxAttempts} races in a row`,
    {
      code: "COMMIT_CONTENDED",
      hint: "too many concurrent writers on this branch; retry later",
    },
  );
}

/** The manifest of `version`: a defaulted parent is the latest version below it. */
function manifestOf(
  ctx: ProtocolContext,
  put: ManifestPut,
  version: number,
  latest: number | null,
): Manifest {
  const parent =
    put.parent !== undefined
      ? put.parent
      : latest === null
        ? null
        : { branch: put.branch, version: latest };
  return {
    schema: 1,
    branch: put.branch,
    version,
    parent,
    files: put.files.map((f) => ({ key: f.key, size: f.size })),
    txnId: put.txnId,
    committedAt: new Date(ctx.clock.now()).toISOString(),
  };
}

/**
 * Create-only put of one manifest through the resolver. Resolves to its ETag when the
 * stored manifest is ours (a read-back's txnId decides, whatever its bytes), `undefined`
 * on a definite conflict; an unknown outcome is thrown as {@link UnresolvedCommitError}.
 */
async function putManifest(
  ctx: ProtocolContext,
  key: string,
  manifest: Manifest,
  signal: AbortSignal | undefined,
): Promise<string | undefined> {
  let outcome: Awaited<ReturnType<typeof putIfAbsent>>;
  try {
    outcome = await putIfAbsent(ctx.store, key, encodeJson(manifest), resolverOptions(ctx, signal));
  } catch (error) {
    if (isHoldfastError(error, "unresolved")) throw unresolvedCommit(key, manifest.txnId, error);
    throw error;
  }
  if (outcome.status === "applied") return outcome.etag;
  return outcome.current && tryParseManifest(outcome.current.body)?.txnId === manifest.txnId
    ? outcome.current.etag
    : undefined;
}

/**
 * Decides an earlier commit whose outcome was unresolved: reads the manifest at
 * (branch, version) and compares its txnId. `absent` means it has not landed (yet).
 */
export async function checkCommit(
  ctx: ProtocolContext,
  branch: string,
  version: number,
  txnId: string,
): Promise<"committed" | "other" | "absent"> {
  const record = await tryReadManifest(ctx, branch, version);
  if (!record) return "absent";
  return record.manifest.txnId === txnId ? "committed" : "other";
}

/**
 * A commit whose outcome stayed unknown (kind `unresolved`, code `COMMIT_UNRESOLVED`). It
 * names the version and txnId, so {@link checkCommit} can decide it later; until then none
 * of its files may be deleted (invariant 4).
 */
export class UnresolvedCommitError extends HoldfastError {
  readonly branch: string;
  readonly version: number;
  readonly txnId: string;

  constructor(branch: string, version: number, key: string, txnId: string, cause: unknown) {
    super(`commit of ${key} (txnId ${txnId}) has an unknown outcome`, {
      kind: "unresolved",
      operation: "commit",
      key,
      precondition: { ifNoneMatch: "*" },
      code: "COMMIT_UNRESOLVED",
      cause,
      hint: `the manifest may have landed: decide with checkCommit(ctx, "${branch}", ${version}, "${txnId}") before deleting any of its files`,
    });
    this.branch = branch;
    this.version = version;
    this.txnId = txnId;
  }
}

// --- utils ---

function tryParseManifest(body: Uint8Array): Manifest | null {
  try {
    return parseStored(ManifestSchema, body, "", "commit");
  } catch {
    return null;
  }
}

function validateFiles(files: unknown): DataFile[] {
  if (!Array.isArray(files)) {
    throw holdfastError("invalid-input", "commit", "files must be an array of { key, size }");
  }
  const seen = new Set<string>();
  return files.map((file: unknown, i) => {
    const f = file as Partial<DataFile> | null;
    const bad = (why: string) =>
      holdfastError("invalid-input", "commit", `files[${i}] ${why}`, {
        key: typeof f?.key === "string" ? f.key : undefined,
        code: "INVALID_FILE",
      });
    if (typeof f !== "object" || f === null) throw bad("is not an object");
    if (typeof f.key !== "string" || !isDataKey(f.key)) throw bad("key must be under data/");
    validateKey(f.key, "commit");
    if (typeof f.size !== "number" || !Number.isSafeInteger(f.size) || f.size < 0) {
      throw bad("size must be a non-negative integer");
    }
    if (seen.has(f.key)) throw bad("names a file twice");
    seen.add(f.key);
    return { key: f.key, size: f.size };
  });
}

function validateSources(sources: unknown): VersionRef[] {
  if (sources === undefined) return [];
  if (!Array.isArray(sources)) {
    throw holdfastError(
      "invalid-input",
      "commit",
      "sources must be an array of { branch, version }",
    );
  }
  return sources.map((s: unknown) => {
    const ref = validateParent(s);
    if (ref === null) throw holdfastError("invalid-input", "commit", "a source cannot be null");
    return ref;
  });
}

function validateParent(parent: unknown): VersionRef | null {
  if (parent === null) return null;
  if (typeof parent !== "object") {
    throw holdfastError("invalid-input", "commit", "parent must be { branch, version } or null");
  }
  const p = parent as Partial<VersionRef>;
  return { branch: validateName(p.branch, "branch"), version: validateVersion(p.version) };
}

function unresolvedCommit(key: string, txnId: string, cause: unknown): UnresolvedCommitError {
  const parsed = parseManifestKey(key)!;
  return new UnresolvedCommitError(parsed.branch, parsed.version, key, txnId, cause);
}
