import { realSleep, type Sleep } from "./clock.js";
import { type HoldfastError, holdfastError, isHoldfastError } from "./errors.js";
import { validateKey } from "./keys.js";
import { classifyFailure, DEFAULT_REISSUE_POLICY, type ReissuePolicy } from "./policy.js";
import type { GetResult, ObjectStore, Precondition } from "./types.js";

/** Result of a resolved conditional put. An unknown outcome is thrown as `unresolved`, never returned. */
export type ConditionalPutOutcome =
  | { readonly status: "applied"; readonly etag: string }
  /** The precondition visibly failed; `current` is what the store holds, when a read-back saw it. */
  | { readonly status: "conflict"; readonly current?: GetResult | null };

/** Options of the resolver: policy, injected time, a fence, and a re-issue hook. */
export interface ResolveOptions {
  /** @default DEFAULT_REISSUE_POLICY */
  readonly policy?: ReissuePolicy | undefined;
  /** @default realSleep (tests inject fake time) */
  readonly sleep?: Sleep | undefined;
  /** Stops further re-issues (e.g. a lease keeper's fence); pending outcome is reported unresolved. */
  readonly signal?: AbortSignal | undefined;
  /** Called for each re-issue, for logs and stats. */
  readonly onReissue?: ((attempt: number, error: unknown) => void) | undefined;
  /**
   * `false`: passed on to the store as `durable: false` (PutOptions, DeleteOptions): a
   * power loss may undo the write, which the caller's protocol treats as a crash before it.
   * @default true
   */
  readonly durable?: boolean | undefined;
}

/**
 * Sends one conditional put and resolves lost answers (docs/guarantees.md, conditional requests): ambiguous answers are
 * re-issued unchanged per the policy, and the key is read back after every conflict (an
 * earlier copy of this request, re-issued or repeated on the way, may explain it) and after
 * the last lost re-issue. Equal stored bytes mean this request
 * landed, so payloads of exclusive claims must name their writer (see `writerPayload`).
 *
 * This is the only production call site of a conditional `store.put` (scenario C9).
 */
export async function resolveConditionalPut(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  precondition: Precondition,
  options: ResolveOptions = {},
): Promise<ConditionalPutOutcome> {
  validateKey(key, "put");
  validatePrecondition(key, precondition);
  const pauses = (options.policy ?? DEFAULT_REISSUE_POLICY).pausesMs;
  const sleep = options.sleep ?? realSleep;
  const mode = store.capabilities.requestMode;
  // Once any copy's answer was lost, the key may still change under an earlier copy in
  // flight: a read-back that finds the precondition holding is then unknown. A repeating
  // client may have lost answers before its first.
  let answerLost = mode === "repeating";
  let lastError: unknown;

  for (let attempt = 0; attempt <= pauses.length; attempt += 1) {
    if (attempt > 0) {
      // A fence (the signal) must stop re-issue at once, before the pause and after it.
      if (options.signal?.aborted) {
        throw unresolved(key, precondition, "aborted before re-issue", lastError);
      }
      options.onReissue?.(attempt, lastError);
      try {
        await sleep(pauses[attempt - 1]!, options.signal);
      } catch (abort) {
        throw unresolved(key, precondition, "aborted before re-issue", abort ?? lastError);
      }
    }
    if (options.signal?.aborted) {
      if (attempt === 0) {
        throw holdfastError("aborted", "put", `aborted before sending put of ${key}`, {
          key,
          precondition,
          cause: options.signal.reason,
        });
      }
      throw unresolved(key, precondition, "aborted before re-issue", lastError);
    }
    try {
      // C9: the one conditional put call site.
      const { etag } = await store.put(key, body, {
        precondition,
        signal: options.signal,
        ...(options.durable === false ? { durable: false } : {}),
      });
      return { status: "applied", etag };
    } catch (error) {
      lastError = error;
      switch (classifyFailure(error, mode)) {
        case "conflict":
          // Every conflict is read back before it is believed, whatever the client's mode:
          // an earlier copy of this very request may have applied, sent by the resolver
          // (a lost answer), by a repeating SDK, or by something between us and the store
          // that repeated it (a proxy retrying a POST). Every claim names its writer
          // (writerPayload), so equal bytes are this writer's (docs/guarantees.md,
          // "Conditional requests": a repeated request).
          // With no answer lost, a read-back that does not show our bytes confirms the conflict.
          return readBack(store, key, body, precondition, error, answerLost);
        case "in-flight":
          // S3 409: the write in flight may be our own earlier copy. A create reads back
          // (absent stays unresolved); an if-match is re-issued.
          answerLost = true;
          if ("ifNoneMatch" in precondition) {
            return readBack(store, key, body, precondition, error, true);
          }
          break;
        case "refused":
          // A first copy's refusal is final: nothing was sent that could have applied.
          if (attempt === 0) throw error;
          break;
        case "ambiguous":
          answerLost = true;
          break;
      }
    }
  }
  return readBack(store, key, body, precondition, lastError, true);
}

