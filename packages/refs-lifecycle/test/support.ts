import {
  decodeJson,
  encodeJson,
  MemoryStore,
  type MemoryStoreOptions,
  type ObjectStore,
  type StoreCapabilities,
  seededIds,
} from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { commitVersion, initDataset, manifestKey } from "@holdfast/dataset";
import { markHoldfastDataset } from "@holdfast/dataset/internal";
import { createContext, type ProtocolContext, type VersionRef } from "@holdfast/protocol";
import { drain, seal } from "@holdfast/retirement";
import { releasedBranchSchema, releasedTagSchema } from "../src/index.js";

/** A deterministic world: fake time shared by store and context, seeded ids, a fault store. */
export interface World {
  readonly time: FakeTime;
  readonly memory: MemoryStore;
  readonly faults: FaultStore;
  readonly ctx: ProtocolContext;
}

export function world(
  options: {
    seed?: number;
    memory?: Omit<MemoryStoreOptions, "clock">;
    capabilities?: Partial<StoreCapabilities>;
  } = {},
): World {
  const time = new FakeTime(Date.UTC(2026, 10, 29, 8, 0, 0));
  const memory = new MemoryStore({ clock: time, ...options.memory });
  const faults = new FaultStore(memory, { capabilities: options.capabilities });
  const ctx = createContext(faults, {
    clock: time,
    ids: seededIds(options.seed ?? 7),
    sleep: recordingSleep(),
  });
  return { time, memory, faults, ctx };
}

/** Commits `count` empty versions on `branch` (the first forked from `parent` when given). */
export async function commits(
  ctx: ProtocolContext,
  branch: string,
  count: number,
  parent?: VersionRef,
): Promise<void> {
  // A holdfast dataset: its marker, which every default-format operation checks first.
  await initDataset(ctx).catch(() => markHoldfastDataset(ctx.store));
  for (let i = 0; i < count; i += 1) {
    await commitVersion(ctx, {
      branch,
      files: [],
      ...(i === 0 && parent ? { parent } : {}),
    });
  }
}

/** A pause point: a fault step that blocks a request until released. */
export function gate(): {
  reached: Promise<void>;
  release: () => void;
  step: { type: "before"; run: () => Promise<void> };
} {
  let reachedResolve!: () => void;
  let releaseResolve!: () => void;
  const reached = new Promise<void>((r) => {
    reachedResolve = r;
  });
  const released = new Promise<void>((r) => {
    releaseResolve = r;
  });
  return {
    reached,
    release: releaseResolve,
    step: {
      type: "before",
      run: async () => {
        reachedResolve();
        await released;
      },
    },
  };
}

/** Seals `versions` of `branch` the way a cleaner would (drain, then seal). */
export async function sealVersions(ctx: ProtocolContext, branch: string, versions: number[]) {
  const candidates = [];
  for (const version of versions) {
    const meta = await ctx.store.head(manifestKey(branch, version));
    candidates.push({ version, manifestEtag: meta!.etag });
  }
  const drained = await drain(ctx, { branch, versions: candidates, owner: ctx.ids.next() });
  return seal(ctx, drained);
}

// --- a minimal released client: knows only the released schema ---

/** Reads every file in `_refs/tags/` and `_refs/branches/` the way a released client does. */
export async function releasedReadAll(
  store: ObjectStore,
): Promise<{ tags: Map<string, unknown>; branches: Map<string, unknown> }> {
  const tags = new Map<string, unknown>();
  const branches = new Map<string, unknown>();
  for (const [prefix, schema, into] of [
    ["_refs/tags/", releasedTagSchema, tags],
    ["_refs/branches/", releasedBranchSchema, branches],
  ] as const) {
    const page = await store.list(prefix);
    for (const meta of page.objects) {
      const got = await store.get(meta.key);
      if (!got) continue;
      // A released client fails its whole listing on one unparsable file (R7).
      into.set(meta.key, schema.parse(decodeJson(got.body)));
    }
  }
  return { tags, branches };
}

/** A released client's rewrite: parse (unknown fields stripped), change, plain if-match put. */
export async function releasedRewrite(
  store: ObjectStore,
  key: string,
  change: (doc: Record<string, unknown>) => Record<string, unknown>,
): Promise<string> {
  const got = await store.get(key);
  if (!got) throw new Error(`released client: ${key} is absent`);
  const schema = key.startsWith("_refs/tags/") ? releasedTagSchema : releasedBranchSchema;
  const doc = schema.parse(decodeJson(got.body)) as Record<string, unknown>;
  const { etag } = await store.put(key, encodeJson(change(doc)), {
    precondition: { ifMatch: got.etag },
  });
  return etag;
}

/** Keys under a prefix in the raw store. */
export function keysUnder(memory: MemoryStore, prefix: string): string[] {
  return memory.keys().filter((k) => k.startsWith(prefix));
}
