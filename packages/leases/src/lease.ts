import {
  deleteIfMatch,
  encodeJson,
  type HoldfastError,
  holdfastError,
  isHoldfastError,
  putIfAbsent,
  putIfMatch,
} from "@holdfast/conditional-store";
import { type DatasetFormat, requireHoldfastDataset, validateVersion } from "@holdfast/dataset";
import { holdfastMarkerUnchecked, requireFormat } from "@holdfast/dataset/internal";
import { DEFAULT_BRANCH, type ProtocolContext, validateName } from "@holdfast/protocol";
import { parseStored, resolverOptions } from "@holdfast/protocol/internal";
import { type Admission, type AdmissionState, readAdmission } from "@holdfast/retirement";
import { validateLeaseHandle } from "./handle.js";
import { branchFenceKey, leaseKey } from "./layout.js";
import {
  type LeaseBody,
  LeaseBodySchema,
  LeaseHolderSchema,
  MAX_HOLDER_LENGTH,
  MAX_TTL_MS,
  MIN_TTL_MS,
} from "./schema.js";
import { drawLeaseSecret, leaseProof, verifyLeaseProof } from "./secret.js";

/**
 * A lease this process holds. Pass it back to renew, keep or release it. Its `secret` is
 * the capability: whoever holds the handle can renew and release the lease, nobody else
 * can (docs/protocol.md §4.2). Keep it out of logs.
 */
export interface Lease {
  readonly leaseId: string;
  readonly branch: string;
  readonly version: number;
  readonly ttlMs: number;
  /** 32 random bytes, base64url without padding (43 characters); never stored or listed. */
  readonly secret: string;
  /** `leaseKey(branch, version, leaseId, secret)`. */
  readonly key: string;
  /** ETag of the last write: the next renewal is an if-match on it. */
  readonly etag: string;
  /**
   * Writes so far minus one: 0 after acquire, 1 after an acquire that rewrote its lease
   * (admitted by a post-commit cancellation, docs/protocol.md §5.4).
   */
  readonly renewal: number;
  readonly writerId: string;
  /**
   * Local clock (ctx.clock) just before the last successful write was sent. The store
   * stamped the write later, so the lease protects its version at least until
   * `writtenAtLocalMs + ttlMs` of this clock's time (docs/protocol.md §3).
   */
  readonly writtenAtLocalMs: number;
  /**
   * Key of the leased version's manifest in the dataset's format, as acquire recorded it; a
   * renewal whose term ran out in flight checks it. A handle an earlier release wrote may
   * lack it: such a late renewal is refused (LEASE_EXPIRED), never checked in a guessed format.
   */
  readonly manifestKey?: string | undefined;
  /** The holder label acquire was given (`AcquireOptions.holder`); every renewal writes it again. */
  readonly holder?: string | undefined;
}

export interface AcquireOptions {
  readonly branch: string;
  readonly version: number;
  /** Lease lifetime in ms, MIN_TTL_MS..MAX_TTL_MS, measured from the store's Last-Modified. */
  readonly ttlMs: number;
  readonly signal?: AbortSignal;
  /**
   * A free-text label naming who holds the lease (a job, a host), shown by listings and the
   * dashboard: 1 to MAX_HOLDER_LENGTH characters, no control characters (`invalid-input`,
   * INVALID_HOLDER otherwise, before any request). Written in the lease body after `proof`;
   * it protects and proves nothing.
   */
  readonly holder?: string | undefined;
  /**
   * The dataset's format, as opening it bound it (`OpenedDataset.resolved.format`): it names
   * the manifest proving the version exists. Required; a call without one is refused before
   * any request (`invalid-input`, FORMAT_REQUIRED, docs/protocol.md §1.1).
   */
  readonly format: DatasetFormat;
}

