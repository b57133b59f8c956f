import { MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import type { RetirementContext } from "../src/index.js";

/** A memory store on fake time with seeded ids: a deterministic retirement context. */
export function memoryContext(seed = 1) {
  const time = new FakeTime(Date.UTC(2026, 5, 1));
  const store = new MemoryStore({ clock: time });
  // Resolver pauses return at once (recorded); storage time moves only with `time.advance`.
  const ctx: RetirementContext = {
    store,
    clock: time,
    ids: seededIds(seed),
    sleep: recordingSleep(),
  };
  return { ctx, store, time };
}

export const noLeases = async () => new Map<number, string>();
export const noRefs = async () => new Map<number, string>();

export function census(entries: [number, string][]) {
  return async (_branch: string, versions: number[]) =>
    new Map(entries.filter(([v]) => versions.includes(v)));
}
