import { encodeJson, MemoryStore, seededIds, seededRandomBytes } from "@holdfast/conditional-store";
import { FakeTime, FaultStore } from "@holdfast/conditional-store/testing";
import { commitVersion, initDataset } from "@holdfast/dataset";
import { markHoldfastDataset } from "@holdfast/dataset/internal";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { retirementKey } from "@holdfast/retirement";

/** A whole storage second, so offsets in tests read as sub-second parts. */
export const T0 = Date.UTC(2026, 0, 1, 0, 0, 100);

export interface World {
  /** Drives the store's Last-Modified stamps (storage time). */
  readonly storeTime: FakeTime;
  readonly memory: MemoryStore;
  readonly fault: FaultStore;
  /** A reader host: its own clock, sharing the store. */
  readonly reader: ProtocolContext;
}

export function world(options: { seed?: number; readerClock?: FakeTime } = {}): World {
  const storeTime = new FakeTime(T0);
  const memory = new MemoryStore({ clock: storeTime });
  const readerTime = options.readerClock ?? storeTime;
  const fault = new FaultStore(memory, { sleep: readerTime.sleep });
  const reader = createContext(fault, {
    clock: readerTime,
    sleep: readerTime.sleep,
    ids: seededIds(options.seed ?? 1),
    random: seededRandomBytes(options.seed ?? 1),
  });
  return { storeTime, memory, fault, reader };
}

/** Commits `count` empty versions on `branch` straight to the store. */
export async function commitVersions(w: World, count: number, branch = "main"): Promise<void> {
  const ctx = createContext(w.memory, {
    ids: seededIds(999),
    clock: w.storeTime,
    sleep: w.storeTime.sleep,
  });
  // A holdfast dataset: its marker, which acquire checks first (one HEAD per store object).
  await initDataset(ctx).catch(() => markHoldfastDataset(ctx.store));
  for (let i = 0; i < count; i += 1) await commitVersion(ctx, { branch, files: [] });
}

/** A well-formed lease secret no lease in a test was acquired with (32 zero bytes). */
export const OTHER_SECRET = "A".repeat(43);

let opCounter = 0;

/**
 * Writes a retirement record as a cleaner would (until `@holdfast/retirement` exposes its
 * transitions to tests); returns its key.
 */
export async function putRetirement(
  w: World,
  state: "draining" | "sealed" | "committed" | "cancelled",
  versions: number[],
  options: { branch?: string; ownershipBoundMs?: number; key?: string } = {},
): Promise<string> {
  opCounter += 1;
  const opId = `01OP${opCounter.toString().padStart(4, "0")}`;
  const branch = options.branch ?? "main";
  const key =
    options.key ?? retirementKey(branch, Math.min(...versions), Math.max(...versions), opId);
  await w.memory.put(
    key,
    encodeJson({
      schema: 1,
      opId,
      writerId: `01W${opCounter}`,
      owner: "01OWNER",
      branch,
      state,
      ownershipBoundMs: options.ownershipBoundMs ?? 15 * 60 * 1000,
      versions: versions.map((version) => ({ version, manifestEtag: "e", cancelled: false })),
    }),
  );
  return key;
}
