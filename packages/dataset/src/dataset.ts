import {
  encodeJson,
  HoldfastError,
  holdfastError,
  isHoldfastError,
  listAll,
  type ObjectMeta,
  putIfAbsent,
  validateKey,
  writerPayload,
} from "@holdfast/conditional-store";
import { type CommitCover, coverReusedFiles, reusedFiles } from "./commit-intent.js";
import { type ProtocolContext, resolverOptions } from "./context.js";
import { advanceHeadHint, readHeadHint, type StoredHeadHint } from "./heads.js";
import {
  DATASET_KEY,
  dataKey,
  isDataKey,
  MAX_VERSION,
  manifestKey,
  parseManifestKey,
  VERSIONS_PREFIX,
  validateVersion,
  versionsPrefix,
} from "./layout.js";
import {
  type DataFile,
  type DatasetInfo,
  DatasetInfoSchema,
  type Manifest,
  ManifestSchema,
  type VersionRef,
} from "./manifest.js";
import { DEFAULT_BRANCH, validateName } from "./names.js";
import { parseStored } from "./stored.js";

/**
 * Creates a dataset: create-only put of `_holdfast/dataset.json`. Throws `conflict` when
 * a dataset already exists at this root (its identity is never overwritten).
 */
export async function initDataset(
  ctx: ProtocolContext,
  options: { defaultBranch?: string } = {},
): Promise<DatasetInfo> {
  const defaultBranch = validateName(options.defaultBranch ?? DEFAULT_BRANCH, "branch");
  const datasetId = ctx.ids.next();
  const { writerId, bytes } = writerPayload(
    { schema: 1 as const, format: "holdfast" as const, datasetId, defaultBranch },
    ctx.ids,
  );
  const outcome = await putIfAbsent(ctx.store, DATASET_KEY, bytes, resolverOptions(ctx));
  if (outcome.status === "conflict") {
    throw holdfastError("conflict", "init", `a dataset already exists at ${ctx.store.location}`, {
      key: DATASET_KEY,
      code: "DATASET_EXISTS",
    });
  }
  return { schema: 1, format: "holdfast", datasetId, writerId, defaultBranch };
}

/** Reads and checks the dataset identity; `not-found` when the root holds no dataset. */
export async function openDataset(ctx: ProtocolContext): Promise<DatasetInfo> {
  const got = await ctx.store.get(DATASET_KEY);
  if (!got) {
    throw holdfastError("not-found", "open", `no holdfast dataset at ${ctx.store.location}`, {
      key: DATASET_KEY,
      hint: "run init first, or check the storage URL and prefix",
    });
  }
  return parseStored(DatasetInfoSchema, got.body, DATASET_KEY, "open");
}

/**
 * Writes one immutable data file at a fresh `data/{ulid}.bin` (create-only, resolved).
 * Data files are written before the manifest that names them, so a committed manifest
 * never names a missing file.
 */
export async function writeDataFile(
  ctx: ProtocolContext,
  bytes: Uint8Array,
  options: { signal?: AbortSignal } = {},
): Promise<WrittenDataFile> {
  if (!(bytes instanceof Uint8Array)) {
    throw holdfastError("invalid-input", "writeDataFile", "data file bytes must be a Uint8Array");
  }
  validateSignal(options?.signal, "writeDataFile");
  // Local timer, read before the write is sent: the commit compares it with its own.
  const writtenAtMs = ctx.clock.now();
  const key = dataKey(ctx.ids.next());
  const outcome = await putIfAbsent(ctx.store, key, bytes, resolverOptions(ctx, options.signal));
  if (outcome.status === "conflict") {
    // A fresh ULID key that exists with other bytes: the id source repeated itself.
    throw holdfastError("conflict", "writeDataFile", `data file key ${key} already taken`, {
      key,
      hint: "the id source produced a duplicate id",
    });
  }
  // Not enumerable: the file still compares and serializes as `{ key, size }`; a copy
  // (spread, JSON) loses it and is then treated as reused, which is the safe side.
  return Object.defineProperty({ key, size: bytes.byteLength }, "writtenAtMs", {
    value: writtenAtMs,
    enumerable: false,
  }) as WrittenDataFile;
}

