import {
  holdfastError,
  type IdSource,
  isHoldfastError,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type ResolveOptions,
  ulidIds,
} from "@holdfast/conditional-store";
import { createS3Store, type S3StoreOptions } from "./s3.js";

export interface OpenS3StoreOptions extends S3StoreOptions {
  /** Re-issue policy and sleep for the probe's conditional puts. @default DEFAULT_REISSUE_POLICY, realSleep */
  probe?: Pick<ResolveOptions, "policy" | "sleep"> | undefined;
  /** Names the probe object. @default ulidIds() */
  ids?: IdSource | undefined;
}

/** What {@link probeS3Store} found the store to do. */
export interface S3ProbeReport {
  /** The probe object's key (removed afterwards). */
  readonly key: string;
  /** `If-Match` must carry the ETag in quotes (AWS) or bare (Ceph RGW compares byte for byte). */
  readonly quoteIfMatch: boolean;
  /** A stale `If-Match` on PutObject was refused. */
  readonly conditionalUpdate: boolean;
  /** A stale `If-Match` on DeleteObject was refused and the current one deleted (false on RGW). */
  readonly conditionalDelete: boolean;
}

/** Folder (under the store's prefix) where the capability probe writes its short-lived object. */
export const S3_PROBE_FOLDER = "_holdfast/probe";

/**
 * Probes the store, then creates an S3 store whose capabilities are what the store really
 * does (docs/guarantees.md, conditional requests): a store that ignores `If-None-Match: *` is refused as `unsupported` before
 * any protocol runs; `If-Match` quoting and conditional delete are detected unless given in
 * the options (an option that claims more than the store honours is refused, never trusted).
 */
export async function openS3Store(options: OpenS3StoreOptions): Promise<ObjectStore> {
  const report = await probeS3Store(options);
  return createS3Store({
    ...options,
    quoteIfMatch: report.quoteIfMatch,
    // Declaring less than the store honours is always allowed; more never is.
    conditionalUpdate: options.conditionalUpdate !== false && report.conditionalUpdate,
    conditionalDelete: report.conditionalDelete,
  });
}

/**
 * Runs the capability probe on one fresh key under `_holdfast/probe/`: create-only twice
 * (the second must conflict), If-Match quoting with the current ETag, a stale If-Match on
 * put, and a stale then current If-Match on delete. Sends each request once (its own
 * single-attempt client), so a conflict it sees is the store's answer to that very request.
 */
export async function probeS3Store(options: OpenS3StoreOptions): Promise<S3ProbeReport> {
  const ids = options.ids ?? ulidIds();
  const resolve = options.probe ?? {};
  // Candidates share every option but quoting; all declare the most so nothing is refused
  // locally before the store has answered.
  const candidate = (quoteIfMatch: boolean) =>
    createS3Store({
      ...options,
      client: "single-attempt",
      quoteIfMatch,
      conditionalUpdate: true,
      conditionalDelete: true,
    });
  const quoted = candidate(true);
  const bare = candidate(false);
  const key = `${S3_PROBE_FOLDER}/${ids.next()}`;
  const bytes = (step: string) => new TextEncoder().encode(`probe ${key} ${step} ${ids.next()}`);
  const unsupported = (what: string, hint: string) =>
    holdfastError("unsupported", "probe", `${quoted.location} ${what}`, { key, hint });

  try {
    const first = await putIfAbsent(quoted, key, bytes("create"), resolve);
    if (first.status !== "applied") {
      throw holdfastError("unresolved", "probe", `probe key ${key} unexpectedly exists`, { key });
    }
    // Different bytes, so a read-back can never mistake this copy for the first one.
    const second = await putIfAbsent(quoted, key, bytes("create-again"), resolve);
    if (second.status === "applied") {
      throw unsupported(
        "ignores If-None-Match: * (a create-only put overwrote an existing object)",
        "holdfast needs atomic create-only puts; check for proxies or gateways that drop the header, or use AWS S3 / Ceph RGW",
      );
    }

    // If-Match quoting: AWS documents quoted ETags; RGW compares the header with its bare
    // ETag byte for byte, so only one form can succeed there.
    let quoteIfMatch = options.quoteIfMatch;
    let casWorks = true;
    if (quoteIfMatch === undefined) {
      quoteIfMatch = true;
      if ((await casWithCurrent(quoted, key, bytes("cas-quoted"), resolve)) === "conflict") {
        if ((await casWithCurrent(bare, key, bytes("cas-bare"), resolve)) === "applied") {
          quoteIfMatch = false;
        } else {
          casWorks = false;
        }
      }
    } else {
      const store = quoteIfMatch ? quoted : bare;
      casWorks = (await casWithCurrent(store, key, bytes("cas"), resolve)) === "applied";
    }
    const chosen = quoteIfMatch ? quoted : bare;

    // A stale ETag must be refused; a store that applies it has no compare-and-swap.
    const staleEtag = "00000000000000000000000000000000";
    const stale = await putIfMatch(chosen, key, bytes("cas-stale"), staleEtag, resolve);
    const conditionalUpdate = casWorks && stale.status === "conflict";
    if (!conditionalUpdate && options.conditionalUpdate === true) {
      throw unsupported(
        "does not honour If-Match on put, but conditionalUpdate: true was requested",
        "drop conditionalUpdate (reference mutations are then refused) or use a store that honours If-Match",
      );
    }

    let conditionalDelete = false;
    if (options.conditionalDelete !== false) {
      conditionalDelete = await probeConditionalDelete(chosen, key, staleEtag);
      if (!conditionalDelete && options.conditionalDelete === true) {
        throw unsupported(
          "ignores If-Match on delete, but conditionalDelete: true was requested",
          "drop conditionalDelete (as for Ceph RGW): holdfast then never relies on conditional delete",
        );
      }
    }
    return { key, quoteIfMatch, conditionalUpdate, conditionalDelete };
  } finally {
    await quoted.delete(key).catch((error: unknown) => {
      // One tiny probe object left behind is harmless; never mask the probe's own answer.
      if (!isHoldfastError(error)) throw error;
    });
  }
}

// --- utils ---

/** A compare-and-swap with the key's current ETag: `applied`, or `conflict` if the store refused it. */
async function casWithCurrent(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  resolve: Pick<ResolveOptions, "policy" | "sleep">,
): Promise<"applied" | "conflict"> {
  const head = await store.head(key);
  if (head === null) {
    throw holdfastError("unresolved", "probe", `probe key ${key} vanished during the probe`, {
      key,
    });
  }
  return (await putIfMatch(store, key, body, head.etag, resolve)).status;
}

/**
 * Deletes with a stale ETag (must be refused, the object must stay), then with the current
 * one (must delete). RGW deletes on the first request: conditional delete is then off.
 */
async function probeConditionalDelete(
  store: ObjectStore,
  key: string,
  staleEtag: string,
): Promise<boolean> {
  const before = await store.head(key);
  if (before === null) return false;
  try {
    await store.delete(key, { ifMatch: staleEtag });
  } catch (error) {
    if (!isHoldfastError(error, "conflict")) throw error;
  }
  const afterStale = await store.head(key);
  if (afterStale === null || afterStale.etag !== before.etag) return false;
  await store.delete(key, { ifMatch: before.etag });
  return (await store.head(key)) === null;
}
