import {
  decodeJson,
  encodeJson,
  holdfastError,
  isHoldfastError,
  listAll,
  type ObjectMeta,
  putIfAbsent,
} from "@holdfast/conditional-store";
import { z } from "zod";
import { type ProtocolContext, resolverOptions } from "./context.js";
import { CONTROL_PREFIX, manifestKey } from "./layout.js";
import { type DataFile, UlidSchema, type VersionRef, VersionRefSchema } from "./manifest.js";
import { truncSec } from "./storage-time.js";

/** Commit intents: `_holdfast/commits/{txnId}.json`, one per commit that names files it did not write. */
export const COMMIT_INTENT_PREFIX = `${CONTROL_PREFIX}commits/`;

/**
 * Retirement records live here (`@holdfast/retirement` writes them; a commit only reads
 * their `state`). Kept equal to `RETIREMENT_ROOT` by a test in `@holdfast/cleanup`.
 */
export const RETIREMENT_RECORDS_PREFIX = `${CONTROL_PREFIX}retirement/`;

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
 * before its manifest is listed (docs/protocol.md, "Commits that reuse files").
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
/** Error code: reused files older than {@link UNDECLARED_REUSE_MAX_AGE_MS} with no `sources` named. */
export const COMMIT_SOURCES_REQUIRED = "COMMIT_SOURCES_REQUIRED";

/**
 * With no `sources`, a commit may reuse only files whose storage stamp is at most this much
 * older than its own intent's. Cleanup's orphan grace is at least twice this
 * (`MIN_ORPHAN_GRACE_MS` of `@holdfast/cleanup`, 1 h; a cleanup test keeps it so), so no
 * orphan sweep that missed the intent can delete such a file. An older file may be an
 * orphan past every grace (its source version gone), which only a HEAD of the source
 * reveals: the commit must name it (docs/protocol.md, "Commits that reuse files").
 */
export const UNDECLARED_REUSE_MAX_AGE_MS = 30 * 60 * 1000;

const RecordStateSchema = z.looseObject({
  state: z.string(),
  branch: z.string(),
  versions: z.array(z.looseObject({ version: z.number(), cancelled: z.boolean() })),
});

/** The cover a commit that reuses files holds from before its checks until its manifest landed. */
export interface CommitCover {
  readonly key: string;
  /** Throws `refused` (COMMIT_INTENT_EXPIRED) once half the bound has passed on the local timer. */
  assertOpen(): void;
  /** Removes the intent (its manifest landed, or the commit definitely failed). */
  release(): Promise<void>;
}

/**
 * Files of `files` the commit must cover with an intent: every file not written by
 * `writeDataFile` in this process within {@link FRESH_FILE_WINDOW_MS} (local timer).
 */
export function reusedFiles(ctx: ProtocolContext, files: readonly DataFile[]): DataFile[] {
  const now = ctx.clock.now();
  return files.filter((file) => {
    const writtenAt = (file as { writtenAtMs?: unknown }).writtenAtMs;
    return !(typeof writtenAt === "number" && now - writtenAt < FRESH_FILE_WINDOW_MS);
  });
}

/**
 * The reuse protocol of a commit (docs/protocol.md, "Commits that reuse files"):
 * W(intent) → R(retirement records) → R(sources, files) — then the caller puts the
 * manifest and releases the intent. Refuses (after removing its intent) when a committed
 * retirement exists or a source version or reused file is gone: the manifest is never
 * sent naming a file that may be deleted.
 */
export async function coverReusedFiles(
  ctx: ProtocolContext,
  txnId: string,
  branch: string,
  reused: readonly DataFile[],
  sources: readonly VersionRef[],
  signal?: AbortSignal,
): Promise<CommitCover> {
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
  // Create-only on a fresh key: a conflict means the id source repeated itself.
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
    await refuseIfRetirementCommitted(ctx, sources);
    const heads = await requireSources(ctx, reused, sources);
    if (sources.length === 0 && reused.length > 0) await refuseOldUndeclared(ctx, key, heads);
    cover.assertOpen();
  } catch (error) {
    // Definite refusal: nothing was committed; the intent goes (a leftover expires anyway).
    await cover.release().catch(() => {});
    throw error;
  }
  return cover;
}

/**
 * One LIST of the retirement records (and a GET of each). A committed record refuses the
 * commit when it retires one of the declared sources, or, with no sources declared, in any
 * case (the files may come from any version it retires).
 */
async function refuseIfRetirementCommitted(
  ctx: ProtocolContext,
  sources: readonly VersionRef[],
): Promise<void> {
  for await (const meta of listAll(ctx.store, RETIREMENT_RECORDS_PREFIX)) {
    if (!meta.key.endsWith(".json")) continue;
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // finalized since the listing: its deletions are complete
    let record: z.infer<typeof RecordStateSchema>;
    try {
      record = RecordStateSchema.parse(decodeJson(got.body));
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
    if (record.state !== "committed") continue;
    const retires = (s: VersionRef) =>
      s.branch === record.branch &&
      record.versions.some((v) => v.version === s.version && !v.cancelled);
    if (sources.length === 0 || sources.some(retires)) {
      throw holdfastError(
        "refused",
        "commit",
        `a cleanup is deleting retired versions (${meta.key}); a commit that reuses files waits for it`,
        {
          key: meta.key,
          code: COMMIT_RETIREMENT_IN_PROGRESS,
          hint: "retry once the cleanup has finished (or run `recover`)",
        },
      );
    }
  }
}

/**
 * The guard for reuse without `sources`: the intent's own stamp (one HEAD) is the store's
 * "now" after the intent landed; a reused file stamped more than
 * {@link UNDECLARED_REUSE_MAX_AGE_MS} before it is refused (`refused`,
 * COMMIT_SOURCES_REQUIRED). A cleanup whose last look missed the intent probed its "now"
 * before the intent landed, so it sweeps only files stamped more than its grace (≥ 1 h)
 * before that: never one this check lets through.
 */
async function refuseOldUndeclared(
  ctx: ProtocolContext,
  intentKey: string,
  files: readonly ObjectMeta[],
): Promise<void> {
  const intent = await ctx.store.head(intentKey);
  if (!intent) {
    throw holdfastError("refused", "commit", `commit intent ${intentKey} vanished`, {
      key: intentKey,
      code: COMMIT_INTENT_EXPIRED,
      hint: "retry the commit",
    });
  }
  const floor = truncSec(intent.lastModified.getTime()) - UNDECLARED_REUSE_MAX_AGE_MS;
  const old = files.find((f) => truncSec(f.lastModified.getTime()) < floor);
  if (old) {
    throw holdfastError(
      "refused",
      "commit",
      `${old.key} was written more than ${UNDECLARED_REUSE_MAX_AGE_MS / 60_000} min ago and the commit names no source version`,
      {
        key: old.key,
        code: COMMIT_SOURCES_REQUIRED,
        hint: "pass `sources`: the versions whose manifests the files were read from",
      },
    );
  }
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
