import {
  encodeJson,
  type ObjectStore,
  putIfAbsent,
  putIfMatch,
  type ResolveOptions,
} from "@holdfast/conditional-store";
import { z } from "zod";
import type { ProtocolContext } from "./context.js";
import { CONTROL_PREFIX } from "./layout.js";
import { NameSchema, UlidSchema, VersionNumberSchema } from "./manifest.js";
import { validateName } from "./names.js";
import { parseStored } from "./stored.js";

/**
 * Head hints: `_holdfast/heads/{branch}.json` names a version of the branch that existed
 * when a commit wrote it. Finding the latest version starts listing there instead of at
 * version 1, so a commit costs the same on a branch of 10 versions and of 100,000. A hint
 * is only a starting point, never trusted as the answer (docs/protocol.md §2): the listing
 * from the hint sees every version at or above it, and a hint with nothing at or above it
 * (the branch was deleted and re-created) falls back to the full search.
 */
export const HEADS_PREFIX = `${CONTROL_PREFIX}heads/`;

/**
 * A commit rewrites the hint when it is missing or at least this many versions behind the
 * version just committed: the listing from a hint then returns at most this many keys, one
 * small page, and most commits skip the extra write.
 */
export const HEAD_HINT_STRIDE = 32;

/** Body of a head hint (zod, schema 1). `txnId` is the commit that wrote it (fresh bytes per write). */
export const HeadHintSchema = z.looseObject({
  schema: z.literal(1),
  branch: NameSchema,
  version: VersionNumberSchema,
  txnId: UlidSchema,
});
export type HeadHint = z.infer<typeof HeadHintSchema>;

/** `_holdfast/heads/{branch}.json` */
export function headHintKey(branch: string): string {
  return `${HEADS_PREFIX}${validateName(branch, "branch")}.json`;
}

/** The hint as read: its version (`null` when the object is malformed) and ETag; `null` when absent. */
export interface StoredHeadHint {
  readonly version: number | null;
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
    return { version: hint.branch === branch ? hint.version : null, etag: got.etag };
  } catch {
    return { version: null, etag: got.etag };
  }
}

/** Whether a commit of `version` should rewrite the hint it read (see {@link HEAD_HINT_STRIDE}). */
export function headHintIsStale(hint: StoredHeadHint | null, version: number): boolean {
  return (
    hint === null ||
    hint.version === null ||
    hint.version > version ||
    version - hint.version >= HEAD_HINT_STRIDE
  );
}

/** No re-issue: a lost hint write is dropped, it only costs a later commit a longer listing. */
const ONE_ATTEMPT: ResolveOptions["policy"] = { pausesMs: [] };

/**
 * Best-effort rewrite of the hint after a commit of `version` landed: create-only when
 * there was none, else if-match on the ETag read before the commit, so two committers
 * never move it backwards (the loser's write conflicts and is dropped). Any failure is
 * swallowed: the commit already succeeded, and a stale or missing hint only makes the
 * next search list a little more.
 */
export async function advanceHeadHint(
  ctx: ProtocolContext,
  branch: string,
  version: number,
  txnId: string,
  hint: StoredHeadHint | null,
): Promise<void> {
  if (!headHintIsStale(hint, version)) return;
  const key = headHintKey(branch);
  const body = encodeJson({ schema: 1, branch, version, txnId } satisfies HeadHint);
  const options: ResolveOptions = { policy: ONE_ATTEMPT, sleep: ctx.sleep };
  try {
    if (hint === null) await putIfAbsent(ctx.store, key, body, options);
    else if (canCompareAndSwap(ctx.store)) {
      await putIfMatch(ctx.store, key, body, hint.etag, options);
    }
  } catch {
    // Advisory object: see above.
  }
}

function canCompareAndSwap(store: ObjectStore): boolean {
  return store.capabilities.atomicConditionalUpdate;
}
