import {
  decodeJson,
  deleteIfMatch,
  holdfastError,
  putIfAbsent,
  putIfMatch,
  writerPayload,
} from "@holdfast/conditional-store";
import { type ProtocolContext, resolverOptions, storageNow } from "@holdfast/dataset";
import { z } from "zod";

/** Where a dataset's cleanup lock lives (one per dataset, beside the protocol's own objects). */
export const CLEANUP_LOCK_KEY = "_holdfast/server/cleanup-lock.json";

const LockBodySchema = z.looseObject({
  schema: z.literal(1),
  owner: z.string(),
  jobId: z.string(),
  boundMs: z.number().int().positive(),
  writerId: z.string(),
});

/** A cleanup lock this replica holds. */
export interface CleanupLock {
  readonly key: string;
  /** True when this replica took the lock over from one whose bound had run out. */
  readonly tookOver: boolean;
  /** Previous holder, when taken over. */
  readonly previousOwner: string | null;
  /** Stops the refresher and deletes the lock if it is still ours. */
  release(): Promise<void>;
}

/**
 * Takes the dataset's cleanup lock so one cleanup runs at a time across every replica,
 * decided by the store itself: a create-only put, or, when the current holder's last write
 * is older than its bound in storage time (it died), a compare-and-swap over its ETag.
 * The holder refreshes the lock (if-match rewrite) every third of the bound. Returns null
 * when another live replica holds it. The lock saves duplicate work; safety never rests on
 * it (the retirement protocol is safe under concurrent cleaners).
 */
export async function acquireCleanupLock(
  ctx: ProtocolContext,
  options: { owner: string; jobId: string; boundMs: number },
): Promise<CleanupLock | null> {
  const body = (jobId: string) =>
    writerPayload({ schema: 1, owner: options.owner, jobId, boundMs: options.boundMs }, ctx.ids)
      .bytes;
  const created = await putIfAbsent(
    ctx.store,
    CLEANUP_LOCK_KEY,
    body(options.jobId),
    resolverOptions(ctx),
  );
  if (created.status === "applied") return held(ctx, created.etag, false, null, options, body);

  const current = await ctx.store.get(CLEANUP_LOCK_KEY);
  if (!current) return null; // released meanwhile: the next attempt will take it
  const parsed = LockBodySchema.safeParse(safeDecode(current.body));
  const bound = parsed.success ? parsed.data.boundMs : options.boundMs;
  const now = await storageNow(ctx);
  // One extra second covers whole-second Last-Modified stamps.
  if (current.lastModified.getTime() + bound + 1000 >= now.getTime()) return null;
  const taken = await putIfMatch(
    ctx.store,
    CLEANUP_LOCK_KEY,
    body(options.jobId),
    current.etag,
    resolverOptions(ctx),
  );
  if (taken.status !== "applied") return null;
  return held(ctx, taken.etag, true, parsed.success ? parsed.data.owner : null, options, body);
}

// --- utils ---

function held(
  ctx: ProtocolContext,
  firstEtag: string,
  tookOver: boolean,
  previousOwner: string | null,
  options: { jobId: string; boundMs: number },
  body: (jobId: string) => Uint8Array,
): CleanupLock {
  let etag: string | null = firstEtag;
  let refreshing: Promise<void> = Promise.resolve();
  const timer = setInterval(
    () => {
      refreshing = (async () => {
        if (etag === null) return;
        const outcome = await putIfMatch(
          ctx.store,
          CLEANUP_LOCK_KEY,
          body(options.jobId),
          etag,
          resolverOptions(ctx),
        ).catch(() => null);
        // Lost (or unknown): stop refreshing; another replica may take over after the bound.
        etag = outcome?.status === "applied" ? outcome.etag : null;
      })();
    },
    Math.max(50, Math.floor(options.boundMs / 3)),
  );
  timer.unref();
  return {
    key: CLEANUP_LOCK_KEY,
    tookOver,
    previousOwner,
    async release() {
      clearInterval(timer);
      await refreshing;
      const mine = etag;
      etag = null;
      if (mine === null) return;
      if (ctx.store.capabilities.atomicConditionalDelete) {
        await deleteIfMatch(ctx.store, CLEANUP_LOCK_KEY, mine, resolverOptions(ctx)).catch(
          () => undefined,
        );
        return;
      }
      // Without conditional delete (RGW): delete only if the lock still holds our write.
      const current = await ctx.store.head(CLEANUP_LOCK_KEY);
      if (current?.etag === mine) await ctx.store.delete(CLEANUP_LOCK_KEY);
    },
  };
}

function safeDecode(bytes: Uint8Array): unknown {
  try {
    return decodeJson(bytes);
  } catch {
    return null;
  }
}

/** Thrown to an API caller when another replica is cleaning the dataset. */
export function cleanupBusy(dataset: string): Error {
  return holdfastError("conflict", "cleanup", `a cleanup of ${dataset} is running on a replica`, {
    code: "CLEANUP_RUNNING",
    hint: "wait for it to finish (GET .../cleanup/jobs), then retry",
  });
}