/**
 * A data file as `writeDataFile` returns it: `writtenAtMs` is the writer's local timer
 * before the write was sent. A commit treats such a file as its own (no commit intent)
 * for `FRESH_FILE_WINDOW_MS`; any other file it names is reused and covered.
 */
export interface WrittenDataFile extends DataFile {
  readonly writtenAtMs: number;
}

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
   */
  readonly sources?: readonly VersionRef[];
}

/**
 * Commits a new version: create-only put of the next manifest `_versions/{branch}/{n}.json`.
 * Only a definite conflict (another writer's manifest, seen or answered without any lost
 * answer before it) moves on to n+1. A re-issue that meets a conflict is decided by the
 * stored manifest's txnId; when it cannot be decided the commit is thrown as `unresolved`
 * (never as failed: its files may be needed by a landed commit). Invariants 3 and 4, C8.
 */
export async function commitVersion(
  ctx: ProtocolContext,
  options: CommitOptions,
): Promise<CommitResult> {
  const branch = validateName(options.branch, "branch");
  const files = validateFiles(options.files);
  const explicitParent = options.parent === undefined ? undefined : validateParent(options.parent);
  const maxAttempts = options.maxAttempts ?? 16;
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw holdfastError("invalid-input", "commit", `maxAttempts must be a positive integer`);
  }
  validateSignal(options.signal, "commit");
  const sources = validateSources(options.sources);
  const txnId = ctx.ids.next();
  // Files this commit did not write itself are covered by an intent until the manifest lands.
  const reused = reusedFiles(ctx, options.files);
  const cover =
    reused.length > 0 || sources.length > 0
      ? await coverReusedFiles(ctx, txnId, branch, reused, sources, options.signal)
      : undefined;
  try {
    const result = await commitAttempts(
      ctx,
      options,
      branch,
      files,
      explicitParent,
      maxAttempts,
      txnId,
      cover,
    );
    await cover?.release().catch(() => {}); // a leftover intent expires and is swept
    return result;
  } catch (error) {
    // An unknown outcome keeps the intent: the manifest may still land and needs it.
    if (cover && !isHoldfastError(error, "unresolved")) await cover.release().catch(() => {});
    throw error;
  }
}