/** Create-only put, resolved. */
export function putIfAbsent(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  options?: ResolveOptions,
): Promise<ConditionalPutOutcome> {
  return resolveConditionalPut(store, key, body, { ifNoneMatch: "*" }, options);
}

/** Compare-and-swap put, resolved. */
export function putIfMatch(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  etag: string,
  options?: ResolveOptions,
): Promise<ConditionalPutOutcome> {
  return resolveConditionalPut(store, key, body, { ifMatch: etag }, options);
}

/**
 * Reads the key back and decides: our bytes → applied; the precondition visibly failed →
 * conflict; the key still satisfies the precondition → unresolved (thrown) when an answer
 * was lost (an earlier copy may yet land), else the store's conflict stands.
 */
async function readBack(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  precondition: Precondition,
  cause: unknown,
  answerLost: boolean,
): Promise<ConditionalPutOutcome> {
  let current: GetResult | null;
  try {
    current = await store.get(key);
  } catch (readError) {
    throw unresolved(key, precondition, "read-back failed", readError);
  }
  if (current && bytesEqual(current.body, body)) return { status: "applied", etag: current.etag };
  if ("ifNoneMatch" in precondition) {
    if (current) return { status: "conflict", current };
  } else if (!current || current.etag !== precondition.ifMatch) {
    return { status: "conflict", current };
  }
  // Every answer was a definite one and none of our copies is in the store: the conflict
  // the store answered stands (a store that refuses the ETag form it handed out says so).
  if (!answerLost) return { status: "conflict", current };
  throw unresolved(key, precondition, "the key still satisfies the precondition", cause);
}

function unresolved(
  key: string,
  precondition: Precondition,
  why: string,
  cause: unknown,
): HoldfastError {
  return holdfastError(
    "unresolved",
    "put",
    `outcome of conditional put on ${key} is unknown (${why})`,
    {
      key,
      precondition,
      cause,
      hint: "the write may or may not have landed; re-run the operation or its recovery before acting on this key",
    },
  );
}

/** Result of a resolved conditional delete. */
export type ConditionalDeleteOutcome =
  | { readonly status: "applied" }
  /** The object is at another ETag; `current` is what the read-back saw, when one ran. */
  | { readonly status: "conflict"; readonly current?: GetResult | undefined };

/**
 * Deletes `key` only at `etag`, resolving lost answers by re-issue and read-back: absent →
 * applied (the object is gone), another ETag → conflict, still at `etag` → unresolved.
 * Refused on stores without atomic conditional delete (RGW ignores If-Match on DELETE).
 */