/**
 * Acquires a lease on an existing version (docs/protocol.md §4, Acquire 1–6): create the lease
 * object, THEN read retirement admission (write-then-read), THEN check the manifest still exists.
 * If the version is draining, sealed or committed, or its manifest is gone, the lease is removed
 * and `refused` (code RETIRING/SEALED/COMMITTED) or `not-found` (VERSION_NOT_FOUND) is thrown. The
 * manifest is checked after the lease write because a retirement that completes entirely before the
 * write leaves no record to see: only a manifest read after the write proves the version outlives
 * it. On a branch other than `main` it also reads the branch's deletion fence after the lease
 * write, and withdraws (`refused`, BRANCH_DELETING) once a deletion has begun. Admitted only
 * because a committed (or cancelled) record shows the version cancelled, it rewrites its lease
 * (if-match, fresh bytes) before returning, so no finalizer holding an older view of that record
 * can delete it. 3 requests when no cleanup is in flight (4 off `main`); +1 PUT for that rewrite.
 * Invariant 1.
 */
export async function acquireLease(ctx: ProtocolContext, options: AcquireOptions): Promise<Lease> {
  requireFormat((options as Partial<AcquireOptions> | undefined)?.format, "acquireLease");
  const { format } = options;
  const branch = validateName(options.branch, "branch");
  const version = validateVersion(options.version);
  const ttlMs = checkLeaseTtl(options.ttlMs);
  const holder = checkLeaseHolder(options.holder);
  const manifestKey = format.manifestKey(branch, version);
  // Acquire 1 check. holdfast's layout: the store must be holdfast's (docs/protocol.md §1.1).
  if (holdfastMarkerUnchecked(ctx.store, format)) {
    await requireHoldfastDataset(ctx, "acquireLease");
  }
  // Another format named without detection is confirmed before the lease is written.
  if (format.confirm) await format.confirm(ctx);

  const leaseId = ctx.ids.next();
  const secret = drawLeaseSecret(ctx);
  const key = leaseKey(branch, version, leaseId, secret);
  const { writerId, bytes } = leaseBodyBytes(
    ctx,
    secret,
    { leaseId, branch, version, ttlMs, holder },
    0,
  );
  const writtenAtLocalMs = ctx.clock.now();
  let etag: string;
  try {
    // Acquire 2 write.
    const outcome = await putIfAbsent(ctx.store, key, bytes, resolverOptions(ctx, options.signal));
    if (outcome.status === "conflict") {
      throw holdfastError("conflict", "acquireLease", `lease key ${key} already taken`, {
        key,
        hint: "the id source produced a duplicate id",
      });
    }
    etag = outcome.etag;
  } catch (error) {
    // An unknown outcome may have left a lease behind: remove it (best effort; a leftover
    // only protects the version until its TTL passes).
    if (isHoldfastError(error, "unresolved")) await removeQuietly(ctx, key);
    throw error;
  }

  let admission: Admission;
  try {
    // Acquire 3 admission, after the write (write-then-read against the cleaner's drain).
    admission = await readAdmission(ctx, branch, version);
  } catch (error) {
    await removeQuietly(ctx, key);
    throw error;
  }
  const { state } = admission;
  if (state !== "open") {
    // We lost the race with a cleaner: its census may not count us, so we must not claim
    // protection. Removing our lease lets the cleaner proceed without retaining for us.
    await removeQuietly(ctx, key);
    throw refusal("acquireLease", branch, version, state, key);
  }
  // Acquire 4 fence. A branch deletion that has begun (its fence is written) tears the branch down:
  // withdraw. The default branch cannot be deleted, so it costs nothing there.
  if (branch !== DEFAULT_BRANCH) {
    let fence: Awaited<ReturnType<typeof ctx.store.head>>;
    try {
      fence = await ctx.store.head(branchFenceKey(branch), { signal: options.signal });
    } catch (error) {
      await removeQuietly(ctx, key);
      throw error;
    }
    if (fence) {
      await removeQuietly(ctx, key);
      throw holdfastError(
        "refused",
        "acquireLease",
        `branch ${branch} is being deleted; no new leases on it`,
        {
          key: branchFenceKey(branch),
          code: "BRANCH_DELETING",
          hint: "read another branch; run holdfast recover if a deletion was interrupted",
        },
      );
    }
  }
  // Acquire 5 manifest.
  let manifest: Awaited<ReturnType<typeof ctx.store.head>>;
  try {
    manifest = await ctx.store.head(manifestKey, { signal: options.signal });
  } catch (error) {
    await removeQuietly(ctx, key);
    throw error;
  }
  if (!manifest) {
    await removeQuietly(ctx, key);
    throw holdfastError(
      "not-found",
      "acquireLease",
      `version ${version} of branch ${branch} does not exist`,
      { key: manifestKey, code: "VERSION_NOT_FOUND" },
    );
  }
  const lease: Lease = {
    leaseId,
    branch,
    version,
    ttlMs,
    secret,
    key,
    etag,
    renewal: 0,
    writerId,
    writtenAtLocalMs,
    manifestKey,
    ...(holder === undefined ? {} : { holder }),
  };
  if (!admission.reopened) return lease;
  // Acquire 6 rewrite. Admitted only because a committed (or cancelled) record shows the version
  // cancelled. A finalizer whose view of that record predates the cancellation deletes leases
  // written before its view, and our PUT may be one (an acquire stalled across the commit and the
  // cancellation). Rewriting after the read that saw the cancellation stamps the lease after it,
  // hence a whole precision interval past any such view (docs/protocol.md §3, §5.4). 1 PUT, only
  // here.
  const rewrittenAtLocalMs = ctx.clock.now();
  try {
    const written = await writeNextLease(ctx, lease, options.signal, "acquireLease");
    return { ...lease, ...written, writtenAtLocalMs: rewrittenAtLocalMs };
  } catch (error) {
    // Gone (a finalizer deleted it) or unknown: the lease may not outlive that view.
    await removeQuietly(ctx, key);
    throw error;
  }
}