async function commitAttempts(
  ctx: ProtocolContext,
  options: CommitOptions,
  branch: string,
  files: DataFile[],
  explicitParent: VersionRef | null | undefined,
  maxAttempts: number,
  txnId: string,
  cover: CommitCover | undefined,
): Promise<CommitResult> {
  const found = await findLatestVersion(ctx, branch, options.signal);
  let latest = found.latest;

  for (let attempt = 0; attempt < maxAttempts; attempt += 1) {
    const version = (latest ?? 0) + 1;
    validateVersion(version);
    const parent =
      explicitParent !== undefined
        ? explicitParent
        : latest === null
          ? null
          : { branch, version: latest };
    const manifest: Manifest = {
      schema: 1,
      branch,
      version,
      parent,
      files: files.map((f) => ({ key: f.key, size: f.size })),
      txnId,
      committedAt: new Date(ctx.clock.now()).toISOString(),
    };
    const key = manifestKey(branch, version);
    cover?.assertOpen();
    let outcome: Awaited<ReturnType<typeof putIfAbsent>>;
    try {
      outcome = await putIfAbsent(
        ctx.store,
        key,
        encodeJson(manifest),
        resolverOptions(ctx, options.signal),
      );
    } catch (error) {
      if (isHoldfastError(error, "unresolved")) throw unresolvedCommit(key, txnId, error);
      throw error;
    }
    // A read-back saw a manifest: its txnId decides whose it is, whatever its bytes.
    const etag =
      outcome.status === "applied"
        ? outcome.etag
        : outcome.current && tryParseManifest(outcome.current.body)?.txnId === txnId
          ? outcome.current.etag
          : undefined;
    if (etag !== undefined) {
      await advanceHeadHint(ctx, branch, version, txnId, found.hint);
      return { branch, version, key, etag, txnId };
    }
    // Definite conflict: another writer holds version n. Try n+1.
    latest = version;
  }
  throw holdfastError(
    "conflict",
    "commit",
    `commit on ${branch} lost ${maxAttempts} races in a row`,
    {
      code: "COMMIT_CONTENDED",
      hint: "too many concurrent writers on this branch; retry later",
    },
  );
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

/** A manifest as stored, with the store's metadata of its object. */
export interface ManifestRecord {
  readonly key: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly manifest: Manifest;
}

/** Reads and zod-parses a manifest; `not-found` when absent, `invalid-input` (MALFORMED_OBJECT) when corrupt. */
export async function readManifest(
  ctx: ProtocolContext,
  branch: string,
  version: number,
): Promise<ManifestRecord> {
  const record = await tryReadManifest(ctx, branch, version);
  if (!record) {
    throw holdfastError(
      "not-found",
      "readManifest",
      `version ${version} of branch ${branch} does not exist`,
      {
        key: manifestKey(branch, version),
        code: "VERSION_NOT_FOUND",
      },
    );
  }
  return record;
}

/** Like {@link readManifest} but `null` when the manifest is absent. */
export async function tryReadManifest(
  ctx: ProtocolContext,
  branch: string,
  version: number,
): Promise<ManifestRecord | null> {
  const key = manifestKey(branch, version);
  const got = await ctx.store.get(key);
  if (!got) return null;
  const manifest = parseStored(ManifestSchema, got.body, key, "readManifest");
  if (manifest.branch !== branch || manifest.version !== version) {
    throw holdfastError("invalid-input", "readManifest", `manifest ${key} names another version`, {
      key,
      code: "MALFORMED_OBJECT",
    });
  }
  return { key, etag: got.etag, lastModified: got.lastModified, manifest };
}

/** One listed version: the manifest object's listing metadata. */
export interface VersionEntry {
  readonly branch: string;
  readonly version: number;
  readonly key: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly size: number;
}

/** Streams a branch's versions in ascending order, one listing page at a time (memory stays flat). */
export async function* listVersions(
  ctx: ProtocolContext,
  branch: string,
  options: { signal?: AbortSignal; startAfterVersion?: number } = {},
): AsyncGenerator<VersionEntry> {
  const prefix = versionsPrefix(branch);
  const startAfter =
    options.startAfterVersion === undefined
      ? undefined
      : manifestKey(branch, options.startAfterVersion);
  for await (const meta of listAll(ctx.store, prefix, { signal: options.signal, startAfter })) {
    const entry = toVersionEntry(meta);
    // Foreign keys under the prefix are not versions; they are never touched.
    if (entry && entry.branch === branch) yield entry;
  }
}

/**
 * The highest version of a branch, or `null` when it has none. Starts at the branch's head
 * hint (1 GET, see `heads.ts`), so the cost does not grow with the branch's length: 1 LIST
 * from the hint when the hint is current, O(log lag) single-key LISTs when it lags far
 * behind, and the full search from version 1 when there is no hint or nothing at or above
 * it. Exact in every case: the listing sees every version at or above its start.
 */
export async function latestVersion(
  ctx: ProtocolContext,
  branch: string,
  options: { signal?: AbortSignal } = {},
): Promise<number | null> {
  return (await findLatestVersion(ctx, branch, options.signal)).latest;
}

/** {@link latestVersion}, with the hint it started from (a commit rewrites it if stale). */
async function findLatestVersion(
  ctx: ProtocolContext,
  branch: string,
  signal?: AbortSignal,
): Promise<{ latest: number | null; hint: StoredHeadHint | null }> {
  validateName(branch, "branch");
  const hint = await readHeadHint(ctx, branch, signal);
  if (hint?.version != null) {
    const latest = await latestVersionFrom(ctx, branch, hint.version, signal);
    if (latest !== null) return { latest, hint };
    // Nothing at or above the hint: the branch lost those versions (deleted and re-created).
  }
  return { latest: await latestVersionFrom(ctx, branch, 1, signal), hint };
}

/**
 * The highest version of a branch that is `from` or above, or `null` when there is none. A
 * range that fits in one listing page costs one LIST; a longer one is searched with
 * single-key listings (`startAfter`), galloping then bisecting: O(log n) requests, exact
 * even with gaps.
 */
export async function latestVersionFrom(
  ctx: ProtocolContext,
  branch: string,
  from: number,
  signal?: AbortSignal,
): Promise<number | null> {
  validateVersion(from);
  const prefix = versionsPrefix(branch);
  const page = await ctx.store.list(prefix, {
    startAfter: from > 1 ? manifestKey(branch, from - 1) : undefined,
    signal,
  });
  let lo: number | null = null;
  for (const meta of page.objects) {
    const parsed = parseManifestKey(meta.key);
    if (parsed?.branch === branch) lo = parsed.version;
  }
  if (page.nextPageToken === undefined) return lo;
  lo ??= await firstVersionAfter(ctx, branch, from - 1);
  if (lo === null) return null;
  // Invariant below: version `lo` exists and no version is above `hi`.
  let step = 1024;
  let hi: number;
  for (;;) {
    const probe = Math.min(lo + step, MAX_VERSION);
    const next = await firstVersionAfter(ctx, branch, probe);
    if (next === null) {
      hi = probe;
      break;
    }
    lo = next;
    step *= 2;
  }
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const next = await firstVersionAfter(ctx, branch, mid);
    if (next === null) hi = mid;
    else lo = next;
  }
  return lo;
}

