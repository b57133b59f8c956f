import {
  type GetResult,
  HoldfastError,
  holdfastError,
  isHoldfastError,
  isUnresolved,
  putIfAbsent,
  putIfMatch,
  type ResolveOptions,
  writerPayload,
} from "@holdfast/conditional-store";
import type { RetirementState } from "@holdfast/protocol";
import type { RetirementContext } from "./context.js";
import {
  DEFAULT_OWNERSHIP_BOUND_MS,
  decodeRetirementRecord,
  type RetirementRecord,
  retirementKey,
} from "./record.js";

/**
 * A record as this process last saw it. Every transition is an if-match on `etag`, so a
 * handle whose record someone else rewrote (fenced) can no longer move it.
 */
export interface RetirementHandle {
  readonly key: string;
  readonly etag: string;
  readonly record: RetirementRecord;
  /** Last-Modified of the record when it was read (absent right after this process wrote it). */
  readonly lastModified?: Date | undefined;
}

/** One version to drain, with the identity (ETag) of the manifest the cleaner saw. */
export interface DrainCandidate {
  readonly version: number;
  readonly manifestEtag: string;
}

export interface DrainOptions {
  readonly branch: string;
  readonly versions: readonly DrainCandidate[];
  /** ULID of the cleaner run that owns the record. */
  readonly owner: string;
  /** Operation id; also a ULID. @default a fresh id */
  readonly opId?: string | undefined;
  /** How long (storage time, from the record's last write) the drain blocks acquisitions if its owner vanishes. @default 15 min */
  readonly ownershipBoundMs?: number | undefined;
}

/** Version → why it is kept (`lease`, `tag`, `branch-lineage`, `intent`, ...). */
export type RetentionReasons = ReadonlyMap<number, string>;

/**
 * Retirement 2 drain (docs/protocol.md §5): create-only write of a draining record naming the
 * versions and their manifest identities. From here new acquisitions are refused while admitted
 * leases still renew (L1). Costs one request (more only on lost answers).
 */
export async function drain(
  ctx: RetirementContext,
  options: DrainOptions,
): Promise<RetirementHandle> {
  if (options.versions.length === 0) {
    throw holdfastError("invalid-input", "drain", "nothing to drain");
  }
  const bound = options.ownershipBoundMs ?? DEFAULT_OWNERSHIP_BOUND_MS;
  if (!Number.isSafeInteger(bound) || bound <= 0) {
    throw holdfastError("invalid-input", "drain", `invalid ownership bound ${bound}`);
  }
  const seen = new Set<number>();
  for (const v of options.versions) {
    if (!Number.isSafeInteger(v.version) || v.version < 1 || seen.has(v.version)) {
      throw holdfastError("invalid-input", "drain", `invalid or repeated version ${v.version}`);
    }
    if (typeof v.manifestEtag !== "string" || v.manifestEtag === "") {
      throw holdfastError("invalid-input", "drain", `version ${v.version} lacks a manifest ETag`);
    }
    seen.add(v.version);
  }
  const versions = [...options.versions]
    .sort((a, b) => a.version - b.version)
    .map((v) => ({ version: v.version, manifestEtag: v.manifestEtag, cancelled: false }));
  const opId = options.opId ?? ctx.ids.next();
  const key = retirementKey(options.branch, versions[0]!.version, versions.at(-1)!.version, opId);
  const fields: Omit<RetirementRecord, "writerId"> = {
    schema: 1,
    opId,
    owner: options.owner,
    branch: options.branch,
    state: "draining",
    ownershipBoundMs: bound,
    versions,
  };
  const { writerId, bytes } = writerPayload(fields, ctx.ids);
  // Not durable: a power loss that undoes the drain looks like a crash before it
  // (docs/protocol.md §5.10).
  const outcome = await putIfAbsent(ctx.store, key, bytes, resolveOptions(ctx, "draining"));
  if (outcome.status === "conflict") {
    throw holdfastError("conflict", "drain", `retirement record ${key} already exists`, { key });
  }
  return { key, etag: outcome.etag, record: { ...fields, writerId } };
}

export interface TransitionOptions {
  /** Versions to cancel in the same write, with the reason each is kept. */
  readonly cancel?: RetentionReasons | undefined;
  /** New owner (a recovering cleaner taking over). @default the handle's owner */
  readonly owner?: string | undefined;
}