/**
 * Renews a lease (docs/protocol.md §4, Renew 1–4): if-match rewrite of its object (fresh writerId,
 * next renewal counter, so the bytes and the store's Last-Modified change), THEN read admission.
 * Succeeds while the version is open or draining (an admitted lease stays renewable, L1); from
 * sealed on it throws `refused` (SEALED/COMMITTED) and protection ends at the previous expiry. A
 * lease object that is gone throws `not-found` (LEASE_LOST); a lease whose TTL has run out on the
 * local clock is refused (LEASE_EXPIRED) without a write; one whose term ran out while the renewal
 * was in flight also checks the manifest (VERSION_NOT_FOUND once retired). 2 requests when no
 * cleanup is in flight and the renewal is on time.
 */
export async function renewLease(
  ctx: ProtocolContext,
  lease: Lease,
  options: { signal?: AbortSignal } = {},
): Promise<Lease> {
  // Renew 1 check.
  validateLeaseHandle(lease, "renewLease");
  validateSignalOption(options, "renewLease");
  // An expired lease is never rewritten: a sweep may be deleting it (see sweepExpiredLeases),
  // and the holder's protection has already lapsed by its own clock.
  if (ctx.clock.now() >= lease.writtenAtLocalMs + lease.ttlMs) {
    throw holdfastError(
      "refused",
      "renewLease",
      `lease ${lease.leaseId} expired before it was renewed`,
      {
        key: lease.key,
        code: "LEASE_EXPIRED",
        hint: "acquire a new lease, then re-read the manifest",
      },
    );
  }
  const writtenAtLocalMs = ctx.clock.now();
  const written = await rewriteLease(ctx, lease, options.signal);
  if (ctx.clock.now() >= lease.writtenAtLocalMs + lease.ttlMs) {
    // The previous term ran out while this renewal was in flight, so a cleaner may have
    // counted the lease as expired and finished a whole retirement before our admission
    // read (which then sees no record): only the manifest proves the version still exists.
    const key = lease.manifestKey;
    if (key === undefined) {
      // A handle an earlier release wrote names no manifest, and renewLease takes no format:
      // without the check, the renewal proves nothing. Refused like a lapsed term (L1).
      await removeQuietly(ctx, lease.key);
      throw holdfastError(
        "refused",
        "renewLease",
        `lease ${lease.leaseId} expired while its renewal was in flight, and its handle names no manifest to check`,
        {
          key: lease.key,
          code: "LEASE_EXPIRED",
          hint: "acquire a new lease (its handle records the manifest), then re-read the manifest",
        },
      );
    }
    const manifest = await ctx.store.head(key, { signal: options.signal });
    if (!manifest) {
      await removeQuietly(ctx, lease.key);
      throw holdfastError(
        "not-found",
        "renewLease",
        `version ${lease.version} of branch ${lease.branch} was retired during the renewal`,
        { key, code: "VERSION_NOT_FOUND", hint: "the lease lapsed before its renewal landed" },
      );
    }
  }
  return { ...lease, ...written, writtenAtLocalMs };
}

