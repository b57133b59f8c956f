import {
  deleteIfMatch,
  encodeJson,
  holdfastError,
  putIfAbsent,
  putIfMatch,
} from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import { resolverOptions } from "@holdfast/protocol/internal";
import { fenceKey } from "./layout.js";
import { deleteUnconditionally, readFence } from "./objects.js";
import type { BranchDocument, Fence } from "./schema.js";

/**
 * Publishes the incarnation-termination fence before the dependency census. A fence an
 * earlier, interrupted (or concurrent) deletion of the same branch left is taken over
 * with an if-match rewrite: both deletions want the same outcome, and the earlier one only
 * ever removes a fence that still carries its own writer id.
 */
export async function publishFence(
  ctx: ProtocolContext,
  branch: string,
  doc: BranchDocument,
  intentId: string,
): Promise<string> {
  const key = fenceKey(branch);
  const fence: Fence = {
    schema: 1,
    branch,
    incarnation: doc.incarnation ?? null,
    intentId,
    writerId: ctx.ids.next(),
  };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const existing = await readFence(ctx, key);
    if (existing?.fence.intentId === intentId) return existing.fence.writerId; // resuming our own
    const outcome = existing
      ? await putIfMatch(ctx.store, key, encodeJson(fence), existing.etag, resolverOptions(ctx))
      : await putIfAbsent(ctx.store, key, encodeJson(fence), resolverOptions(ctx));
    if (outcome.status === "applied") return fence.writerId;
  }
  throw holdfastError(
    "conflict",
    "deleteBranch",
    `branch ${branch} is being deleted concurrently`,
    {
      key,
      code: "BRANCH_DELETING",
      hint: "retry the deletion",
    },
  );
}

/** Removes the fence if it is still the one `writerId` (or, with `null`, intent `intentId`) wrote. */
export async function removeFence(
  ctx: ProtocolContext,
  branch: string,
  writerId: string | null,
  intentId?: string,
): Promise<void> {
  const key = fenceKey(branch);
  const existing = await readFence(ctx, key);
  if (!existing) return;
  const ours =
    writerId !== null ? existing.fence.writerId === writerId : existing.fence.intentId === intentId;
  if (!ours) return;
  if (ctx.store.capabilities.atomicConditionalDelete) {
    // A deletion that took the fence over since our read keeps it.
    await deleteIfMatch(ctx.store, key, existing.etag, resolverOptions(ctx));
  } else {
    // No conditional DELETE (RGW): a takeover in this window loses its fence, which only
    // matters while the branch file still exists; a child admitted then is removed by
    // recovery as an orphan once the branch's versions are gone.
    await deleteUnconditionally(ctx, key);
  }
}
