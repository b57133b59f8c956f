import {
  decodeJson,
  encodeJson,
  HoldfastError,
  holdfastError,
  isHoldfastError,
  listAll,
  type ObjectMeta,
  putIfAbsent,
} from "@holdfast/conditional-store";
import {
  type ProtocolContext,
  RETIREMENT_ROOT,
  RetirementState,
  truncSec,
  type VersionRef,
  VersionRefSchema,
} from "@holdfast/protocol";
import {
  CONTROL_PREFIX,
  RetirementRecordState,
  resolverOptions,
  UlidSchema,
} from "@holdfast/protocol/internal";
import { z } from "zod";
import { tryReadManifest } from "./dataset.js";
import { readHeadHint } from "./heads.js";
import { latestFromHint } from "./latest.js";
import { manifestKey } from "./layout.js";
import type { DataFile } from "./manifest.js";

/** Commit intents: `_holdfast/commits/{txnId}.json`, one per commit that names files it did not write. */
export const COMMIT_INTENT_PREFIX = `${CONTROL_PREFIX}commits/`;

/**
 * How long a commit intent counts (storage time from its Last-Modified, plus precision).
 * A commit sends its manifest only while its own local timer, started before the intent
 * write, shows less than half of this; cleanup ignores (and sweeps) an intent past it, so
 * a crashed writer's intent stops mattering (invariant 5).
 */
export const COMMIT_INTENT_BOUND_MS = 10 * 60 * 1000;

/**
 * A data file written by `writeDataFile` counts as written by the commit that names it
 * (no intent needed) while its write was sent less than this long ago on the writer's
 * local timer. The orphan grace floor (`MIN_ORPHAN_GRACE_MS` of `@holdfast/cleanup`, 1 h)
 * exceeds it by far more than any re-issue window, so cleanup cannot sweep such a file
 * before its manifest is listed (docs/protocol.md §2.5).
 */
export const FRESH_FILE_WINDOW_MS = 15 * 60 * 1000;

/** Body of a commit intent (zod, schema 1). */
export const CommitIntentSchema = z.looseObject({
  schema: z.literal(1),
  txnId: UlidSchema,
  branch: z.string(),
  /** Data files the manifest will name that this commit did not write. */
  files: z.array(z.string()),
  /** Versions those files were read from (checked to exist before the manifest is sent). */
  sources: z.array(VersionRefSchema),
  boundMs: z.number().int().positive(),
});
export type CommitIntent = z.infer<typeof CommitIntentSchema>;

/** Key of the intent of commit `txnId`. */
export function commitIntentKey(txnId: string): string {
  return `${COMMIT_INTENT_PREFIX}${txnId}.json`;
}

/** Error code: a committed retirement may be deleting files this commit reuses. */
export const COMMIT_RETIREMENT_IN_PROGRESS = "COMMIT_RETIREMENT_IN_PROGRESS";
/** Error code: a reused file or a source version is gone. */
export const COMMIT_SOURCE_MISSING = "COMMIT_SOURCE_MISSING";
/** Error code: the intent's own bound ran out on the writer's timer before the manifest was sent. */
export const COMMIT_INTENT_EXPIRED = "COMMIT_INTENT_EXPIRED";
/**
 * Error code: reused files older than {@link UNDECLARED_REUSE_MAX_AGE_MS}, no `sources` named,
 * and no version of the head's lineage names them.
 */
export const COMMIT_SOURCES_REQUIRED = "COMMIT_SOURCES_REQUIRED";

/**
 * With no `sources`, a commit may reuse only files whose storage stamp is at most this much
 * older than its own intent's. Cleanup's orphan grace is at least twice this
 * (`MIN_ORPHAN_GRACE_MS` of `@holdfast/cleanup`, 1 h; a cleanup test keeps it so), so no
 * orphan sweep that missed the intent can delete such a file. An older file may be an
 * orphan past every grace (its source version gone), which only a read of the source
 * reveals: the commit must name it, or find it named by the head it builds on or the
 * head's parents (docs/protocol.md §2.5, rule H).
 */
export const UNDECLARED_REUSE_MAX_AGE_MS = 30 * 60 * 1000;

/**
 * Longest `retirementWaitMs` a commit accepts: the wait runs while the commit holds its
 * intent, which must leave time to send the manifest before half the intent's bound.
 */
export const MAX_RETIREMENT_WAIT_MS = 4 * 60 * 1000;

/**
 * Most manifests a commit without sources reads to find its reused files (the head it
 * builds on, then its parents), only while a retirement is committed or for old files.
 */
const LINEAGE_READS = 16;

/** Pauses between the checks of a commit that waits for a retirement (the last one repeats). */
const RETIREMENT_WAIT_PAUSES_MS = [1000, 2000, 4000, 8000, 15_000];

