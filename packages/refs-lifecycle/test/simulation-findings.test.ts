import { manifestKey } from "@holdfast/dataset";
import { describe, expect, it } from "vitest";
import {
  createBranch,
  createTag,
  deleteBranch,
  getBranch,
  getTag,
  holdfastFormat,
  INTENTS_PREFIX,
  recoverReferences,
  updateTag,
} from "../src/index.js";
import { commits, gate, keysUnder, world } from "./support.js";

// Interleavings the seeded simulation (tooling/simulation) found; each is pinned here.
describe("simulation findings (refs-lifecycle)", () => {
  it("R8 a branch deletion refuses while a fenced tag update may restore a target on it", async () => {
    const { ctx, memory, faults } = world();
    await commits(ctx, "main", 2);
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "b", 1, { branch: "main", version: 1 });
    await createTag(
      ctx,
      { name: "t", target: { branch: "b", version: 1 } },
      { format: holdfastFormat },
    );
    // The update's canonical write lands but its answer is lost, so after the re-issue it
    // checks ownership: it pauses there.
    const pause = gate();
    faults.script({
      operation: "put",
      key: "_refs/tags/t.json",
      fault: { type: "apply-then-lose" },
    });
    faults.script({
      operation: "get",
      key: /^_holdfast\/refs\/intents\/tags\/t\//,
      fault: pause.step,
    });
    const update = updateTag(
      ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    ).catch((e: unknown) => e);
    await pause.reached;
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 2,
    });
    // The deletion fences the update's intent; the update will restore its prior (b@1).
    await expect(deleteBranch(ctx, "b", { format: holdfastFormat })).rejects.toMatchObject({
      kind: "conflict",
      code: "BRANCH_HAS_DEPENDENTS",
    });
    pause.release();
    expect(await update).toMatchObject({ kind: "conflict", code: "OWNERSHIP_LOST" });
    // The tag is back at its last successful target, which still exists.
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "b",
      version: 1,
    });
    expect(await memory.head(manifestKey("b", 1))).not.toBeNull();
    expect(await getBranch(ctx, "b", { format: holdfastFormat })).not.toBeNull();
  });

  it("R12 a refused branch deletion whose intent cannot be withdrawn reports an unknown outcome", async () => {
    const { ctx, faults } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await createTag(
      ctx,
      { name: "keep", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await createBranch(
      ctx,
      { name: "child", parent: { branch: "b", version: 0 + 1 } },
      { format: holdfastFormat },
    ).catch(() => undefined);
    await createTag(
      ctx,
      { name: "on-b", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "b", 1, { branch: "main", version: 1 });
    await createTag(
      ctx,
      { name: "dep", target: { branch: "b", version: 1 } },
      { format: holdfastFormat },
    );
    // The refusal's withdrawal of its own delete intent is lost before it applies.
    faults.script({
      operation: "delete",
      key: /^_holdfast\/refs\/intents\/branches\/b\//,
      fault: { type: "lose-before-apply" },
      times: Number.POSITIVE_INFINITY,
    });
    const error = await deleteBranch(ctx, "b", { format: holdfastFormat }).catch((e: unknown) => e);
    // Recovery may still finish that deletion, so "refused" would be a lie.
    expect(error).toMatchObject({ kind: "unresolved", code: "DELETE_INTENT_LEFT" });
  });

  it("R2 recovery reclaims an expired intent another actor fenced since it was listed", async () => {
    const { ctx, memory, faults, time } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "b", 1, { branch: "main", version: 1 });
    // A tag create whose owner crashed after its intent: the intent is expired later.
    // A tag create whose owner crashed after writing its intent (nothing else landed).
    faults.script({
      operation: "put",
      key: "_refs/tags/t.json",
      fault: { type: "throw", error: new Error("process died") },
    });
    faults.script({
      operation: "delete",
      key: /^_holdfast\/refs\/intents\//,
      fault: { type: "lose-before-apply" },
    });
    await createTag(
      ctx,
      { name: "t", target: { branch: "b", version: 1 } },
      { format: holdfastFormat, ownershipBoundMs: 1_000 },
    ).catch(() => undefined);
    faults.clearScript();
    expect(keysUnder(memory, INTENTS_PREFIX).length).toBe(1);
    await time.advance(10_000);
    // Between recovery's listing and its fencing write, a branch deletion fences the intent.
    faults.script({
      operation: "put",
      key: /^_holdfast\/refs\/intents\/tags\/t\//,
      precondition: "if-match",
      fault: {
        type: "before",
        run: async (inner) => {
          const key = keysUnder(memory, INTENTS_PREFIX)[0]!;
          const got = await inner.get(key);
          const intent = JSON.parse(new TextDecoder().decode(got!.body));
          await inner.put(
            key,
            new TextEncoder().encode(
              JSON.stringify({
                ...intent,
                state: "fenced",
                writerId: "01HF7YAT0000000000000000ZZ",
                fencedBy: "other",
              }),
            ),
          );
        },
      },
    });
    await recoverReferences(ctx, { format: holdfastFormat });
    expect(keysUnder(memory, INTENTS_PREFIX)).toEqual([]);
  });
});
