import { FaultStore } from "@holdfast/conditional-store/testing";
import { describe, expect, it } from "vitest";
import {
  cancelReplaced,
  cancelVersions,
  commit,
  drain,
  readAdmission,
  readRecord,
  seal,
} from "../src/index.js";
import { memoryContext } from "./helpers.js";

const candidates = [
  { version: 1, manifestEtag: "e1" },
  { version: 2, manifestEtag: "e2" },
  { version: 3, manifestEtag: "e3" },
];

async function committed(ctx: ReturnType<typeof memoryContext>["ctx"]) {
  return commit(
    ctx,
    await seal(ctx, await drain(ctx, { branch: "main", versions: candidates, owner: "01OWNER" })),
  );
}

// docs/protocol.md §5.5: committed → committed `cancelReplaced`.
describe("cancelReplaced", () => {
  it("cancels only the versions whose manifest key holds another ETag; they open at once, the rest stay committed", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    const after = await cancelReplaced(
      ctx,
      h.key,
      new Map([
        [2, "other"],
        [3, "e3"],
      ]),
      { handle: h },
    );
    expect(after!.record.state).toBe("committed");
    expect(after!.etag).not.toBe(h.etag);
    expect(after!.record.writerId).not.toBe(h.record.writerId);
    expect(after!.record.versions).toEqual([
      { version: 1, manifestEtag: "e1", cancelled: false },
      { version: 2, manifestEtag: "e2", cancelled: true, reason: "changed" },
      { version: 3, manifestEtag: "e3", cancelled: false },
    ]);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("open");
    expect((await readAdmission(ctx, "main", 1)).state).toBe("committed");
    expect((await readAdmission(ctx, "main", 3)).state).toBe("committed");
  });

  it("one winner: a stale handle conflicts, the record is read again and the cancellation lands on what it then says", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    // Another cleaner cancelled version 1 meanwhile (its own replaced manifest).
    await cancelVersions(ctx, h, new Map([[1, "changed"]]));
    const after = await cancelReplaced(ctx, h.key, new Map([[3, "other"]]), { handle: h });
    expect(after!.record.versions.map((v) => v.cancelled)).toEqual([true, false, true]);
    expect((await readRecord(ctx, h.key))!.etag).toBe(after!.etag);
  });

  it("a record whose every version is replaced ends cancelled; a record gone returns null; a pre-commit record is left alone", async () => {
    const { ctx } = memoryContext();
    const h = await committed(ctx);
    const all = new Map([
      [1, "x"],
      [2, "y"],
      [3, "z"],
    ]);
    expect((await cancelReplaced(ctx, h.key, all))!.record.state).toBe("cancelled");
    await ctx.store.delete(h.key);
    expect(await cancelReplaced(ctx, h.key, all)).toBeNull();
    const sealed = await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: candidates, owner: "01OWNER" }),
    );
    const left = await cancelReplaced(ctx, sealed.key, all);
    expect(left!.etag).toBe(sealed.etag);
    expect(left!.record.state).toBe("sealed");
  });

  it("invariant 4: a lost answer to the rewrite is re-issued and read back as ours", async () => {
    const { ctx, store } = memoryContext();
    const h = await committed(ctx);
    const fault = new FaultStore(store).on(
      { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match" },
      { type: "apply-then-lose" },
    );
    const after = await cancelReplaced({ ...ctx, store: fault }, h.key, new Map([[2, "other"]]), {
      handle: h,
    });
    expect(after!.record.versions[1]).toMatchObject({ cancelled: true, reason: "changed" });
    expect((await readRecord(ctx, h.key))!.record.writerId).toBe(after!.record.writerId);
  });
});
