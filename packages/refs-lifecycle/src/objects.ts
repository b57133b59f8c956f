import {
  classifyFailure,
  deleteIfMatch,
  encodeJson,
  type GetResult,
  holdfastError,
  isHoldfastError,
  listAll,
  putIfAbsent,
  putIfMatch,
} from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { parseStored, resolverOptions } from "@holdfast/protocol/internal";
import type { CanonicalDocument, ReferenceCodec, WrittenTarget } from "./codec.js";
import { canonicalKey, canonicalPrefix, nameFromCanonicalKey } from "./layout.js";
import {
  type BranchDocument,
  type Fence,
  FenceSchema,
  type Intent,
  IntentSchema,
  type ReferenceKind,
  type TagDocument,
} from "./schema.js";

/** A canonical document with its object identity. */
export interface StoredCanonical<D> {
  readonly key: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly doc: D;
}

export type { CanonicalDocument } from "./codec.js";

/** Parses a canonical object with the format's codec; a malformed one is `invalid-input` (callers fail closed). */
export function parseCanonical<K extends ReferenceKind>(
  codec: ReferenceCodec,
  kind: K,
  got: GetResult,
): StoredCanonical<K extends "tag" ? TagDocument : BranchDocument> {
  const doc = codec.decode(kind, got.body, got.key);
  return {
    key: got.key,
    etag: got.etag,
    lastModified: got.lastModified,
    doc: doc as K extends "tag" ? TagDocument : BranchDocument,
  };
}

/** Reads one canonical reference; `null` when absent. */
export async function readCanonical<K extends ReferenceKind>(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  kind: K,
  name: string,
): Promise<StoredCanonical<K extends "tag" ? TagDocument : BranchDocument> | null> {
  const got = await ctx.store.get(canonicalKey(kind, name));
  return got ? parseCanonical(codec, kind, got) : null;
}

/** Streams every canonical reference of a kind (list, then get each; vanished ones skipped). */
export async function* listCanonical<K extends ReferenceKind>(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  kind: K,
): AsyncGenerator<
  { name: string } & StoredCanonical<K extends "tag" ? TagDocument : BranchDocument>
> {
  for await (const meta of listAll(ctx.store, canonicalPrefix(kind))) {
    const name = nameFromCanonicalKey(kind, meta.key);
    if (name === null) continue;
    const got = await ctx.store.get(meta.key);
    if (!got) continue; // deleted between list and get
    yield { name, ...parseCanonical(codec, kind, got) };
  }
}

/**
 * If-match rewrite of a canonical with the given content and a fresh generation: the bytes
 * always change, so the ETag changes even where it is the content MD5 (R9) and any stale
 * compare-and-swap against `etag` conflicts afterwards (R5).
 */
export async function rewriteIfMatch<D extends CanonicalDocument>(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  key: string,
  etag: string,
  doc: D,
  written: WrittenTarget = {},
): Promise<{ status: "applied"; etag: string; doc: D } | { status: "conflict" }> {
  const fresh = { ...doc, generation: codec.newGeneration(ctx) } as D;
  const outcome = await putIfMatch(
    ctx.store,
    key,
    codec.encode(kindOf(key), fresh, written),
    etag,
    resolverOptions(ctx),
  );
  return outcome.status === "applied"
    ? { status: "applied", etag: outcome.etag, doc: fresh }
    : { status: "conflict" };
}

/**
 * Removes a canonical only while it is at `etag`. Where the store honours conditional
 * delete this is one `deleteIfMatch`; elsewhere (RGW ignores If-Match on DELETE) it first
 * moves the object to fresh bytes with an if-match rewrite, which fences every stale
 * writer, and then deletes unconditionally (docs/protocol.md §5).
 */
export async function removeIfMatch(
  ctx: ProtocolContext,
  codec: ReferenceCodec,
  key: string,
  etag: string,
  doc: CanonicalDocument,
): Promise<"applied" | "conflict"> {
  if (ctx.store.capabilities.atomicConditionalDelete) {
    const outcome = await deleteIfMatch(ctx.store, key, etag, resolverOptions(ctx));
    return outcome.status;
  }
  const fenced = await rewriteIfMatch(ctx, codec, key, etag, doc);
  if (fenced.status === "conflict") return "conflict";
  await deleteUnconditionally(ctx, key);
  return "applied";
}

/** The kind of a canonical key (`_refs/tags/...` or `_refs/branches/...`). */
function kindOf(key: string): ReferenceKind {
  return key.startsWith(canonicalPrefix("tag")) ? "tag" : "branch";
}