interface WriteOptions extends TransitionOptions {
  /** Marks the record's deletion as begun ({@link startDeletion}); never unset. */
  readonly deletionStartedAt?: string | undefined;
}

/**
 * If-match rewrite marking versions cancelled (kept) with a reason; renewals and
 * acquisitions of those versions succeed again at once. When every version ends up
 * cancelled the record becomes `cancelled` (terminal).
 */
export function cancelVersions(
  ctx: RetirementContext,
  handle: RetirementHandle,
  reasons: RetentionReasons,
): Promise<RetirementHandle> {
  return transition(ctx, handle, handle.record.state, { cancel: reasons });
}

/**
 * Retirement 4 seal: draining → sealed by if-match. Sealing is the renewal cutoff; versions in
 * `options.cancel` (the first lease census) are cancelled in the same write.
 */
export function seal(
  ctx: RetirementContext,
  handle: RetirementHandle,
  options: TransitionOptions = {},
): Promise<RetirementHandle> {
  requireState(handle, ["draining"], "seal");
  return transition(ctx, handle, "sealed", options);
}

/**
 * Retirement 6 commit: sealed → committed by if-match, the irreversible deletion boundary; versions
 * in `options.cancel` (Retirement 5 census 2: leases, then references) are cancelled in the same
 * write. A lost answer that stays unknown throws `unresolved`: the caller must not delete anything
 * until {@link confirmCommit} (or recovery) shows the stored record is this commit.
 */
export function commit(
  ctx: RetirementContext,
  handle: RetirementHandle,
  options: TransitionOptions = {},
): Promise<RetirementHandle> {
  requireState(handle, ["sealed"], "commit");
  return transition(ctx, handle, "committed", options);
}

/**
 * A transition whose outcome stayed unknown after re-issue and read-back (kind
 * `unresolved`). It names the writerId the transition carried, so a later read can tell
 * whether the stored record is this transition (invariant 4).
 */
export class UnresolvedTransitionError extends HoldfastError {
  readonly recordKey: string;
  readonly pendingWriterId: string;
  readonly targetState: RetirementState;

  constructor(key: string, targetState: RetirementState, pendingWriterId: string, cause: unknown) {
    super(`transition of ${key} to ${targetState} has an unknown outcome`, {
      kind: "unresolved",
      operation: targetState,
      key,
      hint: "stop; a later read (confirmCommit or recovery) decides whether it landed",
      cause,
    });
    this.recordKey = key;
    this.pendingWriterId = pendingWriterId;
    this.targetState = targetState;
  }
}

/**
 * After an unresolved commit: reads the record and returns the committed handle only when
 * the stored bytes are the commit this process sent (its writerId); throws `unresolved`
 * while the record still shows the pre-commit state, `conflict` when another writer moved
 * it. Nothing may be deleted before this returns (invariant 4: unknown stays unknown).
 */
export async function confirmCommit(
  ctx: RetirementContext,
  pending: { recordKey: string; pendingWriterId: string },
): Promise<RetirementHandle> {
  const writerId = pending.pendingWriterId;
  const key = pending.recordKey;
  let current: RetirementHandle | null;
  try {
    current = await readRecord(ctx, key);
  } catch (error) {
    // The confirmation read itself lost its answer: still unknown, never a plain failure.
    if (!isHoldfastError(error, "ambiguous", "in-flight")) throw error;
    throw holdfastError("unresolved", "commit", `commit of ${key} is still unknown`, {
      key,
      code: COMMIT_UNRESOLVED,
      hint: "run recovery later (holdfast recover); it resolves the sealed record",
      cause: error,
    });
  }
  if (current && current.record.writerId === writerId) {
    if (current.record.state !== "committed") {
      throw holdfastError("conflict", "commit", `record ${key} is not committed`, {
        key: key,
      });
    }
    return current;
  }
  if (current && current.record.state === "sealed") {
    throw holdfastError("unresolved", "commit", `commit of ${key} is still unknown`, {
      key: key,
      code: COMMIT_UNRESOLVED,
      hint: "run recovery later (holdfast recover); it resolves the sealed record",
    });
  }
  throw holdfastError("conflict", "commit", `record ${key} was moved by another cleaner`, {
    key: key,
  });
}

