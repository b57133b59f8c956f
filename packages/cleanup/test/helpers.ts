import {
  CountingStore,
  HoldfastError,
  MemoryStore,
  type ObjectStore,
  seededIds,
} from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { holdfastFormat, type ReferenceFormat } from "@holdfast/refs-lifecycle";
import type { ReferenceCensus } from "@holdfast/retirement";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";

export const MINUTE = 60_000;
export const DAY = 24 * 60 * MINUTE;

/** A memory store on fake storage time; resolver pauses return at once. */
export function world(seed = 1) {
  const time = new FakeTime(Date.UTC(2026, 5, 1));
  const store = new MemoryStore({ clock: time });
  const ctx = contextOn(store, time, seed);
  // Each context is another process: it draws its own writer ids (two processes with one id
  // sequence would write equal bytes, which the resolver rightly takes for one writer).
  let processes = 0;
  return {
    time,
    store,
    ctx,
    on: (other: ObjectStore) => contextOn(other, time, seed + 1000 * ++processes),
  };
}

function contextOn(store: ObjectStore, time: FakeTime, seed: number): ProtocolContext {
  return { store, clock: time, ids: seededIds(seed), sleep: recordingSleep() };
}

/**
 * `versions` commits on `main`, each with `filesPer` fresh files plus (when `shared`) the
 * first version's first file; time moves one minute per commit.
 */
export async function seedDataset(
  ctx: ProtocolContext,
  time: FakeTime,
  { versions = 5, filesPer = 2, shared = false, branch = "main" } = {},
) {
  await initDataset(ctx).catch(() => {});
  let first: { key: string; size: number } | undefined;
  for (let i = 0; i < versions; i += 1) {
    const files = [];
    for (let f = 0; f < filesPer; f += 1) {
      files.push(await writeDataFile(ctx, new Uint8Array(10 + f)));
    }
    first ??= files[0];
    if (shared && i > 0 && first) files.push(first);
    await commitVersion(ctx, { branch, files });
    await time.advance(MINUTE);
  }
  // Every seeded version is past the minimum age at which cleanup may retire it.
  await time.advance(DEFAULT_MIN_VERSION_AGE_MS);
  return { sharedFile: first! };
}

/** Keys under a prefix (sorted). */
export function keysUnder(store: MemoryStore, prefix: string): string[] {
  return store.keys().filter((k) => k.startsWith(prefix));
}

/** Versions whose manifests exist on a branch. */
export function versionsOf(store: MemoryStore, branch = "main"): number[] {
  return keysUnder(store, `_versions/${branch}/`).map((k) => Number(k.split("/")[2]!.slice(0, 20)));
}

/**
 * Models a process crash: once `trigger` matches a request, that request (after or before
 * it applies) and every later one fail with `refused`, so nothing more is written and the
 * in-process cleanup (abandon) cannot run either.
 */
export class CrashStore extends CountingStore {
  crashed = false;
  constructor(
    inner: ObjectStore,
    private readonly trigger: (op: string, key: string, conditional: boolean) => boolean,
    private readonly applyFirst: boolean,
  ) {
    super(inner);
  }

  async #gate<T>(
    op: string,
    key: string,
    conditional: boolean,
    send: () => Promise<T>,
  ): Promise<T> {
    if (this.crashed) throw dead(op, key);
    if (this.trigger(op, key, conditional)) {
      this.crashed = true;
      if (this.applyFirst) await send();
      throw dead(op, key);
    }
    return send();
  }

  override get(key: string) {
    return this.#gate("get", key, false, () => super.get(key));
  }
  override head(key: string) {
    return this.#gate("head", key, false, () => super.head(key));
  }
  override put(key: string, body: Uint8Array, options?: Parameters<ObjectStore["put"]>[2]) {
    return this.#gate("put", key, options?.precondition !== undefined, () =>
      super.put(key, body, options),
    );
  }
  override delete(key: string, options?: Parameters<ObjectStore["delete"]>[1]) {
    return this.#gate("delete", key, false, () => super.delete(key, options));
  }
  override deleteMany(keys: readonly string[]) {
    return this.#gate("deleteMany", keys[0] ?? "", false, () => super.deleteMany(keys));
  }
  override list(prefix: string, options?: Parameters<ObjectStore["list"]>[1]) {
    return this.#gate("list", prefix, false, () => super.list(prefix, options));
  }
}

function dead(op: string, key: string): HoldfastError {
  return new HoldfastError(`process crashed at ${op} ${key}`, {
    kind: "refused",
    operation: op,
    key,
  });
}

/** Forwards every request and logs the key of every write (PUT, DELETE, each key of a batch DELETE). */
export class RecordingStore extends CountingStore {
  readonly writes: string[] = [];

  override put(key: string, body: Uint8Array, options?: Parameters<ObjectStore["put"]>[2]) {
    this.writes.push(key);
    return super.put(key, body, options);
  }
  override delete(key: string, options?: Parameters<ObjectStore["delete"]>[1]) {
    this.writes.push(key);
    return super.delete(key, options);
  }
  override deleteMany(keys: readonly string[], options?: Parameters<ObjectStore["deleteMany"]>[1]) {
    this.writes.push(...keys);
    return super.deleteMany(keys, options);
  }

  /** Logged write keys under `prefix`. */
  writesUnder(prefix: string): string[] {
    return this.writes.filter((k) => k.startsWith(prefix));
  }
}

/** A {@link RecordingStore} that runs `before(op, key)` ahead of forwarding each request (an interleaving hook). */
export class HookStore extends RecordingStore {
  constructor(
    inner: ObjectStore,
    private readonly before: (op: string, key: string) => Promise<void>,
  ) {
    super(inner);
  }
  override async get(key: string, options?: Parameters<ObjectStore["get"]>[1]) {
    await this.before("get", key);
    return super.get(key, options);
  }
  override async put(key: string, body: Uint8Array, options?: Parameters<ObjectStore["put"]>[2]) {
    await this.before("put", key);
    return super.put(key, body, options);
  }
}

/**
 * holdfast's format (or `format`) whose reference codec censuses with `census`: how a test
 * stands in for the references a format's codec would find (the census always comes from
 * the format the caller bound, docs/protocol.md §1.1).
 */
export function formatWithCensus(
  census: ReferenceCensus,
  format: ReferenceFormat = holdfastFormat,
): ReferenceFormat {
  return { ...format, references: { ...format.references, census: () => census } };
}