/**
 * Unconditional delete with a read-back on failure: absent → done; a refusal stands as
 * the definite failure it is; anything else → `unresolved`.
 */
export async function deleteUnconditionally(ctx: ProtocolContext, key: string): Promise<void> {
  try {
    await ctx.store.delete(key);
    return;
  } catch (error) {
    const answer = classifyFailure(error, ctx.store.capabilities.requestMode);
    let present: boolean;
    try {
      present = (await ctx.store.head(key)) !== null;
    } catch (readError) {
      throw holdfastError("unresolved", "delete", `outcome of delete of ${key} is unknown`, {
        key,
        cause: readError,
      });
    }
    if (!present) return;
    if (answer === "refused") throw error;
    throw holdfastError("unresolved", "delete", `outcome of delete of ${key} is unknown`, {
      key,
      cause: error,
    });
  }
}

// --- intents and fences ---

/** An intent with its object identity. */
export interface StoredIntent {
  readonly key: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly intent: Intent;
}

/** Writes an intent create-only (its key is unique, so only a lost answer can make this unclear). */
export async function writeIntent(
  ctx: ProtocolContext,
  key: string,
  intent: Intent,
): Promise<{ etag: string }> {
  const outcome = await putIfAbsent(ctx.store, key, encodeJson(intent), resolverOptions(ctx));
  if (outcome.status === "conflict") {
    // Fresh ULID key: another object there means the id source repeated itself.
    throw holdfastError("conflict", "put", `intent key ${key} already taken`, {
      key,
      code: "INTENT_KEY_TAKEN",
    });
  }
  return { etag: outcome.etag };
}

/** Reads an intent; `null` when absent. Malformed → MALFORMED_OBJECT (fail closed). */
export async function readIntent(ctx: ProtocolContext, key: string): Promise<StoredIntent | null> {
  const got = await ctx.store.get(key);
  if (!got) return null;
  return {
    key,
    etag: got.etag,
    lastModified: got.lastModified,
    intent: parseStored(IntentSchema, got.body, key, "readIntent"),
  };
}

/** Streams the intents under `prefix` (list, then get each not skipped; vanished ones skipped). */
export async function* listIntents(
  ctx: ProtocolContext,
  prefix: string,
  skip?: (key: string) => boolean,
): AsyncGenerator<StoredIntent> {
  for await (const meta of listAll(ctx.store, prefix)) {
    if (!meta.key.endsWith(".json") || skip?.(meta.key)) continue;
    const stored = await readIntent(ctx, meta.key);
    if (stored) yield stored;
  }
}

/**
 * Revokes an intent: if-match rewrite to `fenced` with a fresh writerId (bytes change, so
 * this fences on content-hash stores too). Its owner then no longer owns it.
 */
export async function fenceIntent(
  ctx: ProtocolContext,
  stored: StoredIntent,
  fencedBy: string,
): Promise<"applied" | "conflict"> {
  const fenced: Intent = { ...stored.intent, state: "fenced", writerId: ctx.ids.next(), fencedBy };
  const outcome = await putIfMatch(
    ctx.store,
    stored.key,
    encodeJson(fenced),
    stored.etag,
    resolverOptions(ctx),
  );
  return outcome.status;
}

/** True while the intent at `key` is present, pending and still carries `writerId`. */
export async function ownsIntent(
  ctx: ProtocolContext,
  key: string,
  writerId: string,
): Promise<boolean> {
  const stored = await readIntent(ctx, key);
  return (
    stored !== null && stored.intent.state === "pending" && stored.intent.writerId === writerId
  );
}

/** Deletes an intent (its own key; unconditional is safe: nobody else writes it but fencers). */
export async function dropIntent(ctx: ProtocolContext, key: string): Promise<void> {
  await deleteUnconditionally(ctx, key);
}

/** Reads a branch's termination fence; `null` when absent. */
export async function readFence(
  ctx: ProtocolContext,
  key: string,
): Promise<{ etag: string; fence: Fence } | null> {
  const got = await ctx.store.get(key);
  if (!got) return null;
  return { etag: got.etag, fence: parseStored(FenceSchema, got.body, key, "readFence") };
}

/** True for errors that leave an outcome unknown (the caller keeps its intent). */
export function isUnknownOutcome(error: unknown): boolean {
  return isHoldfastError(error, "unresolved", "ambiguous", "in-flight");
}