/** A committed retirement record as a commit reads it: its key and what it retires. */
interface CommittedRecord {
  readonly key: string;
  retires(ref: VersionRef): boolean;
}

/**
 * A commit that reuses files refused because a committed retirement may delete them
 * (`refused`, code COMMIT_RETIREMENT_IN_PROGRESS). `record` is the retirement record's key;
 * `source` the version the files come from when the commit knows it (declared, or found in
 * the lineage of the head it builds on) and that record retires it; otherwise `file` is a
 * reused file that no version the commit could check names (docs/protocol.md §2.5).
 */
export class RetirementInProgressError extends HoldfastError {
  /** Key of the committed retirement record that blocks the commit. */
  readonly record: string;
  /** The version being retired that the reused files come from, when the commit knows it. */
  readonly source: VersionRef | undefined;
  /** Otherwise, a reused file no version the commit could check names. */
  readonly file: string | undefined;

  constructor(record: string, blocked: { source: VersionRef } | { file: string }) {
    const what =
      "source" in blocked
        ? `version ${blocked.source.version} of ${blocked.source.branch}, which this commit reuses files of, is being retired (${record})`
        : `a cleanup is deleting retired versions (${record}) and ${blocked.file} is named by no version this commit could check`;
    super(what, {
      kind: "refused",
      operation: "commit",
      key: record,
      code: COMMIT_RETIREMENT_IN_PROGRESS,
      hint:
        "source" in blocked
          ? "read a version that is not being retired (its files are being deleted)"
          : "name `sources` (the versions the files were read from), or retry once the cleanup has finished (or run `recover`)",
    });
    this.record = record;
    this.source = "source" in blocked ? blocked.source : undefined;
    this.file = "source" in blocked ? undefined : blocked.file;
  }
}

/** The cover a commit that reuses files holds from before its checks until its manifest landed. */
export interface CommitCover {
  readonly key: string;
  /** Throws `refused` (COMMIT_INTENT_EXPIRED) once half the bound has passed on the local timer. */
  assertOpen(): void;
  /** Removes the intent (its manifest landed, or the commit definitely failed). */
  release(): Promise<void>;
}

/**
 * Handles from `writeDataFile` that a commit has already sent a manifest naming. Such a
 * file is no longer fresh: an earlier manifest names it, which a cleanup may retire (and
 * delete the file with it) while a second commit naming it is in flight.
 */
const committedHandles = new WeakSet<object>();

/** Records that a manifest naming `files` is being sent: their handles count as reused from now on. */
export function markCommitted(files: readonly DataFile[]): void {
  for (const file of files) committedHandles.add(file);
}

/**
 * Files of `files` the commit must cover with an intent: every file not written by
 * `writeDataFile` in this process within {@link FRESH_FILE_WINDOW_MS} (local timer), and
 * every handle an earlier commit of this process already named.
 */
export function reusedFiles(ctx: ProtocolContext, files: readonly DataFile[]): DataFile[] {
  const now = ctx.clock.now();
  return files.filter((file) => {
    if (committedHandles.has(file)) return true;
    const writtenAt = (file as { writtenAtMs?: unknown }).writtenAtMs;
    return !(typeof writtenAt === "number" && now - writtenAt < FRESH_FILE_WINDOW_MS);
  });
}