/** The lowest version above `after` (0: the lowest), skipping foreign keys; `null` if none. */
async function firstVersionAfter(
  ctx: ProtocolContext,
  branch: string,
  after: number,
): Promise<number | null> {
  const prefix = versionsPrefix(branch);
  let startAfter = after >= 1 ? manifestKey(branch, after) : undefined;
  for (;;) {
    const page = await ctx.store.list(prefix, { startAfter, pageSize: 8 });
    for (const meta of page.objects) {
      const parsed = parseManifestKey(meta.key);
      if (parsed?.branch === branch) return parsed.version;
      // Version keys start with a digit: a key past "9" is past every version.
      if ((meta.key[prefix.length] ?? "") > "9") return null;
      startAfter = meta.key;
    }
    if (page.objects.length === 0) return null;
  }
}

/**
 * Names of the branches that have at least one manifest, in key order. Costs one
 * single-key LIST per branch: after each branch it skips past that branch's keys.
 */
export async function listBranchesWithVersions(ctx: ProtocolContext): Promise<string[]> {
  const branches = new Set<string>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await ctx.store.list(VERSIONS_PREFIX, { startAfter, pageSize: 1 });
    const first = page.objects[0];
    if (!first) return [...branches];
    const parsed = parseManifestKey(first.key);
    if (parsed) {
      branches.add(parsed.branch);
      // Version digits sort before "~", so this skips the rest of the branch's folder.
      startAfter = `${versionsPrefix(parsed.branch)}~`;
    } else {
      // A foreign key: step over it alone and keep looking for manifests.
      startAfter = first.key;
    }
  }
}

// --- utils ---

function toVersionEntry(meta: ObjectMeta): VersionEntry | null {
  const parsed = parseManifestKey(meta.key);
  if (!parsed) return null;
  return {
    ...parsed,
    key: meta.key,
    etag: meta.etag,
    lastModified: meta.lastModified,
    size: meta.size,
  };
}

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

/** An optional abort signal must be an AbortSignal (checked before any request). */
export function validateSignal(signal: unknown, operation: string): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw holdfastError("invalid-input", operation, "signal must be an AbortSignal");
  }
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
