// Assertions and helpers shared by the contract suite's files (not exported by the package).
import {
  type HoldfastErrorKind,
  isHoldfastError,
  listAll,
  type ObjectMeta,
  type ObjectStore,
} from "@holdfast/conditional-store";
import { expect } from "vitest";

/**
 * Writers racing in each round of the concurrency tests (docs/guarantees.md, invariant 3:
 * exactly one winner).
 */
export const CONTRACT_RACERS = 8;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function text(value: string): Uint8Array {
  return encoder.encode(value);
}

export function decode(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

export function bytesOf(bytes: Uint8Array): number[] {
  return Array.from(bytes);
}

/** Distinct payloads per racer, each naming its writer, as every exclusive claim must. */
export function racerBodies(round: number): Uint8Array[] {
  return Array.from({ length: CONTRACT_RACERS }, (_, i) => text(`round ${round} racer ${i}`));
}

/** Asserts exactly one fulfilled put; losers must report one of `loserKinds` (conflict, S3's in-flight 409). */
export function assertOneWinner(
  results: PromiseSettledResult<unknown>[],
  round: number,
  loserKinds: readonly HoldfastErrorKind[],
): number {
  const winners = results.flatMap((r, i) => (r.status === "fulfilled" ? [i] : []));
  expect({ round, winners: winners.length }).toEqual({ round, winners: 1 });
  for (const result of results) {
    if (result.status === "rejected") {
      const kind = isHoldfastError(result.reason) ? result.reason.kind : String(result.reason);
      expect(loserKinds).toContain(kind);
    }
  }
  return winners[0]!;
}

export async function expectKind(
  promise: Promise<unknown>,
  kind: HoldfastErrorKind,
): Promise<{ kind: string; key?: string | undefined }> {
  let outcome: unknown;
  try {
    outcome = await promise;
  } catch (error) {
    expect(isHoldfastError(error), `expected a HoldfastError, got ${String(error)}`).toBe(true);
    expect((error as { kind: string }).kind).toBe(kind);
    return error as { kind: string; key?: string };
  }
  expect.fail(`expected a ${kind} error, got ${JSON.stringify(outcome)?.slice(0, 200)}`);
}

export async function listMeta(store: ObjectStore, prefix: string): Promise<ObjectMeta[]> {
  return collect(listAll(store, prefix));
}

export async function listKeys(store: ObjectStore, prefix: string): Promise<string[]> {
  return (await listMeta(store, prefix)).map((o) => o.key);
}

export async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Deterministic bytes (xorshift32), so a failure reproduces exactly. */
export function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i += 4) {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    out[i] = state & 0xff;
    if (i + 1 < length) out[i + 1] = (state >>> 8) & 0xff;
    if (i + 2 < length) out[i + 2] = (state >>> 16) & 0xff;
    if (i + 3 < length) out[i + 3] = state >>> 24;
  }
  return out;
}