/** What the reuse checks (Commit 3 intent → 5 sources) need. */
export interface ReuseCheckOptions {
  /** The commit's id: its intent's key. */
  readonly txnId: string;
  readonly branch: string;
  /** Files the commit did not write itself ({@link reusedFiles}). */
  readonly reused: readonly DataFile[];
  /** Versions the caller declared the reused files were read from. */
  readonly sources: readonly VersionRef[];
  /**
   * The version the commit builds on, when its caller named one (`null`: none). Omitted:
   * the branch's latest version, looked up only when a check needs a source (below).
   */
  readonly parent?: VersionRef | null | undefined;
  /** How long to wait for a committed retirement that blocks the commit. @default 0 */
  readonly retirementWaitMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * The reuse protocol of a commit (docs/protocol.md §2.5), Commit 3 intent → 4 records →
 * 5 sources: W(intent) → R(retirement records) → R(sources, files) — then the caller puts the
 * manifest and releases the intent. Refuses (after removing its intent) when a committed
 * retirement retires a version the files come from, or a source version or reused file is
 * gone: the manifest is never sent naming a file that may be deleted. Without declared
 * sources, the files are checked against the version the commit builds on (its head), and
 * only when a check needs it: while a retirement is committed, or for a file older than
 * {@link UNDECLARED_REUSE_MAX_AGE_MS}. A refusal because of a committed retirement is
 * checked again, every read after the intent, for up to `retirementWaitMs`.
 */
export async function coverReusedFiles(
  ctx: ProtocolContext,
  options: ReuseCheckOptions,
): Promise<CommitCover> {
  const { txnId, branch, reused, sources, signal } = options;
  const key = commitIntentKey(txnId);
  const startedAt = ctx.clock.now();
  const intent: CommitIntent = {
    schema: 1,
    txnId,
    branch,
    files: reused.map((f) => f.key),
    sources: [...sources],
    boundMs: COMMIT_INTENT_BOUND_MS,
  };
  // Commit 3 intent. Create-only on a fresh key: a conflict means the id source repeated itself.
  const outcome = await putIfAbsent(
    ctx.store,
    key,
    encodeJson(intent),
    resolverOptions(ctx, signal),
  );
  if (outcome.status === "conflict") {
    throw holdfastError("conflict", "commit", `commit intent ${key} already exists`, {
      key,
      hint: "the id source produced a duplicate id",
    });
  }
  const cover: CommitCover = {
    key,
    assertOpen() {
      if (ctx.clock.now() - startedAt >= COMMIT_INTENT_BOUND_MS / 2) {
        throw holdfastError(
          "refused",
          "commit",
          `commit ${txnId} held its intent for half its bound; its manifest was not sent`,
          { key, code: COMMIT_INTENT_EXPIRED, hint: "retry the commit" },
        );
      }
    },
    async release() {
      await ctx.store.delete(key);
    },
  };
  try {
    const waitMs = options.retirementWaitMs ?? 0;
    let waited = 0;
    for (let pause = 0; ; pause += 1) {
      try {
        await checkReuse(ctx, key, options);
        break;
      } catch (error) {
        // Bounded twice: by the pauses asked for and by the local timer.
        const next =
          RETIREMENT_WAIT_PAUSES_MS[Math.min(pause, RETIREMENT_WAIT_PAUSES_MS.length - 1)]!;
        if (
          !(error instanceof RetirementInProgressError) ||
          waited + next > waitMs ||
          ctx.clock.now() + next - startedAt > waitMs
        ) {
          throw error;
        }
        waited += next;
        await ctx.sleep(next, signal);
      }
    }
    cover.assertOpen();
  } catch (error) {
    // Definite refusal: nothing was committed; the intent goes (a leftover expires anyway).
    await cover.release().catch(() => {});
    throw error;
  }
  return cover;
}

/**
 * One pass of the checks, every read after W(intent): R(records), then HEAD of the sources
 * and reused files, then (undeclared reuse that needs a source) the head's lineage.
 */
async function checkReuse(
  ctx: ProtocolContext,
  intentKey: string,
  { branch, reused, sources, parent }: ReuseCheckOptions,
): Promise<void> {
  // Commit 4 records.
  const committed = await committedRecords(ctx);
  for (const source of sources) refuseIfRetired(committed, source);
  const heads = await requireSources(ctx, reused, sources); // Commit 5 sources
  if (sources.length > 0 || reused.length === 0) return;
  // No declared source. While a retirement is committed every reused file needs one (it may
  // come from a version being retired); otherwise only files too old for the orphan-sweep
  // argument do (one HEAD of the intent dates them).
  const needy =
    committed.length > 0 ? [...reused] : await oldUndeclared(ctx, intentKey, heads, reused);
  if (needy.length === 0) return;
  const unattributed = new Set(needy.map((f) => f.key));
  // The head and its lineage, newest first: a file named by a manifest read here (after
  // R(records)) that no committed record retires is safe to reuse (rule H). A record that
  // retires a manifest and was finalized before R(records) deleted that manifest first, so
  // it reads as gone here and the walk stops.
  let retiredSeen: { source: VersionRef; record: string } | undefined;
  let at = await headOf(ctx, branch, parent);
  for (let read = 0; at && unattributed.size > 0 && read < LINEAGE_READS; read += 1) {
    const version = await tryReadManifest(ctx, at.branch, at.version).catch(() => null);
    if (!version) break;
    const record = committed.find((r) => r.retires(at!));
    const files = version.manifest.files;
    if (!record) for (const f of files) unattributed.delete(f.key);
    // A version being retired vouches for nothing (its files are being deleted); the first
    // one that names a reused file is the source the refusal names.
    else if (!retiredSeen && files.some((f) => unattributed.has(f.key))) {
      retiredSeen = { source: at, record: record.key };
    }
    at = version.manifest.parent;
  }
  const [file] = unattributed;
  if (file === undefined) return;
  if (retiredSeen) throw new RetirementInProgressError(retiredSeen.record, retiredSeen);
  const blocking = committed[0];
  if (blocking) throw new RetirementInProgressError(blocking.key, { file });
  throw holdfastError(
    "refused",
    "commit",
    `${file} was written more than ${UNDECLARED_REUSE_MAX_AGE_MS / 60_000} min ago, the commit names no source version, and the version it builds on does not name it`,
    {
      key: file,
      code: COMMIT_SOURCES_REQUIRED,
      hint: "pass `sources`: the versions whose manifests the files were read from",
    },
  );
}

/**
 * One LIST of the retirement records and a GET of each: the committed ones (a record
 * finalized since the listing has finished its deletions and is skipped).
 */
async function committedRecords(ctx: ProtocolContext): Promise<CommittedRecord[]> {
  const committed: CommittedRecord[] = [];
  for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
    if (!meta.key.endsWith(".json")) continue;
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // finalized since the listing: its deletions are complete
    let record: RetirementRecordState;
    try {
      record = RetirementRecordState.parse(decodeJson(got.body));
    } catch (cause) {
      throw holdfastError(
        "invalid-input",
        "commit",
        `retirement record ${meta.key} is unreadable`,
        {
          key: meta.key,
          code: "MALFORMED_OBJECT",
          cause,
        },
      );
    }
    if (record.state !== RetirementState.enum.committed) continue;
    const retired = new Set(record.versions.filter((v) => !v.cancelled).map((v) => v.version));
    committed.push({
      key: meta.key,
      retires: (ref) => ref.branch === record.branch && retired.has(ref.version),
    });
  }
  return committed;
}

