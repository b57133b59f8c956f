import { decodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { manifestKey } from "@holdfast/dataset";
import { commit, readAdmission, recoverRetirements } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import {
  canonicalKey,
  censusReferences,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  getBranch,
  getTag,
  holdfastFormat,
  listBranches,
  listTags,
  recoverReferences,
  releasedTagSchema,
  replaceBranchMetadata,
  updateTag,
} from "../src/index.js";
import {
  commits,
  gate,
  keysUnder,
  releasedReadAll,
  releasedRewrite,
  sealVersions,
  world,
} from "./support.js";

const MINUTE = 60_000;
const TAG_T = canonicalKey("tag", "t");
const noLeases = async () => new Map<number, string>();

/** The two store flavours every race runs on: Azure-like and RGW-like (ETag = MD5, no conditional delete). */
const STORES = [
  { label: "unique etags", memory: {} },
  {
    label: "RGW-like",
    memory: { etagMode: "content-md5" as const, conditionalDelete: false },
  },
];

async function failure(promise: Promise<unknown>): Promise<{ kind: string; code?: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isHoldfastError(error), `expected a HoldfastError, got ${String(error)}`).toBe(true);
  return error as { kind: string; code?: string };
}

describe.each(STORES)("references on $label store", ({ memory: memoryOptions }) => {
  it("R1 branch metadata replacement cannot resurrect a concurrently deleted branch", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "child", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const key = canonicalKey("branch", "child");
    const paused = gate();
    faults.on({ operation: "put", key, precondition: "if-match" }, paused.step);

    const replacing = replaceBranchMetadata(
      ctx,
      { name: "child", metadata: { k: "v" } },
      { format: holdfastFormat },
    );
    await paused.reached; // it read the branch, wrote its intent, and holds its if-match
    await deleteBranch(ctx, "child", { format: holdfastFormat });
    paused.release();

    expect((await failure(replacing)).kind).toBe("conflict");
    expect(await getBranch(ctx, "child", { format: holdfastFormat })).toBeNull();
    expect(await memory.get(key)).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R2 an expired pending create intent cannot resurrect a deleted reference", async () => {
    const { ctx, faults, memory, time } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    // The create lands, then its process dies before removing the intent.
    faults.on(
      { operation: "delete", key: /^_holdfast\/refs\/intents\// },
      { type: "throw", error: new Error("process killed") },
    );
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    expect(keysUnder(memory, "_holdfast/refs/intents/")).toHaveLength(1);
    // The reference is deleted (out of band, as a crash-free observer sees it: gone).
    await memory.delete(TAG_T);
    await time.advance(16 * MINUTE);

    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.fencedIntents).toHaveLength(1);
    expect(await memory.get(TAG_T)).toBeNull();
    expect(await getTag(ctx, "t", { format: holdfastFormat })).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R2 a stalled create whose intent expired is fenced, not published", async () => {
    const { ctx, faults, memory, time } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    const paused = gate();
    faults.on({ operation: "put", key: TAG_T, precondition: "create" }, paused.step);
    const creating = createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await paused.reached;
    await time.advance(16 * MINUTE);
    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.fencedIntents).toHaveLength(1);
    paused.release();

    expect((await failure(creating)).code).toBe("OWNERSHIP_LOST");
    expect(await memory.get(TAG_T)).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R2 a create re-issued after a delete does not bring the reference back", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    // First copy lands and its answer is lost; someone deletes the tag before the re-issue.
    faults.on(
      { operation: "put", key: TAG_T, precondition: "create" },
      {
        type: "apply-then-lose",
      },
    );
    faults.on(
      { operation: "put", key: TAG_T, precondition: "create", nth: 2 },
      {
        type: "before",
        run: async () => {
          await deleteTag(ctx, "t", { format: holdfastFormat });
        },
      },
    );
    expect(
      (
        await failure(
          createTag(
            ctx,
            { name: "t", target: { branch: "main", version: 1 } },
            { format: holdfastFormat },
          ),
        )
      ).code,
    ).toBe("OWNERSHIP_LOST");
    expect(await memory.get(TAG_T)).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R5 an expired update owner cannot publish after the retirement commit", async () => {
    const { ctx, faults, memory, time } = world({ memory: memoryOptions });
    await commits(ctx, "main", 3);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const paused = gate();
    faults.on({ operation: "put", key: TAG_T, precondition: "if-match" }, paused.step);
    const updating = updateTag(
      ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await paused.reached; // admitted: intent written, version 2 open and present

    await time.advance(16 * MINUTE);
    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.fencedIntents).toHaveLength(1);
    expect(report.fencedCanonicals).toEqual([TAG_T]);

    // A cleaner now retires version 2: nothing references it any more.
    const sealed = await sealVersions(ctx, "main", [2]);
    expect((await censusReferences(ctx, { format: holdfastFormat })("main", [2])).size).toBe(0);
    await commit(ctx, sealed);

    paused.release();
    expect((await failure(updating)).kind).toBe("conflict");
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 1,
    });
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R7 files in the canonical folders always parse under the released schema", async () => {
    const { ctx, faults, memory, time } = world({ memory: memoryOptions });
    const check = async () => {
      await releasedReadAll(memory); // throws on any file a released client cannot parse
    };
    await commits(ctx, "main", 3);
    await createTag(
      ctx,
      { name: "a", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await check();
    await createBranch(
      ctx,
      {
        name: "b",
        parent: { branch: "main", version: 2 },
        metadata: { x: "1" },
      },
      { format: holdfastFormat },
    );
    await check();
    await updateTag(
      ctx,
      { name: "a", target: { branch: "main", version: 3 } },
      { format: holdfastFormat },
    );
    await replaceBranchMetadata(ctx, { name: "b", metadata: {} }, { format: holdfastFormat });
    await check();
    // A definite delete failure, then a fenced update, then recovery rewrites.
    faults.on({ operation: "delete", key: canonicalKey("tag", "a") }, { type: "refuse" });
    faults.on(
      { operation: "put", key: canonicalKey("tag", "a"), precondition: "if-match" },
      {
        type: "refuse",
      },
    );
    await failure(deleteTag(ctx, "a", { format: holdfastFormat }));
    await check();
    faults.clearScript();
    const paused = gate();
    faults.on(
      { operation: "put", key: canonicalKey("tag", "a"), precondition: "if-match" },
      paused.step,
    );
    const updating = updateTag(
      ctx,
      { name: "a", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await paused.reached;
    await time.advance(16 * MINUTE);
    await recoverReferences(ctx, { format: holdfastFormat });
    await check();
    paused.release();
    await failure(updating);
    await check();
    await deleteTag(ctx, "a", { format: holdfastFormat });
    await deleteBranch(ctx, "b", { format: holdfastFormat });
    await check();
    const { tags, branches } = await releasedReadAll(memory);
    expect(tags.size + branches.size).toBe(0);
  });

  it("R8 deleting a parent branch fences an admitted child publication", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 1, { branch: "main", version: 1 });
    const childKey = canonicalKey("branch", "c");
    const child = gate();
    faults.on({ operation: "put", key: childKey, precondition: "create" }, child.step);
    const creating = createBranch(
      ctx,
      { name: "c", parent: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await child.reached; // admitted: intent, admission and manifest checks passed

    // The parent deletion publishes its fence, takes its census (no canonical child yet)
    // and pauses just before removing the parent's canonical file.
    const parentKey = canonicalKey("branch", "p");
    const parent = gate();
    faults.on(
      { operation: memoryOptions.conditionalDelete === false ? "put" : "delete", key: parentKey },
      parent.step,
    );
    const deleting = deleteBranch(ctx, "p", { format: holdfastFormat });
    await parent.reached;
    child.release();
    expect((await failure(creating)).code).toBe("OWNERSHIP_LOST");
    parent.release();
    await deleting;

    expect(await memory.get(childKey)).toBeNull();
    expect(await getBranch(ctx, "p", { format: holdfastFormat })).toBeNull();
    expect(await listBranches(ctx, { format: holdfastFormat })).toEqual([]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R9 a fencing rewrite changes the stored bytes (and so the S3 ETag)", async () => {
    const { ctx, faults, memory, time } = world({ memory: memoryOptions });
    await commits(ctx, "main", 2);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const before = (await memory.get(TAG_T))!;
    const paused = gate();
    faults.on({ operation: "put", key: TAG_T, precondition: "if-match" }, paused.step);
    const updating = updateTag(
      ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await paused.reached;
    await time.advance(16 * MINUTE);
    await recoverReferences(ctx, { format: holdfastFormat });

    const after = (await memory.get(TAG_T))!;
    expect(Buffer.compare(after.body, before.body)).not.toBe(0);
    expect(after.etag).not.toBe(before.etag);
    expect(releasedTagSchema.parse(decodeJson(after.body))).toEqual(
      releasedTagSchema.parse(decodeJson(before.body)),
    );
    paused.release();
    expect((await failure(updating)).kind).toBe("conflict");
  });

  it("R10 a child create that lost ownership to a parent deletion leaves no canonical child", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 1, { branch: "main", version: 1 });
    const childKey = canonicalKey("branch", "c");
    const child = gate();
    faults.on({ operation: "put", key: childKey, precondition: "create" }, child.step);
    const creating = createBranch(
      ctx,
      { name: "c", parent: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await child.reached;
    await deleteBranch(ctx, "p", { format: holdfastFormat }); // completes: fence gone again, parent gone
    child.release();

    expect((await failure(creating)).code).toBe("OWNERSHIP_LOST");
    expect(await memory.get(childKey)).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R10 an update that lost ownership to a branch deletion is conditionally restored", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 1, { branch: "main", version: 1 });
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const paused = gate();
    faults.on({ operation: "put", key: TAG_T, precondition: "if-match" }, paused.step);
    const moving = updateTag(
      ctx,
      { name: "t", target: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await paused.reached;
    await deleteBranch(ctx, "p", { format: holdfastFormat });
    paused.release();

    expect((await failure(moving)).code).toBe("OWNERSHIP_LOST");
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 1,
    });
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R10 recovery removes a lost child whose owner died before withdrawing it", async () => {
    const { ctx, faults, memory, time } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 1, { branch: "main", version: 1 });
    const childKey = canonicalKey("branch", "c");
    const child = gate();
    faults.on({ operation: "put", key: childKey, precondition: "create" }, child.step);
    const creating = createBranch(
      ctx,
      { name: "c", parent: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await child.reached;
    await deleteBranch(ctx, "p", { format: holdfastFormat });
    // The withdrawal is refused and the process dies: the child is left behind.
    faults.on(
      { operation: memoryOptions.conditionalDelete === false ? "put" : "delete", key: childKey },
      { type: "refuse" },
    );
    child.release();
    expect((await failure(creating)).kind).toBe("unresolved");
    expect(await memory.get(childKey)).not.toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/intents/")).toHaveLength(1);

    await time.advance(16 * MINUTE); // the dead owner's intent expires
    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.removedOrphans).toEqual([childKey]);
    expect(await memory.get(childKey)).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R11 a released-client rewrite of a tag or branch stays visible and protected", async () => {
    const { ctx, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 4);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    // Released clients move the tag and edit the branch, dropping every unknown field.
    await releasedRewrite(memory, TAG_T, (doc) => ({
      ...doc,
      target: { branch: "main", version: 3 },
    }));
    await releasedRewrite(memory, canonicalKey("branch", "b"), (doc) => ({
      ...doc,
      metadata: { by: "v10" },
    }));
    const raw = decodeJson((await memory.get(TAG_T))!.body) as Record<string, unknown>;
    expect(raw.generation).toBeUndefined();

    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 3,
    });
    expect((await listTags(ctx, { format: holdfastFormat })).map((t) => t.name)).toEqual(["t"]);
    expect((await getBranch(ctx, "b", { format: holdfastFormat }))?.metadata).toEqual({
      by: "v10",
    });
    const census = await censusReferences(ctx, { format: holdfastFormat })("main", [1, 2, 3, 4]);
    expect([...census.entries()].sort()).toEqual([
      [2, "branch-lineage"],
      [3, "tag"],
    ]);
    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.removedOrphans).toEqual([]);
    expect(await getTag(ctx, "t", { format: holdfastFormat })).not.toBeNull();
    // And the current client keeps working on them.
    await updateTag(
      ctx,
      { name: "t", target: { branch: "main", version: 4 } },
      { format: holdfastFormat },
    );
    await replaceBranchMetadata(ctx, { name: "b", metadata: {} }, { format: holdfastFormat });
    await deleteTag(ctx, "t", { format: holdfastFormat });
    expect(await getTag(ctx, "t", { format: holdfastFormat })).toBeNull();
  });

  it("R11 recovery keeps a child whose parent file a released client removed", async () => {
    const { ctx, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 1, { branch: "main", version: 1 });
    await createBranch(
      ctx,
      { name: "c", parent: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await createTag(
      ctx,
      { name: "t", target: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    // A released client deletes the parent's file directly; p's versions remain.
    await memory.delete(canonicalKey("branch", "p"));
    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.removedOrphans).toEqual([]);
    expect(await getBranch(ctx, "c", { format: holdfastFormat })).not.toBeNull();
    expect(await getTag(ctx, "t", { format: holdfastFormat })).not.toBeNull();
    expect(
      (await censusReferences(ctx, { format: holdfastFormat })("p", [1])).get(1),
    ).toBeDefined();
  });

  it("R12 a failed canonical delete does not strand or hide the reference; retry succeeds", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    faults.on({ operation: "delete", key: TAG_T }, { type: "refuse", kind: "auth" });
    faults.on(
      { operation: "put", key: TAG_T, precondition: "if-match" },
      {
        type: "refuse",
        kind: "auth",
      },
    );
    expect((await failure(deleteTag(ctx, "t", { format: holdfastFormat }))).kind).toBe("auth");

    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 1,
    });
    expect((await listTags(ctx, { format: holdfastFormat })).map((t) => t.name)).toEqual(["t"]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]); // prior state restored
    expect((await censusReferences(ctx, { format: holdfastFormat })("main", [1])).get(1)).toBe(
      "tag",
    );

    faults.clearScript();
    await deleteTag(ctx, "t", { format: holdfastFormat });
    expect(await getTag(ctx, "t", { format: holdfastFormat })).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("R12 an interrupted deletion keeps the reference visible and resumes on retry", async () => {
    const { ctx, faults, memory } = world({ memory: memoryOptions });
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "b", 1, { branch: "main", version: 1 });
    const key = canonicalKey("branch", "b");
    // Every copy of the canonical removal loses its answer before applying: unknown outcome.
    faults.on(
      {
        operation: memoryOptions.conditionalDelete === false ? "put" : "delete",
        key,
        times: Number.POSITIVE_INFINITY,
      },
      { type: "lose-before-apply" },
    );
    expect((await failure(deleteBranch(ctx, "b", { format: holdfastFormat }))).kind).toBe(
      "unresolved",
    );
    expect(await getBranch(ctx, "b", { format: holdfastFormat })).not.toBeNull(); // still visible, never hidden
    expect(keysUnder(memory, "_holdfast/refs/intents/")).toHaveLength(1);

    faults.clearScript();
    const retried = await deleteBranch(ctx, "b", { format: holdfastFormat });
    expect(retried.name).toBe("b");
    expect(await getBranch(ctx, "b", { format: holdfastFormat })).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
    expect(keysUnder(memory, "_versions/b/")).toEqual([]);
  });
});

