import {
  encodeJson,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type ResolveOptions,
} from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { validateName } from "@holdfast/protocol";
import {
  CONTROL_PREFIX,
  NameSchema,
  parseStored,
  UlidSchema,
  VersionNumberSchema,
} from "@holdfast/protocol/internal";
import { z } from "zod";

/**
 * Head hints (docs/protocol.md §2): `_holdfast/heads/{branch}.json` names a version of the
 * branch and the branch's retired floor, the highest version number cleanup may have
 * deleted. Every commit moves the hint to its own version with an if-match write, and
 * cleanup raises the floor (if-match too) before it deletes a manifest, so no manifest
 * above the floor is ever deleted. That lets a commit put `version + 1` straight away,
 * without listing the branch, and prove afterwards that the number was fresh.
 */
export const HEADS_PREFIX = `${CONTROL_PREFIX}heads/`;

/** A version number, or 0 for "none" (the floor of a branch nothing was deleted from). */
const FloorSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * Body of a head hint (zod, schema 1). `txnId` is the commit (or cleanup) that wrote it:
 * fresh bytes per write. `retiredFloor` is absent on hints of writers that predate it;
 * such a hint is only a starting point for a listing.
 */
export const HeadHintSchema = z.looseObject({
  schema: z.literal(1),
  branch: NameSchema,
  version: VersionNumberSchema,
  txnId: UlidSchema,
  retiredFloor: FloorSchema.optional(),
});
export type HeadHint = z.infer<typeof HeadHintSchema>;

/** `_holdfast/heads/{branch}.json` */
export function headHintKey(branch: string): string {
  return `${HEADS_PREFIX}${validateName(branch, "branch")}.json`;
}

/**
 * The hint as read: its version and retired floor (`null` when the object is malformed,
 * names another branch, or has no usable floor) and its ETag; `null` when absent.
 */
export interface StoredHeadHint {
  readonly version: number | null;
  readonly retiredFloor: number | null;
  readonly etag: string;
}

/** Reads the branch's head hint (1 GET). A malformed hint reads as `version: null`, never as an error. */
export async function readHeadHint(
  ctx: ProtocolContext,
  branch: string,
  signal?: AbortSignal,
): Promise<StoredHeadHint | null> {
  const key = headHintKey(branch);
  const got = await ctx.store.get(key, { signal });
  if (!got) return null;
  try {
    const hint = parseStored(HeadHintSchema, got.body, key, "latestVersion");
    if (hint.branch !== branch) return { version: null, retiredFloor: null, etag: got.etag };
    // A floor at or above the version breaks the hint's own rule: not one to probe above.
    const floor = hint.retiredFloor;
    const retiredFloor = floor !== undefined && floor < hint.version ? floor : null;
    return { version: hint.version, retiredFloor, etag: got.etag };
  } catch {
    return { version: null, retiredFloor: null, etag: got.etag };
  }
}

/** A hint a commit may probe above: `version + 1` is fresh unless it already exists. */
export type ProbeHint = StoredHeadHint & {
  readonly version: number;
  readonly retiredFloor: number;
};

/**
 * Whether a commit may put `hint.version + 1` without listing: the hint has a floor below
 * its version, and the store compares ETags atomically (the proof after the put rests on
 * the if-match write of the hint failing when anyone moved it).
 */
export function canProbe(store: ObjectStore, hint: StoredHeadHint | null): hint is ProbeHint {
  return (
    store.capabilities.atomicConditionalUpdate &&
    hint !== null &&
    hint.version !== null &&
    hint.retiredFloor !== null
  );
}

/** No re-issue: a lost hint write is decided by reading the hint again (or dropped). */
const ONE_ATTEMPT: ResolveOptions["policy"] = { pausesMs: [] };

type HintWrite = "applied" | "conflict" | "unknown";

/** One write of the hint: create-only when `previous` is `null`, else if-match on its ETag. */
export async function putHint(
  ctx: ProtocolContext,
  branch: string,
  next: { version: number; retiredFloor: number },
  previous: StoredHeadHint | null,
  options: ResolveOptions,
): Promise<"applied" | "conflict"> {
  const key = headHintKey(branch);
  const body = hintBody(ctx, branch, next);
  const outcome =
    previous === null
      ? await putIfAbsent(ctx.store, key, body, options)
      : await putIfMatch(ctx.store, key, body, previous.etag, options);
  return outcome.status;
}

/** {@link putHint} that never throws: any failure is an unknown outcome. */
async function writeHint(...args: Parameters<typeof putHint>): Promise<HintWrite> {
  return putHint(...args).catch(() => "unknown" as const);
}

/**
 * After a commit of `version` found by listing: moves the hint to it (backwards too, when
 * the branch was re-created below an old hint), best-effort (one attempt; a failure only
 * makes the next commit list again). `retiredFloor` is what the
 * commit knows bounds every deletion: the floor it read, or one below the latest version
 * its listing found (cleanup never deletes a branch's latest version).
 */
export async function advanceHeadHint(
  ctx: ProtocolContext,
  branch: string,
  version: number,
  retiredFloor: number,
  hint: StoredHeadHint | null,
): Promise<void> {
  // Without atomic compare-and-swap the hint is created once and never advanced.
  if (hint !== null && !ctx.store.capabilities.atomicConditionalUpdate) return;
  await writeHint(ctx, branch, { version, retiredFloor }, hint, {
    policy: ONE_ATTEMPT,
    sleep: ctx.sleep,
  });
}

/**
 * Decides a commit that put `hint.version + 1` without listing (docs/protocol.md §2.2). `fresh`: no
 * version above it existed, the number was never used, the commit is the branch's latest. Otherwise
 * the caller must list to decide, and gets the hint as read again to write from.
 *
 * The if-match write of the hint applying proves it: nobody wrote the hint between the
 * commit's read and this write, so no cleanup raised the floor, so no manifest above the
 * floor it read was deleted meanwhile (nor before: the floor bounds every deletion), and
 * above the floor versions have no gaps. When the write does not apply, the hint is read
 * again: a floor still below the version proves the same.
 */
export async function settleProbe(
  ctx: ProtocolContext,
  branch: string,
  version: number,
  hint: ProbeHint,
): Promise<{ fresh: boolean; hint: StoredHeadHint | null }> {
  const once = { policy: ONE_ATTEMPT, sleep: ctx.sleep };
  const next = { version, retiredFloor: hint.retiredFloor };
  if ((await writeHint(ctx, branch, next, hint, once)) === "applied") {
    return { fresh: true, hint: null };
  }
  const now = await readHeadHint(ctx, branch);
  if (now?.retiredFloor == null || now.version === null || now.retiredFloor >= version) {
    return { fresh: false, hint: now };
  }
  // Someone else moved the hint (a concurrent commit, or a cleanup below our version).
  if (now.version < version) {
    await writeHint(ctx, branch, { version, retiredFloor: now.retiredFloor }, now, once);
  }
  return { fresh: true, hint: null };
}

function hintBody(
  ctx: ProtocolContext,
  branch: string,
  next: { version: number; retiredFloor: number },
): Uint8Array {
  return encodeJson({
    schema: 1,
    branch,
    version: next.version,
    txnId: ctx.ids.next(),
    retiredFloor: next.retiredFloor,
  } satisfies HeadHint);
}
