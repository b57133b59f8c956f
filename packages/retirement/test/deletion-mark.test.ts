import { isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import {
  cancelReplaced,
  commit,
  drain,
  isRetiredManifestRewritten,
  RETIRED_MANIFEST_REWRITTEN,
  RetiredManifestRewrittenError,
  readAdmission,
  readRecord,
  seal,
  startDeletion,
  UnresolvedTransitionError,
} from "../src/index.js";
import { memoryContext } from "./helpers.js";

const candidates = [
  { version: 1, manifestEtag: "e1" },
  { version: 2, manifestEtag: "e2" },
  { version: 3, manifestEtag: "e3" },
];
const AT = new Date(Date.UTC(2026, 5, 1, 0, 0, 5));
const manifestKey = (branch: string, version: number) => `_versions/${branch}/${version}.json`;

async function committed(ctx: ReturnType<typeof memoryContext>["ctx"]) {
  return commit(
    ctx,
    await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "01OWNER" })),
  );
}

// docs/protocol.md §5.5: a replaced manifest
// rescues its version only before its record's deletion began (`startDeletion`).
describe("startDeletion and cancelReplaced", () => {
  it("marks a committed record once (fresh bytes, same versions); a marked record is not rewritten again", async () => {
    const { ctx, store } = memoryContext();
    const h = await committed(ctx);
    const marked = await startDeletion(ctx, h, { at: AT });
    expect(marked!.record.state).toBe("committed");
    expect(marked!.record.deletionStartedAt).toBe(AT.toISOString());
    expect(marked!.etag).not.toBe(h.etag);
    expect(marked!.record.versions).toEqual(h.record.versions);
    expect((await readRecord(ctx, h.key))!.record.deletionStartedAt).toBe(AT.toISOString());
    // A resumed run (or another cleaner) finds it marked: no write.
    const watched = new FaultStore(store);
    const again = await startDeletion({ ...ctx, store: watched }, (await readRecord(ctx, h.key))!, {
      at: AT,
    });
    expect(again!.etag).toBe(marked!.etag);
    expect(watched.requests()).toEqual([]);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("committed");
  });

  it("a manifest replaced after the mark cancels nothing: typed refusal naming the manifest and the record, the record kept, leases still refused", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    const marked = await startDeletion(ctx, h, { at: AT });
    const error = await cancelReplaced(ctx, h.key, new Map([[2, "other"]]), {
      handle: marked!,
      manifestKey,
    }).catch((e) => e);
    expect(error).toBeInstanceOf(RetiredManifestRewrittenError);
    expect(isRetiredManifestRewritten(error)).toBe(true);
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error).toMatchObject({
      code: RETIRED_MANIFEST_REWRITTEN,
      key: "_versions/main/2.json",
      recordKey: h.key,
      version: 2,
    });
    const stored = (await readRecord(ctx, h.key))!;
    expect(stored.etag).toBe(marked!.etag);
    expect(stored.record.versions.every((v) => !v.cancelled)).toBe(true);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("committed");
  });

  it("a stale unmarked handle: the cancellation's if-match loses to the mark, the re-read shows the mark, nothing is cancelled", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    await startDeletion(ctx, h, { at: AT }); // another cleaner began deleting
    const error = await cancelReplaced(ctx, h.key, new Map([[3, "other"]]), { handle: h }).catch(
      (e) => e,
    );
    expect(isRetiredManifestRewritten(error)).toBe(true);
    expect(error.key).toBe(h.key); // no manifest key given: the record is named
    expect((await readAdmission(ctx, "main", 3)).state).toBe("committed");
  });

  it("a manifest replaced before the mark is cancelled as before; the marker's stale handle re-reads and marks what the record then says", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    const after = await cancelReplaced(ctx, h.key, new Map([[2, "other"]]), { handle: h });
    expect(after!.record.versions[1]).toMatchObject({ cancelled: true, reason: "changed" });
    expect((await readAdmission(ctx, "main", 2)).state).toBe("open");
    const marked = await startDeletion(ctx, h, { at: AT });
    expect(marked!.record.deletionStartedAt).toBe(AT.toISOString());
    expect(marked!.record.versions.map((v) => v.cancelled)).toEqual([false, true, false]);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("open");
    // Later writes keep the mark.
    expect((await readRecord(ctx, h.key))!.record.deletionStartedAt).toBe(AT.toISOString());
  });

  it("a record gone returns null; a record no longer committed is returned unwritten", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    const all = new Map([
      [1, "x"],
      [2, "y"],
      [3, "z"],
    ]);
    const cancelled = await cancelReplaced(ctx, h.key, all, { handle: h });
    expect(cancelled!.record.state).toBe("cancelled");
    const left = await startDeletion(ctx, h, { at: AT });
    expect(left!.record.state).toBe("cancelled");
    expect(left!.record.deletionStartedAt).toBeUndefined();
    await ctx.store.delete(h.key);
    expect(await startDeletion(ctx, h, { at: AT })).toBeNull();
  });

  it("invariant 4: a lost answer to the mark is re-issued and read back as ours", async () => {
    const { ctx, store } = memoryContext();
    const h = await committed(ctx);
    const fault = new FaultStore(store).on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match" },
      { type: "apply-then-lose" },
    );
    const marked = await startDeletion({ ...ctx, store: fault }, h, { at: AT });
    expect(marked!.record.deletionStartedAt).toBe(AT.toISOString());
    expect((await readRecord(ctx, h.key))!.record.writerId).toBe(marked!.record.writerId);
  });

  it("invariant 4: a mark whose outcome stays unknown throws unresolved (the caller deletes nothing)", async () => {
    const { ctx, store } = memoryContext();
    const h = await committed(ctx);
    const fault = new FaultStore(store);
    fault.on({ operation: "put", precondition: "if-match" }, { type: "lose-before-apply" });
    fault.on(
      { operation: "put", precondition: "if-match", nth: 2, times: 10 },
      { type: "lose-before-apply" },
    );
    const error = await startDeletion({ ...ctx, store: fault }, h, { at: AT }).catch((e) => e);
    expect(error).toBeInstanceOf(UnresolvedTransitionError);
    expect(isHoldfastError(error, "unresolved")).toBe(true);
    expect((await readRecord(ctx, h.key))!.record.deletionStartedAt).toBeUndefined();
  });

  it("refuses an invalid storage time before any request", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    const error = await startDeletion(ctx, h, { at: new Date(Number.NaN) }).catch((e) => e);
    expect(isHoldfastError(error, "invalid-input")).toBe(true);
    expect((await readRecord(ctx, h.key))!.etag).toBe(h.etag);
  });
});