/**
 * One renewal write of a checked handle, whatever clock judges its term: if-match rewrite
 * (adopting a later write of this very handle whose answer was lost), THEN read admission
 * (refused from sealed on). Admitted only because a committed (or cancelled) record names
 * the version cancelled, it writes once more, as a reopened acquire does (docs/protocol.md
 * §5.4, *A stalled renewal*; Renew 4 rewrite). Shared by `renewLease` (local clock) and
 * `renewLeaseHandle` (store clock); not exported from the package.
 */
export async function rewriteLease(
  ctx: ProtocolContext,
  lease: Omit<Lease, "writtenAtLocalMs">,
  signal: AbortSignal | undefined,
): Promise<{ etag: string; renewal: number; writerId: string }> {
  const written = await writeNextLease(ctx, lease, signal, "renewLease"); // Renew 2 write
  const admission = await readAdmission(ctx, lease.branch, lease.version); // Renew 3 admission
  if (admission.state === "sealed" || admission.state === "committed") {
    throw refusal("renewLease", lease.branch, lease.version, admission.state, lease.key);
  }
  if (!admission.reopened) return written;
  // Renew 4 rewrite. A renewal whose write landed before a finalizer's view of a committed
  // record, and whose admission read came only after a cancellation of that record, is older
  // than the view by the stamps: the view still counts the version retired and deletes it.
  // Writing after the read that saw the cancellation stamps the lease after it
  // (docs/protocol.md §3). 1 PUT, only here; a lease gone meanwhile is LEASE_LOST.
  return writeNextLease(ctx, { ...lease, ...written }, signal, "renewLease");
}

/**
 * The next write of a handle's lease: if-match on its ETag with fresh bytes (renewal + 1).
 * A conflict adopts the stored object only when it is a later write of this very handle
 * whose answer was lost, and writes once more on its ETag; anything else is `not-found`
 * LEASE_LOST (docs/protocol.md §4.2, adoption rule). Renewals and a reopened acquire share it.
 */
async function writeNextLease(
  ctx: ProtocolContext,
  lease: Omit<Lease, "writtenAtLocalMs">,
  signal: AbortSignal | undefined,
  operation: "renewLease" | "acquireLease",
): Promise<{ etag: string; renewal: number; writerId: string }> {
  let renewal = lease.renewal + 1;
  let { writerId, bytes } = leaseBodyBytes(ctx, lease.secret, lease, renewal);
  let expected = lease.etag;
  let outcome = await putIfMatch(
    ctx.store,
    lease.key,
    bytes,
    expected,
    resolverOptions(ctx, signal),
  );
  if (outcome.status === "conflict") {
    // The lease is no longer at the handle's ETag. Adopt what is there only if it is a later
    // write of this very handle whose answer was lost (its proof verifies under our secret
    // and it counts past our renewal); anything else (gone, rewritten by anyone without
    // the secret, an older body put back) means the lease is not ours any more.
    // The resolver read the key back after the conflict; read it here only if it did not.
    const current =
      outcome.current !== undefined ? outcome.current : await ctx.store.get(lease.key, { signal });
    const adopted = current === null ? null : laterOwnWrite(current.body, lease);
    if (current !== null && adopted !== null) {
      expected = current.etag;
      renewal = adopted.renewal + 1;
      ({ writerId, bytes } = leaseBodyBytes(ctx, lease.secret, lease, renewal));
      outcome = await putIfMatch(
        ctx.store,
        lease.key,
        bytes,
        expected,
        resolverOptions(ctx, signal),
      );
    }
  }
  if (outcome.status === "conflict") {
    throw holdfastError(
      "not-found",
      operation,
      `lease ${lease.leaseId} is gone or was rewritten by another writer`,
      {
        key: lease.key,
        precondition: { ifMatch: expected },
        code: "LEASE_LOST",
        hint:
          operation === "acquireLease"
            ? "a finalizer removed it while the acquire was in flight; acquire again"
            : "the version may have been retired or its branch deleted; acquire a new lease",
      },
    );
  }
  return { etag: outcome.etag, renewal, writerId };
}