/**
 * Cancels a draining or sealed record this process owns and deletes it: the in-process
 * drop of a drain (L5). The rewrite to `cancelled` comes first so the delete can be
 * unconditional (RGW ignores If-Match on DELETE, docs/protocol.md §5). A record someone else
 * already moved is left alone. Never touches a committed record.
 */
export async function abandon(ctx: RetirementContext, handle: RetirementHandle): Promise<void> {
  if (handle.record.state === "committed") return;
  if (handle.record.state !== "cancelled") {
    try {
      handle = await transition(ctx, handle, "cancelled", {});
    } catch (error) {
      if (isFenced(error)) return; // someone else owns it now
      throw error;
    }
  }
  await ctx.store.delete(handle.key);
}

/**
 * Fences a stale owner: rewrites the record with fresh bytes (new writerId, new owner) so
 * the old owner's next if-match fails, moving it to `state`. Used by recovery.
 */
export function fence(
  ctx: RetirementContext,
  handle: RetirementHandle,
  state: RetirementState,
  options: TransitionOptions & { owner: string },
): Promise<RetirementHandle> {
  return transition(ctx, handle, state, options);
}

/** Reason recorded for a version cancelled because its manifest key holds another object. */
export const REPLACED_REASON = "changed";

/**
 * committed → committed: cancels the versions of a committed record whose manifest key now
 * holds another object than the one recorded (`seen`: version → ETag at the key now;
 * docs/protocol.md §5.5). The recorded
 * manifest is gone and the one present is not the record's to retire, so the version opens
 * at once, without reading (or parsing) the manifest now there. An if-match rewrite with
 * fresh bytes, reason `changed`; any cleaner may send it (the run that committed, a later
 * run, `recover`), as it only ever cancels what is provably not the record's. A conflict
 * (another cleaner's cancellation) re-reads the record and retries on what it then says.
 * Returns the record as written, or as found when nothing was left to cancel; `null` when
 * it is gone (finalized meanwhile). A record whose every version ends cancelled is
 * `cancelled` (terminal). An unknown outcome throws `unresolved`.
 */
export async function cancelReplaced(
  ctx: RetirementContext,
  key: string,
  seen: ReadonlyMap<number, string>,
  options: {
    readonly handle?: RetirementHandle | undefined;
    /** The manifest key of a version, to name it in a {@link RetiredManifestRewrittenError}. */
    readonly manifestKey?: ((branch: string, version: number) => string) | undefined;
  } = {},
): Promise<RetirementHandle | null> {
  let known = options.handle?.record.versions.length ? options.handle : undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const handle = known ?? (await readRecord(ctx, key));
    known = undefined;
    if (!handle) return null;
    if (handle.record.state !== "committed") return handle;
    const cancel = new Map<number, string>();
    for (const v of handle.record.versions) {
      const now = seen.get(v.version);
      if (!v.cancelled && now !== undefined && now !== v.manifestEtag) {
        cancel.set(v.version, REPLACED_REASON);
      }
    }
    if (cancel.size === 0) return handle;
    // Its deletion began: the version's files may be partly gone, so a manifest written
    // there since does not rescue it. It stays committed (refused to leases) and the run
    // stops naming it. The if-match of every cancellation and of the mark orders the two:
    // a cancellation that lands first is seen by the marker's re-read.
    if (handle.record.deletionStartedAt !== undefined) {
      const version = Math.min(...cancel.keys());
      throw new RetiredManifestRewrittenError(handle, version, seen.get(version)!, options);
    }
    try {
      return await transition(ctx, handle, "committed", { cancel });
    } catch (error) {
      if (!isFenced(error)) throw error;
    }
  }
  throw holdfastError("conflict", "committed", `retirement record ${key} keeps changing`, {
    key,
    code: FENCED_CODE,
    hint: "another cleaner is rewriting it; the next run retries",
  });
}

/** Error code: a manifest of a record whose deletion began was rewritten (another ETag). */
export const RETIRED_MANIFEST_REWRITTEN = "RETIRED_MANIFEST_REWRITTEN";

