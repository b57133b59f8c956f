import {
  decodeJson,
  holdfastError,
  isHoldfastError,
  type ObjectStore,
} from "@holdfast/conditional-store";
import type { DatasetFormat, FormatManifest, VersionEntry } from "@holdfast/dataset";
import { headHintKey } from "@holdfast/dataset/internal";
import type { ProtocolContext } from "@holdfast/protocol";
import { censusReferences, type ReferenceFormat } from "@holdfast/refs-lifecycle";
import type { ReferenceCensus } from "@holdfast/retirement";

/**
 * Planted fault `blind-last-look` (tests only): a format whose branch and version
 * listings are frozen at their first answer, made fresh for each cleanup run. The run's
 * last look (docs/protocol.md §2.5) then finds no manifest added
 * after its plan; with commit intents hidden too (see the cleaner's store) it protects
 * nothing, as before commits that reuse files were protected.
 */
export function frozenFormat(base: DatasetFormat): DatasetFormat {
  let branches: Promise<string[]> | undefined;
  const versions = new Map<string, Promise<VersionEntry[]>>();
  const collect = async (entries: AsyncIterable<VersionEntry>) => {
    const all: VersionEntry[] = [];
    for await (const entry of entries) all.push(entry);
    return all;
  };
  return {
    ...base,
    listBranches(ctx) {
      branches ??= base.listBranches(ctx);
      return branches;
    },
    async *listVersions(ctx, branch) {
      let listed = versions.get(branch);
      if (!listed) {
        listed = collect(base.listVersions(ctx, branch));
        versions.set(branch, listed);
      }
      yield* await listed;
    },
  };
}

/**
 * Planted fault `late-validation` (tests only): a format that does not validate a manifest
 * before the commit, as cleanup did before it refused before the commit (docs/protocol.md §6.1). A
 * manifest a breaker replaced with bytes the format refuses reads as the one it replaced (the
 * stored ETag, that manifest's files: what `broken` says), so the plan, the reference census and
 * the read before the drain pass it and the run drains and commits a version whose manifest is
 * refused.
 */
export function lateValidationFormat(
  base: DatasetFormat,
  broken: ReadonlyMap<string, { readonly original: Uint8Array }>,
): DatasetFormat {
  return {
    ...base,
    async readManifest(ctx, branch, version) {
      try {
        return await base.readManifest(ctx, branch, version);
      } catch (error) {
        const key = base.manifestKey(branch, version);
        const replaced = broken.get(key);
        if (!isHoldfastError(error, "invalid-input") || error.code !== "MALFORMED_OBJECT") {
          throw error;
        }
        const meta = await ctx.store.head(key);
        if (!meta || !replaced) throw error;
        const manifest = decodeJson(replaced.original) as FormatManifest;
        return { etag: meta.etag, parent: manifest.parent ?? null, files: manifest.files };
      }
    },
  };
}

/** Code of the refusal the planted fault `no-drop` answers with. */
export const PLANTED_NO_DROP = "PLANTED_NO_DROP";

/**
 * Planted fault `no-drop` (tests only): a store view that refuses every rewrite of a
 * committed retirement record into another committed record, the if-match write by which
 * cleanup drops a version whose manifest was replaced from the committed record before it
 * stops with its refusal (docs/protocol.md §5.5). The record then stays committed naming the
 * version, as before that drop, and refuses every lease on it until a later run settles it.
 */
export function noDropView(store: ObjectStore): ObjectStore {
  const committed = (body: Uint8Array) =>
    (decodeJson(body) as { state?: string }).state === "committed";
  return {
    backend: store.backend,
    location: store.location,
    capabilities: store.capabilities,
    get: (key, options) => store.get(key, options),
    head: (key, options) => store.head(key, options),
    delete: (key, options) => store.delete(key, options),
    deleteMany: (keys, options) => store.deleteMany(keys, options),
    list: (prefix, options) => store.list(prefix, options),
    async put(key, body, options) {
      if (key.startsWith("_holdfast/retirement/") && committed(body)) {
        const current = await store.get(key);
        if (current && committed(current.body)) {
          throw holdfastError("refused", "put", `planted fault no-drop: ${key} stays as it is`, {
            key,
            code: PLANTED_NO_DROP,
          });
        }
      }
      return store.put(key, body, options);
    },
  };
}

/** Code of the refusal the planted fault `no-give-up` answers with. */
export const PLANTED_NO_GIVE_UP = "PLANTED_NO_GIVE_UP";