/**
 * Releases a lease: deletes its object, and only it. The handle is checked first (its key
 * must be the lease key of its own branch, version, leaseId and secret: anything else is
 * refused with `invalid-input` before any request). Where the store honours conditional
 * DELETE the delete is if-match on the handle's ETag; a mismatch is settled by reading the
 * object: a later write of this handle (proof verifies, renewal past the handle's: an own
 * renewal whose answer was lost) is deleted at its ETag, anything else is left alone
 * (`conflict`, LEASE_LOST). Elsewhere (RGW) the delete is unconditional on the checked key,
 * which names only the lease whose secret the caller holds. Idempotent.
 */
export async function releaseLease(ctx: ProtocolContext, lease: Lease): Promise<void> {
  validateLeaseHandle(lease, "releaseLease"); // Release 1 check; then Release 2 delete
  if (!ctx.store.capabilities.atomicConditionalDelete) {
    await ctx.store.delete(lease.key);
    return;
  }
  const first = await deleteIfMatch(ctx.store, lease.key, lease.etag, resolverOptions(ctx));
  if (first.status === "applied") return;
  // The resolver read the key back after the conflict; read it here only if it did not.
  const current = first.current !== undefined ? first.current : await ctx.store.get(lease.key);
  if (current === null) return;
  if (laterOwnWrite(current.body, lease) !== null) {
    const again = await deleteIfMatch(ctx.store, lease.key, current.etag, resolverOptions(ctx));
    if (again.status === "applied") return;
  }
  throw holdfastError("conflict", "releaseLease", `${lease.key} is not this lease any more`, {
    key: lease.key,
    precondition: { ifMatch: lease.etag },
    code: "LEASE_LOST",
  });
}

function validateSignalOption(options: unknown, operation: string): void {
  if (options === null || typeof options !== "object") {
    throw holdfastError("invalid-input", operation, "options must be an object");
  }
  const { signal } = options as { signal?: unknown };
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw holdfastError("invalid-input", operation, "signal must be an AbortSignal");
  }
}

// --- utils ---

/**
 * The schema 2 body of a write this handle made after its own last one (a renewal whose
 * answer was lost), or `null`: the body must name this lease, its proof must verify under
 * the handle's secret, and its renewal must be past the handle's.
 */
function laterOwnWrite(body: Uint8Array, lease: Omit<Lease, "writtenAtLocalMs">): LeaseBody | null {
  let stored: LeaseBody;
  try {
    stored = parseStored(LeaseBodySchema, body, lease.key, "renewLease");
  } catch {
    return null;
  }
  const mine =
    stored.leaseId === lease.leaseId &&
    stored.branch === lease.branch &&
    stored.version === lease.version &&
    stored.renewal > lease.renewal &&
    verifyLeaseProof(lease.secret, stored, stored.proof);
  return mine ? stored : null;
}

/**
 * The bytes of one lease write: a schema 2 body with a fresh writerId and its proof, the
 * fields in the order docs/protocol.md §4 fixes (the Python package writes the same bytes).
 */