/**
 * `refused`, code {@link RETIRED_MANIFEST_REWRITTEN}: the key of a version a committed record
 * retires holds another object than the recorded manifest, and the record's deletion had
 * begun (`deletionStartedAt`), so some of the version's files may be deleted. holdfast does
 * not admit it: the version stays committed (leases refused), nothing more is deleted, and
 * the record stays as the anchor (docs/operations.md, "Stuck states"). `key` is the
 * manifest key when known, else the record's.
 */
export class RetiredManifestRewrittenError extends HoldfastError {
  readonly recordKey: string;
  readonly branch: string;
  readonly version: number;
  readonly manifestKey: string | undefined;

  constructor(
    handle: RetirementHandle,
    version: number,
    etag: string,
    options: { readonly manifestKey?: ((branch: string, version: number) => string) | undefined },
  ) {
    const { branch } = handle.record;
    const manifestKey = options.manifestKey?.(branch, version);
    super(
      `${branch}@${version}: its manifest${manifestKey ? ` ${manifestKey}` : ""} was rewritten (ETag ${etag}) after the deletion of ${handle.key} began; its files may be partly deleted, so holdfast does not admit it`,
      {
        kind: "refused",
        operation: "committed",
        key: manifestKey ?? handle.key,
        code: RETIRED_MANIFEST_REWRITTEN,
        hint: `inspect ${branch}@${version} with the format's tools; removing that manifest lets the next recover finish ${handle.key} (docs/operations.md, "Stuck states")`,
      },
    );
    this.recordKey = handle.key;
    this.branch = branch;
    this.version = version;
    this.manifestKey = manifestKey;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), recordKey: this.recordKey, version: this.version };
  }
}

/** True when `error` is a {@link RetiredManifestRewrittenError} (by code, across copies). */
export function isRetiredManifestRewritten(error: unknown): error is HoldfastError {
  return isHoldfastError(error, "refused") && error.code === RETIRED_MANIFEST_REWRITTEN;
}

/**
 * Retirement 7 mark: committed → committed, once, before the first file of the record is deleted:
 * marks the record `deletionStartedAt` (`at`, storage time) by an if-match rewrite with fresh bytes
 * (docs/protocol.md §5.5). From then on {@link cancelReplaced} never cancels a version of it. A
 * record already marked is returned unwritten (a resumed run costs nothing more); a conflict
 * (another cleaner's mark or cancellation) re-reads and retries on what the record then says, so
 * the deletion follows the record as written. Returns the marked record, `null` when it is gone, or
 * the record as found when it is no longer committed (nothing of it may be deleted then). A handle
 * held without its versions is read first. An unknown outcome throws `unresolved`
 * ({@link UnresolvedTransitionError}): nothing may be deleted until a later read shows the mark.
 */
export async function startDeletion(
  ctx: RetirementContext,
  handle: RetirementHandle,
  options: { readonly at: Date },
): Promise<RetirementHandle | null> {
  if (!(options.at instanceof Date) || !Number.isFinite(options.at.getTime())) {
    throw holdfastError("invalid-input", "committed", "startDeletion needs a valid storage time", {
      key: handle.key,
    });
  }
  let known: RetirementHandle | undefined = handle.record.versions.length ? handle : undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const current = known ?? (await readRecord(ctx, handle.key));
    known = undefined;
    if (!current) return null;
    if (current.record.state !== "committed") return current;
    if (current.record.deletionStartedAt !== undefined) return current;
    try {
      return await transition(ctx, current, "committed", {
        deletionStartedAt: options.at.toISOString(),
      });
    } catch (error) {
      if (!isFenced(error)) throw error;
    }
  }
  throw holdfastError("conflict", "committed", `retirement record ${handle.key} keeps changing`, {
    key: handle.key,
    code: FENCED_CODE,
    hint: "another cleaner is rewriting it; the next run retries",
  });
}

/**
 * Heartbeat of a pre-commit record's owner: an if-match rewrite to the same state with
 * fresh bytes, so its Last-Modified moves and the ownership bound starts over. A fenced
 * owner's renewal conflicts (`RetirementFenced`), so it can never seal afterwards.
 */
export function renewRetirement(
  ctx: RetirementContext,
  handle: RetirementHandle,
): Promise<RetirementHandle> {
  requireState(handle, ["draining", "sealed"], "renew");
  return transition(ctx, handle, handle.record.state, {});
}