/**
 * Planted fault `no-give-up` (tests only), half 1 of 2 (see {@link refusingCensus}): a store
 * view that refuses a run's give-up of its own record: a rewrite of a draining or sealed record to
 * `cancelled` by the same owner that cancels no version (a seal or commit that cancels every
 * version is not refused, nor a recovering cleaner's fence, which names a new owner). The run's
 * `finally` swallows the refusal, so a run refused before its commit leaves a record it owns
 * (docs/protocol.md §6.1: every record of the run is given up).
 */
export function noGiveUpView(store: ObjectStore): ObjectStore {
  type Stored = { owner?: string; state?: string; versions?: { cancelled?: boolean }[] };
  const cancelled = (record: Stored) => (record.versions ?? []).filter((v) => v.cancelled).length;
  return {
    backend: store.backend,
    location: store.location,
    capabilities: store.capabilities,
    get: (key, options) => store.get(key, options),
    head: (key, options) => store.head(key, options),
    delete: (key, options) => store.delete(key, options),
    deleteMany: (keys, options) => store.deleteMany(keys, options),
    list: (prefix, options) => store.list(prefix, options),
    async put(key, body, options) {
      if (key.startsWith("_holdfast/retirement/")) {
        const next = decodeJson(body) as Stored;
        const got = next.state === "cancelled" ? await store.get(key) : undefined;
        const current = got ? (decodeJson(got.body) as Stored) : undefined;
        if (
          current &&
          (current.state === "draining" || current.state === "sealed") &&
          current.owner === next.owner &&
          cancelled(current) === cancelled(next)
        ) {
          throw holdfastError("refused", "put", `planted fault no-give-up: ${key} stays`, {
            key,
            code: PLANTED_NO_GIVE_UP,
          });
        }
      }
      return store.put(key, body, options);
    },
  };
}

/**
 * Planted fault `no-give-up`, half 2 of 2 (see {@link noGiveUpView}): the reference census
 * (after a record's drain and seal, before its commit) first reads the manifest of every
 * version it is asked about whose key a breaker holds replaced now, so a manifest replaced
 * after the plan read it stops the run with the format's refusal between its drain and
 * its commit, where its records must be given up.
 */
export function refusingCensus(
  census: ReferenceCensus,
  ctx: ProtocolContext,
  format: DatasetFormat,
  broken: ReadonlyMap<string, unknown>,
): ReferenceCensus {
  return async (branch, versions) => {
    for (const version of versions) {
      if (broken.has(format.manifestKey(branch, version))) {
        await format.readManifest(ctx, branch, version);
      }
    }
    return census(branch, versions);
  };
}

/**
 * `base` whose reference codec censuses through {@link refusingCensus}: the cleaner binds
 * this format, and its run takes the census from it as from any format.
 */
export function refusingCensusFormat(
  base: ReferenceFormat,
  broken: ReadonlyMap<string, unknown>,
): ReferenceFormat {
  return {
    ...base,
    references: {
      ...base.references,
      census: (ctx) => refusingCensus(censusReferences(ctx, { format: base }), ctx, base, broken),
    },
  };
}

/** Code of the refusal the planted fault `floor-above-latest` restores. */
export const RETIRE_LATEST = "RETIRE_LATEST";

/**
 * Planted fault `floor-above-latest` (tests only): a format whose `retireVersionNumbers`
 * refuses as the holdfast format's did before docs/protocol.md §2.1, F1 "A branch torn down
 * under a record": when the branch's head hint has no floor (a teardown deletes the hint
 * first) and its listed latest version is at or below the committed records' highest
 * number, it throws `invalid-input` RETIRE_LATEST instead of raising the floor only to
 * `latest - 1` (or nothing when no version is left). A record a cleaner's drain wrote
 * after `deleteBranch` tore the branch down (a lost answer re-issued, or a drain between
 * the run's read and its write) then stops every run's deletions, and the run fails with an
 * error no actor expects. Otherwise it leaves the floor to `base`.
 */
export function floorAboveLatestFormat(base: DatasetFormat): DatasetFormat {
  return {
    ...base,
    async retireVersionNumbers(ctx, branch, maxRetired) {
      const got = await ctx.store.get(headHintKey(branch));
      const hint = got
        ? (decodeJson(got.body) as { version?: unknown; retiredFloor?: unknown })
        : undefined;
      const floored =
        typeof hint?.version === "number" &&
        typeof hint.retiredFloor === "number" &&
        hint.retiredFloor < hint.version;
      if (!floored) {
        const top = await base.latestVersion(ctx, branch);
        if (top === null || top <= maxRetired) {
          throw holdfastError(
            "invalid-input",
            "cleanup",
            `planted fault floor-above-latest: branch ${branch} has no version above ${maxRetired}: refusing to retire its latest`,
            { code: RETIRE_LATEST },
          );
        }
      }
      await base.retireVersionNumbers?.(ctx, branch, maxRetired);
    },
  };
}
