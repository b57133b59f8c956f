import {
  decodeJson,
  type HoldfastError,
  isHoldfastError,
  MemoryStore,
  type RequestMode,
} from "@holdfast/conditional-store";
import { type FaultRule, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { expect } from "vitest";

export const enc = (text: string): Uint8Array => new TextEncoder().encode(text);
export const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes);
export const json = (bytes: Uint8Array | undefined): unknown => decodeJson(bytes ?? enc("null"));

/** A MemoryStore behind a FaultStore that declares `mode`, with a recording sleep. */
export function scripted(mode: RequestMode = "single-attempt", ...rules: FaultRule[]) {
  const memory = new MemoryStore();
  const sleep = recordingSleep();
  const store = new FaultStore(memory, { requestMode: mode, rules });
  return { memory, store, sleep };
}

/** Awaits a promise expected to reject with a HoldfastError and returns it. */
export async function rejection(promise: Promise<unknown>): Promise<HoldfastError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isHoldfastError(error), `expected a HoldfastError, got ${String(error)}`).toBe(true);
  return error as HoldfastError;
}
