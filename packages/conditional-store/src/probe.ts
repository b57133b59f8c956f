import { type Clock, type IdSource, type Sleep, systemClock, ulidIds } from "./clock.js";
import { holdfastError } from "./errors.js";
import { joinKey } from "./keys.js";
import { deleteIfMatch, putIfAbsent, putIfMatch } from "./resolve.js";
import type { ObjectStore } from "./types.js";

/** Where probe objects go (one fresh key per probe, removed afterwards). */
export const PROBE_PREFIX = "_holdfast/probe";

/** Options of {@link probeStore} and {@link assertStoreSupported}. */
export interface ProbeOptions {
  /** Source of the probe key's unique id. @default ulidIds() */
  readonly ids?: IdSource | undefined;
  /** Local clock, only for the informational skew. @default systemClock */
  readonly clock?: Clock | undefined;
  /** Pause used if a probe request's answer is lost and re-issued. @default realSleep */
  readonly sleep?: Sleep | undefined;
  /** @default PROBE_PREFIX */
  readonly prefix?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** What a probe observed; `honoured`/`ignored` are observations, not declarations. */
export type ProbeVerdict = "honoured" | "ignored";

/** The result of {@link probeStore}. */
export interface StoreProbeReport {
  readonly backend: string;
  readonly location: string;
  readonly key: string;
  /** A create-only put on an existing key was refused (`honoured`) or overwrote it (`ignored`). */
  readonly createOnly: ProbeVerdict;
  /** A put with a stale `ifMatch` was refused (`honoured`) or applied (`ignored`). */
  readonly conditionalUpdate: ProbeVerdict;
  /** A put with the current ETag (as `put` answered it) applied, as every renewal needs. */
  readonly currentEtagUpdate: "applied" | "refused";
  /** Checked only when the store declares `atomicConditionalDelete`. */
  readonly conditionalDelete: ProbeVerdict | "not-declared";
  readonly timestamps: {
    readonly headLastModified: Date;
    /** `null` if the listing did not show the probe key. */
    readonly listLastModified: Date | null;
    /** 1 when the answer carried sub-second digits, else 1000 (whole seconds). */
    readonly headPrecisionMs: number;
    readonly listPrecisionMs: number | null;
    readonly declaredPrecisionMs: number;
  };
  /** Storage Last-Modified minus the local clock at the write (informational only: protocol math never uses it). */
  readonly clockSkewMs: number;
  readonly cleanedUp: boolean;
  /** Human-readable findings (declared capabilities the store does not meet, coarse timestamps). */
  readonly warnings: readonly string[];
}

/**
 * Probes what a store really does (docs/guarantees.md, conditional requests): create-only
 * twice on a fresh key (the second must conflict), if-match with a stale ETag, conditional
 * delete when declared, timestamp precision of head vs list, and clock skew. Removes its
 * probe object. Conditional writes go through the resolver, like every protocol write.
 */
export async function probeStore(
  store: ObjectStore,
  options: ProbeOptions = {},
): Promise<StoreProbeReport> {
  const ids = options.ids ?? ulidIds();
  const clock = options.clock ?? systemClock;
  const resolve = { sleep: options.sleep, signal: options.signal };
  const key = joinKey(options.prefix ?? PROBE_PREFIX, ids.next());
  const encoder = new TextEncoder();
  const payload = (step: string) => encoder.encode(`${JSON.stringify({ probe: key, step })}\n`);
  const warnings: string[] = [];
  let cleanedUp = false;
  /** Set once the report is built: its own delete was tried already. */
  let reported = false;

  try {
    const before = clock.now();
    const first = await putIfAbsent(store, key, payload("create"), resolve);
    const after = clock.now();
    if (first.status !== "applied") {
      throw holdfastError("unsupported", "probe", `probe key ${key} already existed`, { key });
    }
    const second = await putIfAbsent(store, key, payload("create-again"), resolve);
    const createOnly: ProbeVerdict = second.status === "conflict" ? "honoured" : "ignored";

    const head = await store.head(key, { signal: options.signal });
    if (head === null) {
      throw holdfastError("unsupported", "probe", `probe key ${key} vanished after its write`, {
        key,
      });
    }
    let listed: Date | null = null;
    // Listing with the key itself as prefix finds it in one page, however many probes exist.
    for (const object of (await store.list(key, { signal: options.signal })).objects) {
      if (object.key === key) listed = object.lastModified;
    }
    const headPrecisionMs = head.lastModified.getTime() % 1000 === 0 ? 1000 : 1;
    const listPrecisionMs = listed === null ? null : listed.getTime() % 1000 === 0 ? 1000 : 1;
    const declaredPrecisionMs = store.capabilities.timestampPrecisionMs;
    const observedPrecision = Math.max(headPrecisionMs, listPrecisionMs ?? 1);
    if (observedPrecision > declaredPrecisionMs) {
      warnings.push(
        `${store.backend} reports ${observedPrecision} ms timestamps but declares ${declaredPrecisionMs} ms`,
      );
    }
    if (listPrecisionMs !== null && listPrecisionMs !== headPrecisionMs) {
      warnings.push(
        `head and list report different timestamp precision (${headPrecisionMs} ms vs ${listPrecisionMs} ms): compare them at the coarser`,
      );
    }
    const clockSkewMs = head.lastModified.getTime() - Math.round((before + after) / 2);

    // Stale ETag: take the current one, move the object on unconditionally, CAS with the old.
    const stale = head.etag;
    const moved = await store.put(key, payload("move-on"), { signal: options.signal });
    const staleCas = await putIfMatch(store, key, payload("stale-cas"), stale, resolve);
    let conditionalUpdate: ProbeVerdict = staleCas.status === "conflict" ? "honoured" : "ignored";
    if (stale === moved.etag) {
      // The store kept the ETag for new bytes, so no stale ETag could be made.
      conditionalUpdate = "ignored";
    }
    if (conditionalUpdate === "ignored" && store.capabilities.atomicConditionalUpdate) {
      warnings.push(`${store.backend} declares atomic if-match but applied a stale ETag`);
    }

    // The current ETag, in the form put answers it, must be accepted too: a store that
    // refuses every If-Match (RGW sent a quoted ETag) passes the stale check and would
    // still break every renewal and transition.
    const currentEtag = staleCas.status === "applied" ? staleCas.etag : moved.etag;
    const currentCas = await putIfMatch(store, key, payload("current-cas"), currentEtag, resolve);
    const currentEtagUpdate = currentCas.status === "applied" ? "applied" : "refused";
    if (currentEtagUpdate === "refused" && store.capabilities.atomicConditionalUpdate) {
      warnings.push(`${store.backend} refused an if-match put with the current ETag`);
    }

    let conditionalDelete: ProbeVerdict | "not-declared" = "not-declared";
    if (store.capabilities.atomicConditionalDelete) {
      const current = await store.head(key, { signal: options.signal });
      const staleDelete = await deleteIfMatch(store, key, stale, resolve);
      const after = await store.head(key, { signal: options.signal });
      conditionalDelete =
        staleDelete.status === "conflict" &&
        after !== null &&
        current !== null &&
        after.etag === current.etag
          ? "honoured"
          : "ignored";
      if (conditionalDelete === "ignored") {
        warnings.push(
          `${store.backend} declares atomic conditional delete but ignored a stale If-Match`,
        );
      }
    }
    if (createOnly === "ignored") {
      warnings.push(
        `${store.backend} ignores If-None-Match: a create-only put overwrote an object`,
      );
    }

    // The probe object is the probe's own: a delete whose outcome stays unknown leaves at
    // worst a few bytes under the probe prefix, never an unknown outcome of the caller's
    // work, so it is a warning, not a failure (docs/guarantees.md, "Conditional requests").
    try {
      await store.delete(key, { signal: options.signal });
      cleanedUp = true;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      reported = true;
      warnings.push(
        `probe object ${key} may be left behind (${error instanceof Error ? error.message : String(error)}); it holds nothing and may be deleted`,
      );
    }
    return {
      backend: store.backend,
      location: store.location,
      key,
      createOnly,
      conditionalUpdate,
      currentEtagUpdate,
      conditionalDelete,
      timestamps: {
        headLastModified: head.lastModified,
        listLastModified: listed,
        headPrecisionMs,
        listPrecisionMs,
        declaredPrecisionMs,
      },
      clockSkewMs,
      cleanedUp,
      warnings,
    };
  } finally {
    if (!cleanedUp && !reported) await store.delete(key).catch(() => undefined);
  }
}

/**
 * Refuses a store the protocol cannot run on (docs/guarantees.md, conditional requests): one that ignores `If-None-Match`,
 * or that declares an atomic conditional update or delete it does not honour. Throws kind
 * `unsupported` before any protocol write; returns the probe report otherwise.
 */
export async function assertStoreSupported(
  store: ObjectStore,
  options: ProbeOptions = {},
): Promise<StoreProbeReport> {
  const report = await probeStore(store, options);
  const fail = (message: string, hint: string) =>
    holdfastError("unsupported", "probe", `${store.location}: ${message}`, { hint });
  if (report.createOnly === "ignored") {
    throw fail(
      "the store ignores If-None-Match (a create-only put overwrote an existing object)",
      "holdfast needs atomic create-only puts; use a store that honours If-None-Match: * (AWS S3, Ceph RGW, Azure Blob, a local path)",
    );
  }
  if (report.conditionalUpdate === "ignored" && store.capabilities.atomicConditionalUpdate) {
    throw fail(
      "the store ignores If-Match on put but the backend declares atomicConditionalUpdate",
      "declare atomicConditionalUpdate: false for this store (reference mutations are then refused), or use a store that honours If-Match",
    );
  }
  if (report.currentEtagUpdate === "refused" && store.capabilities.atomicConditionalUpdate) {
    throw fail(
      "the store refused an If-Match put carrying the current ETag",
      "check the ETag form the backend sends (Ceph RGW compares If-Match byte for byte, unquoted)",
    );
  }
  if (report.conditionalDelete === "ignored") {
    throw fail(
      "the store ignores If-Match on delete but the backend declares atomicConditionalDelete",
      "declare atomicConditionalDelete: false for this store (as for Ceph RGW)",
    );
  }
  return report;
}