function leaseBodyBytes(
  ctx: ProtocolContext,
  secret: string,
  lease: {
    leaseId: string;
    branch: string;
    version: number;
    ttlMs: number;
    holder?: string | undefined;
  },
  renewal: number,
): { writerId: string; bytes: Uint8Array } {
  const writerId = ctx.ids.next();
  return { writerId, bytes: encodeLeaseBody(secret, { ...lease, renewal, writerId }) };
}

/**
 * Encodes a schema 2 lease body: `encodeJson` of schema, leaseId, branch, version, ttlMs,
 * renewal, writerId, proof in that order, `proof` being `leaseProof(secret, ...)`, then
 * `holder` only when one is given (conformance/leases/vectors.json has both shapes).
 */
export function encodeLeaseBody(
  secret: string,
  fields: {
    readonly leaseId: string;
    readonly branch: string;
    readonly version: number;
    readonly ttlMs: number;
    readonly renewal: number;
    readonly writerId: string;
    readonly holder?: string | undefined;
  },
): Uint8Array {
  const body: LeaseBody = {
    schema: 2,
    leaseId: fields.leaseId,
    branch: fields.branch,
    version: fields.version,
    ttlMs: fields.ttlMs,
    renewal: fields.renewal,
    writerId: fields.writerId,
    proof: leaseProof(secret, fields),
    ...(fields.holder === undefined ? {} : { holder: fields.holder }),
  };
  return encodeJson(body);
}

/**
 * A lease's TTL: an integer from MIN_TTL_MS to MAX_TTL_MS, else `invalid-input` INVALID_TTL
 * (docs/protocol.md §4). `acquireLease` checks it first; an application checks its argument
 * with it before anything is written.
 */
export function checkLeaseTtl(ttlMs: unknown, operation = "acquireLease"): number {
  if (
    typeof ttlMs !== "number" ||
    !Number.isSafeInteger(ttlMs) ||
    ttlMs < MIN_TTL_MS ||
    ttlMs > MAX_TTL_MS
  ) {
    throw holdfastError(
      "invalid-input",
      operation,
      `invalid TTL ${String(ttlMs)}: must be an integer from ${MIN_TTL_MS} to ${MAX_TTL_MS} ms`,
      { code: "INVALID_TTL", hint: "hold a lease longer than the maximum with keepLease" },
    );
  }
  return ttlMs;
}

/**
 * A lease's holder label: undefined, or LeaseHolderSchema's text (1 to MAX_HOLDER_LENGTH
 * characters, no control characters), else `invalid-input` INVALID_HOLDER. `acquireLease`
 * checks it before any request.
 */
export function checkLeaseHolder(holder: unknown, operation = "acquireLease"): string | undefined {
  if (holder === undefined) return undefined;
  if (!LeaseHolderSchema.safeParse(holder).success) {
    throw holdfastError(
      "invalid-input",
      operation,
      `invalid holder ${JSON.stringify(holder)}: must be 1 to ${MAX_HOLDER_LENGTH} characters without control characters`,
      { code: "INVALID_HOLDER", hint: "name the reader: a job, a host or a person" },
    );
  }
  return holder as string;
}

const REFUSAL_CODE: Record<Exclude<AdmissionState, "open">, string> = {
  draining: "RETIRING",
  sealed: "SEALED",
  committed: "COMMITTED",
};

function refusal(
  operation: string,
  branch: string,
  version: number,
  state: AdmissionState,
  key: string,
): HoldfastError {
  const code = state === "open" ? "RETIRING" : REFUSAL_CODE[state];
  return holdfastError("refused", operation, `version ${version} of branch ${branch} is ${state}`, {
    key,
    code,
    hint:
      state === "draining"
        ? "a cleanup is retiring this version; retry later: if the cleanup retains it, acquisition succeeds"
        : "the version is being retired; protection ends at the lease's previous expiry",
  });
}

async function removeQuietly(ctx: ProtocolContext, key: string): Promise<void> {
  try {
    await ctx.store.delete(key);
  } catch {
    // A leftover lease only makes cleanup more conservative until its TTL passes.
  }
}