/** Throws {@link RetirementInProgressError} when a committed record retires `source`. */
function refuseIfRetired(committed: readonly CommittedRecord[], source: VersionRef): void {
  const record = committed.find((r) => r.retires(source));
  if (record) throw new RetirementInProgressError(record.key, { source });
}

/** The version the commit builds on: its named parent, else the branch's latest (GET hint + LIST). */
async function headOf(
  ctx: ProtocolContext,
  branch: string,
  parent: VersionRef | null | undefined,
): Promise<VersionRef | null> {
  if (parent !== undefined) return parent;
  const hint = await readHeadHint(ctx, branch);
  const { latest } = await latestFromHint(ctx, branch, hint);
  return latest === null ? null : { branch, version: latest };
}

/**
 * Reused files stamped more than {@link UNDECLARED_REUSE_MAX_AGE_MS} before the intent: the
 * intent's own stamp (one HEAD) is the store's "now" after the intent landed. A cleanup
 * whose last look missed the intent probed its "now" before the intent landed, so it
 * sweeps only files stamped more than its grace (≥ 1 h) before that: never a younger one.
 */
async function oldUndeclared(
  ctx: ProtocolContext,
  intentKey: string,
  heads: readonly ObjectMeta[],
  reused: readonly DataFile[],
): Promise<DataFile[]> {
  const intent = await ctx.store.head(intentKey);
  if (!intent) {
    throw holdfastError("refused", "commit", `commit intent ${intentKey} vanished`, {
      key: intentKey,
      code: COMMIT_INTENT_EXPIRED,
      hint: "retry the commit",
    });
  }
  const floor = truncSec(intent.lastModified.getTime()) - UNDECLARED_REUSE_MAX_AGE_MS;
  const old = new Set(
    heads.filter((f) => truncSec(f.lastModified.getTime()) < floor).map((f) => f.key),
  );
  return reused.filter((f) => old.has(f.key));
}

/** HEAD of every source manifest and every reused file; any absence refuses. Returns the files' heads. */
async function requireSources(
  ctx: ProtocolContext,
  reused: readonly DataFile[],
  sources: readonly VersionRef[],
): Promise<ObjectMeta[]> {
  const keys = [
    ...sources.map((s) => manifestKey(s.branch, s.version)),
    ...reused.map((f) => f.key),
  ];
  const width = 8;
  const found: ObjectMeta[] = [];
  for (let i = 0; i < keys.length; i += width) {
    const heads = await Promise.all(keys.slice(i, i + width).map((k) => ctx.store.head(k)));
    const missing = heads.indexOf(null);
    if (missing < 0) found.push(...(heads as ObjectMeta[]));
    else {
      const key = keys[i + missing]!;
      throw holdfastError("not-found", "commit", `${key} named by this commit is gone`, {
        key,
        code: COMMIT_SOURCE_MISSING,
        hint: "the version it was read from was retired or deleted; read a current version",
      });
    }
  }
  return found;
}

/** True for an intent error of {@link coverReusedFiles} that left nothing committed. */
export function isDefiniteCoverRefusal(error: unknown): boolean {
  return isHoldfastError(error, "refused", "not-found");
}