describe("references on stores without atomic compare-and-swap", () => {
  it("R3 local compare-and-swap cannot resurrect a concurrent delete", async () => {
    const ok = world();
    await commits(ok.ctx, "main", 2);
    await createTag(
      ok.ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await createBranch(
      ok.ctx,
      { name: "b", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    // The same data seen through a backend that cannot compare-and-swap atomically.
    const { FaultStore } = await import("@holdfast/conditional-store/testing");
    const { createContext } = await import("@holdfast/protocol");
    const weak = new FaultStore(ok.memory, { capabilities: { atomicConditionalUpdate: false } });
    const ctx = createContext(weak, { clock: ok.time, ids: ok.ctx.ids, sleep: ok.ctx.sleep });
    const before = ok.memory.keys();
    for (const attempt of [
      updateTag(
        ctx,
        { name: "t", target: { branch: "main", version: 2 } },
        { format: holdfastFormat },
      ),
      replaceBranchMetadata(ctx, { name: "b", metadata: { a: "b" } }, { format: holdfastFormat }),
      deleteTag(ctx, "t", { format: holdfastFormat }),
      deleteBranch(ctx, "b", { format: holdfastFormat }),
      createTag(
        ctx,
        { name: "u", target: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
      createBranch(ctx, { name: "c", parent: null }, { format: holdfastFormat }),
    ]) {
      const error = await failure(attempt);
      expect(error.kind).toBe("unsupported");
      expect(error.code).toBe("CAS_UNSUPPORTED");
    }
    expect(weak.requestCounts().put).toBe(0);
    expect(weak.requestCounts().delete).toBe(0);
    expect(ok.memory.keys()).toEqual(before);

    // With atomic CAS, a delete between the read and the CAS makes the CAS conflict.
    const paused = gate();
    ok.faults.on({ operation: "put", key: TAG_T, precondition: "if-match" }, paused.step);
    const updating = updateTag(
      ok.ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await paused.reached;
    await deleteTag(ok.ctx, "t", { format: holdfastFormat });
    paused.release();
    expect((await failure(updating)).kind).toBe("conflict");
    expect(await ok.memory.get(TAG_T)).toBeNull();
  });
});

describe("recovery and the reference census", () => {
  it("R4 recovery cancels a seal when only the canonical reference remains", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 2);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]); // intent consumed
    await sealVersions(ctx, "main", [1]); // and the cleaner dies before its census

    const report = await recoverRetirements(ctx, {
      leaseCensus: noLeases,
      referenceCensus: censusReferences(ctx, { format: holdfastFormat }),
    });
    expect(report.retained).toEqual([{ branch: "main", version: 1, reason: "tag" }]);
    expect(report.committed).toEqual([]);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
    expect(await memory.head(manifestKey("main", 1))).not.toBeNull();
  });

  it("R6 recovery retains a canonical reference after its completed intent was consumed", async () => {
    const { ctx, memory, time } = world();
    await commits(ctx, "main", 3);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "b", 1, { branch: "main", version: 2 });
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
    await sealVersions(ctx, "main", [1, 2]);
    await time.advance(16 * MINUTE);

    const refs = await recoverReferences(ctx, { format: holdfastFormat });
    const referenced = refs.referenced.map((r) => [r.branch, r.version, r.reason]);
    expect(referenced).toContainEqual(["main", 1, "tag"]);
    expect(referenced).toContainEqual(["main", 2, "branch-lineage"]);
    expect(await getTag(ctx, "t", { format: holdfastFormat })).not.toBeNull();

    const retirement = await recoverRetirements(ctx, {
      leaseCensus: noLeases,
      referenceCensus: censusReferences(ctx, { format: holdfastFormat }),
    });
    expect(retirement.committed).toEqual([]);
    expect((await readAdmission(ctx, "main", 1)).state).toBe("open");
    expect((await readAdmission(ctx, "main", 2)).state).toBe("open");
  });
});