/** Reads and parses one record; `null` when absent. */
export async function readRecord(
  ctx: RetirementContext,
  key: string,
): Promise<RetirementHandle | null> {
  const got: GetResult | null = await ctx.store.get(key);
  if (!got) return null;
  return {
    key,
    etag: got.etag,
    record: decodeRetirementRecord(got.body, key),
    lastModified: got.lastModified,
  };
}

/** Versions of a record still being retired (not cancelled). */
export function activeVersions(record: RetirementRecord): number[] {
  return record.versions.filter((v) => !v.cancelled).map((v) => v.version);
}

/** True when `error` says the record was moved by someone else (this owner is fenced). */
export function isFenced(error: unknown): boolean {
  return isHoldfastError(error, "conflict") && error.code === FENCED_CODE;
}

/** Error code of a commit whose outcome stays unknown after {@link confirmCommit}: run recovery. */
export const COMMIT_UNRESOLVED = "COMMIT_UNRESOLVED";

/** Error code of a transition that lost its if-match: another cleaner moved the record. */
export const FENCED_CODE = "RetirementFenced";

// --- utils ---

async function transition(
  ctx: RetirementContext,
  handle: RetirementHandle,
  state: RetirementState,
  options: WriteOptions,
): Promise<RetirementHandle> {
  const versions = handle.record.versions.map((v) => {
    const reason = options.cancel?.get(v.version);
    if (v.cancelled || reason === undefined) return { ...v };
    return { ...v, cancelled: true, reason };
  });
  // Nothing left to retire: the record is done, whatever transition was asked.
  const finalState: RetirementState = versions.every((v) => v.cancelled) ? "cancelled" : state;
  const { writerId: _old, ...rest } = handle.record;
  const fields: Omit<RetirementRecord, "writerId"> = {
    ...rest,
    owner: options.owner ?? handle.record.owner,
    state: finalState,
    versions,
    // Kept by every later write (`rest` carries it): a record's deletion, once begun, stays begun.
    ...(options.deletionStartedAt !== undefined
      ? { deletionStartedAt: options.deletionStartedAt }
      : {}),
  };
  // A fresh writerId changes the bytes on every write, so even an identical transition
  // changes a content-MD5 ETag and fences whoever holds the old one (docs/protocol.md §5).
  const { writerId, bytes } = writerPayload(fields, ctx.ids);
  let outcome: Awaited<ReturnType<typeof putIfMatch>>;
  try {
    outcome = await putIfMatch(
      ctx.store,
      handle.key,
      bytes,
      handle.etag,
      resolveOptions(ctx, finalState),
    );
  } catch (error) {
    if (isUnresolved(error)) {
      throw new UnresolvedTransitionError(handle.key, finalState, writerId, error);
    }
    throw error;
  }
  if (outcome.status === "conflict") {
    throw holdfastError(
      "conflict",
      finalState,
      `retirement record ${handle.key} was moved by another cleaner`,
      { key: handle.key, code: FENCED_CODE, precondition: { ifMatch: handle.etag } },
    );
  }
  return { key: handle.key, etag: outcome.etag, record: { ...fields, writerId } };
}

function requireState(
  handle: RetirementHandle,
  allowed: readonly RetirementState[],
  operation: string,
): void {
  if (!allowed.includes(handle.record.state)) {
    throw holdfastError(
      "invalid-input",
      operation,
      `cannot ${operation} a ${handle.record.state} retirement record ${handle.key}`,
      { key: handle.key },
    );
  }
}

/**
 * Which record writes must survive a power loss (docs/protocol.md §5.10): every
 * write that leaves the record committed or cancelled. A draining or sealed write (drain,
 * cancelVersions, seal, heartbeat) is not: nothing is deleted before a durable commit and
 * mark of the same key, and a power loss that undoes it (ending every process that saw it)
 * leaves the record as an earlier write made it, a state recovery already handles.
 */
function resolveOptions(ctx: RetirementContext, writes: RetirementState): ResolveOptions {
  const durable = writes === "committed" || writes === "cancelled";
  return { policy: ctx.reissue, sleep: ctx.sleep, ...(durable ? {} : { durable: false }) };
}
