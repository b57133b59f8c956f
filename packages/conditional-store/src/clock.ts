import { randomBytes } from "node:crypto";
import { monotonicFactory, ulid } from "ulid";

/** Injected wall clock (ms since epoch). Only ever used for local timers, never compared across hosts. */
export interface Clock {
  now(): number;
}

/** Injected pause; resolves after `ms`, rejects with the signal's reason when aborted. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Source of unique writer ids (ULIDs in production, seeded in simulations). */
export interface IdSource {
  next(): string;
}

/**
 * Source of random bytes: `n` fresh bytes per call. Lease secrets come from it
 * (`node:crypto` in production, seeded in tests and simulations so runs replay).
 */
export type RandomBytes = (n: number) => Uint8Array;

/** Cryptographically strong random bytes (`node:crypto` `randomBytes`). */
export const cryptoRandomBytes: RandomBytes = (n) => new Uint8Array(randomBytes(n));

/**
 * Deterministic bytes from a seed, for replayable tests and simulations only: anyone who
 * knows the seed knows every secret drawn from it.
 */
export function seededRandomBytes(seed: number): RandomBytes {
  let state = seed >>> 0 || 1;
  return (n) => {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 1) {
      // xorshift32, as in seededIds
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      out[i] = state & 0xff;
    }
    return out;
  };
}

/** The host clock; for local timers only (leases use storage time). */
export const systemClock: Clock = { now: () => Date.now() };

/** A real, abortable pause (`setTimeout`); tests inject fake time instead. */
export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Fresh ULIDs, monotonic within this process. */
export function ulidIds(): IdSource {
  const next = monotonicFactory();
  return { next: () => next() };
}

/** Deterministic ULID-shaped ids from a seed, for replayable tests and simulations. */
export function seededIds(seed: number): IdSource {
  let state = seed >>> 0 || 1;
  let counter = 0;
  const random = () => {
    // xorshift32: small, deterministic, good enough for unique ids in a test run
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  return {
    next: () => {
      counter += 1;
      return ulid(1_700_000_000_000 + counter, random);
    },
  };
}