export async function deleteIfMatch(
  store: ObjectStore,
  key: string,
  etag: string,
  options: ResolveOptions = {},
): Promise<ConditionalDeleteOutcome> {
  validateKey(key, "delete");
  validatePrecondition(key, { ifMatch: etag }, "delete");
  if (!store.capabilities.atomicConditionalDelete) {
    throw holdfastError(
      "unsupported",
      "delete",
      `${store.backend} does not honour conditional delete`,
      {
        key,
        precondition: { ifMatch: etag },
        hint: "move the object to a terminal state with an if-match rewrite, then delete it unconditionally",
      },
    );
  }
  const pauses = (options.policy ?? DEFAULT_REISSUE_POLICY).pausesMs;
  const sleep = options.sleep ?? realSleep;
  const mode = store.capabilities.requestMode;
  let answerLost = mode === "repeating";
  let conflicted = false;
  let lastError: unknown;
  for (let attempt = 0; attempt <= pauses.length; attempt += 1) {
    if (attempt > 0) {
      if (options.signal?.aborted) throw unresolvedDelete(key, etag, lastError);
      options.onReissue?.(attempt, lastError);
      try {
        await sleep(pauses[attempt - 1]!, options.signal);
      } catch (abort) {
        throw unresolvedDelete(key, etag, abort ?? lastError);
      }
    }
    if (options.signal?.aborted) {
      if (attempt === 0) {
        throw holdfastError("aborted", "delete", `aborted before sending delete of ${key}`, {
          key,
          precondition: { ifMatch: etag },
          cause: options.signal.reason,
        });
      }
      throw unresolvedDelete(key, etag, lastError);
    }
    try {
      await store.delete(key, {
        ifMatch: etag,
        signal: options.signal,
        ...(options.durable === false ? { durable: false } : {}),
      });
      return { status: "applied" };
    } catch (error) {
      lastError = error;
      // A delete's 404 says the object is absent: its precondition failed, like a 412.
      const answer = isHoldfastError(error, "not-found")
        ? "conflict"
        : classifyFailure(error, mode);
      // A conflict is read back before it is believed, as for puts: an earlier copy of this
      // delete (ours, a repeating SDK's, or one repeated on the way) may have removed it.
      if (answer === "conflict") {
        conflicted = true;
        break;
      }
      // A first copy's refusal is final; a refused re-issue is re-issued (docs/guarantees.md, conditional requests).
      if (answer === "refused" && attempt === 0) throw error;
      if (answer !== "refused") answerLost = true;
    }
  }
  // A get, not a head: a caller that meets a conflict reads the object next, so it is
  // handed over (`current`) instead of read twice.
  let current: GetResult | null;
  try {
    current = await store.get(key);
  } catch (readError) {
    throw unresolvedDelete(key, etag, readError);
  }
  if (!current) return { status: "applied" };
  if (current.etag !== etag) return { status: "conflict", current };
  // A definite conflict, no answer lost, and the object still there: the store's answer stands.
  if (conflicted && !answerLost) return { status: "conflict", current };
  throw unresolvedDelete(key, etag, lastError);
}

function unresolvedDelete(key: string, etag: string, cause: unknown): HoldfastError {
  return holdfastError(
    "unresolved",
    "delete",
    `outcome of conditional delete on ${key} is unknown`,
    {
      key,
      precondition: { ifMatch: etag },
      cause,
    },
  );
}

/** Rejects a malformed precondition before anything is sent (docs/guarantees.md, invariant 6). */
function validatePrecondition(key: string, precondition: Precondition, operation = "put"): void {
  const ok =
    precondition !== null &&
    typeof precondition === "object" &&
    (("ifNoneMatch" in precondition && precondition.ifNoneMatch === "*") ||
      ("ifMatch" in precondition &&
        typeof precondition.ifMatch === "string" &&
        precondition.ifMatch !== ""));
  if (!ok) {
    throw holdfastError("invalid-input", operation, `invalid precondition for ${key}`, {
      key,
      hint: 'use { ifNoneMatch: "*" } or { ifMatch: "<etag>" } with a non-empty ETag',
    });
  }
}

/** Byte-for-byte equality; the read-back's test for "this request landed". */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.compare(a, b) === 0;
}

/** True when `error` says a conditional request's outcome is unknown. */
export function isUnresolved(error: unknown): error is HoldfastError {
  return isHoldfastError(error, "unresolved");
}
