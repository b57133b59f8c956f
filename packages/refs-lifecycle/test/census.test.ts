import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { type DatasetFormat, holdfastLayout, manifestKey } from "@holdfast/dataset";
import { commit, drain, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import {
  canonicalKey,
  censusReferences,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  FOREIGN_REFERENCE_OBJECT,
  getTag,
  holdfastFormat,
  INTENTS_PREFIX,
  REFS_ROOT,
  referenceReasons,
  replaceBranchMetadata,
  updateTag,
} from "../src/index.js";
import { commits, gate, keysUnder, world } from "./support.js";

async function rejects(promise: Promise<unknown>): Promise<{ kind: string; code?: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isHoldfastError(error), String(error)).toBe(true);
  return error as { kind: string; code?: string };
}

describe("censusReferences", () => {
  it("reports intents, tags and branch lineage with their reasons, policy-independently", async () => {
    const { ctx, faults } = world();
    await commits(ctx, "main", 6);
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
    // Lineage only in manifests: a branch committed with an explicit parent, no reference file.
    await commits(ctx, "raw", 1, { branch: "main", version: 3 });
    // An admitted publication still in flight: only its intent names version 4.
    const paused = gate();
    faults.on(
      { operation: "put", key: canonicalKey("tag", "inflight"), precondition: "create" },
      paused.step,
    );
    const inflight = createTag(
      ctx,
      { name: "inflight", target: { branch: "main", version: 4 } },
      { format: holdfastFormat },
    );
    await paused.reached;

    const census = censusReferences(ctx, { format: holdfastFormat });
    const found = await census("main", [1, 2, 3, 4, 5, 6]);
    expect(Object.fromEntries(found)).toEqual({
      1: "tag",
      2: "branch-lineage",
      3: "branch-lineage",
      4: "intent",
    });
    expect(
      [...found.values()].every((r) => (referenceReasons as readonly string[]).includes(r)),
    ).toBe(true);
    // Another branch's census does not see main's references.
    expect((await census("b", [1, 2])).size).toBe(0);
    paused.release();
    await inflight;
    expect((await census("main", [4])).get(4)).toBe("tag");
  });

  it("reads intents before canonical references, so a publication finishing in between is still seen", async () => {
    const { ctx, faults, memory } = world();
    await commits(ctx, "main", 2);
    const paused = gate();
    faults.on(
      { operation: "put", key: canonicalKey("tag", "racing"), precondition: "create" },
      paused.step,
    );
    const publishing = createTag(
      ctx,
      { name: "racing", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await paused.reached; // intent durable, canonical not yet written
    // Between the census's two reads (whichever comes second), the publication completes:
    // canonical written, intent removed. Only intents-then-canonical sees it either way.
    const listed = new Set<string>();
    const between = (prefix: string, other: string) => ({
      type: "before" as const,
      run: async () => {
        if (listed.has(other)) {
          paused.release();
          await publishing;
        }
        listed.add(prefix);
      },
    });
    // Canonical tags and branches are listed together under _refs/.
    faults.on({ operation: "list", key: REFS_ROOT }, between(REFS_ROOT, INTENTS_PREFIX));
    faults.on({ operation: "list", key: INTENTS_PREFIX }, between(INTENTS_PREFIX, REFS_ROOT));
    const found = await censusReferences(ctx, { format: holdfastFormat })("main", [1, 2]);
    expect(keysUnder(memory, INTENTS_PREFIX)).toEqual([]); // it did finish in between
    expect(found.get(1)).toBeDefined();
    expect(found.has(2)).toBe(false);
  });

  it("fails closed: an unreadable intent, reference or manifest throws", async () => {
    for (const key of [
      /^_holdfast\/refs\/intents\/.+\.json$/,
      /^_refs\/tags\/.+\.json$/,
      /^_versions\/raw\/.+\.json$/,
    ]) {
      const { ctx, faults } = world();
      await commits(ctx, "main", 2);
      await commits(ctx, "raw", 1, { branch: "main", version: 1 });
      await createTag(
        ctx,
        { name: "t", target: { branch: "main", version: 2 } },
        { format: holdfastFormat },
      );
      // a completed intent left behind (process died before removing it)
      await faults.inner.put(
        `${INTENTS_PREFIX}tags/x/01KZZZZZZZZZZZZZZZZZZZZZZZ.json`,
        encodeJson({
          schema: 1,
          intentId: "01KZZZZZZZZZZZZZZZZZZZZZZZ",
          writerId: "w",
          kind: "tag",
          name: "x",
          op: "create",
          state: "pending",
          ownershipBoundMs: 1000,
          target: { branch: "main", version: 1 },
          prior: null,
          generation: "g",
        }),
      );
      faults.on({ operation: "get", key }, { type: "lose-before-apply" });
      const error = await rejects(
        censusReferences(ctx, { format: holdfastFormat })("main", [1, 2]),
      );
      expect(error.kind).toBe("ambiguous");
    }
  });

  it("takes lineage from a plugged-in dataset format", async () => {
    const { ctx } = world();
    await commits(ctx, "main", 3);
    await commits(ctx, "other", 1);
    // A format whose manifests name their parent elsewhere than the holdfast manifest does.
    const format: DatasetFormat = {
      ...holdfastLayout,
      async readManifest(c, branch, version) {
        const manifest = await holdfastLayout.readManifest(c, branch, version);
        return manifest && branch === "other"
          ? { ...manifest, parent: { branch: "main", version: 3 } }
          : manifest;
      },
    };
    expect((await censusReferences(ctx, { format: holdfastFormat })("main", [1, 2, 3])).size).toBe(
      0,
    );
    expect(Object.fromEntries(await censusReferences(ctx, { format })("main", [1, 2, 3]))).toEqual({
      3: "branch-lineage",
    });
  });

  it("invariant 8: every object under _refs/ is read as a reference, or the census stops and names it", async () => {
    const tagBody = (name: string, version: number) =>
      encodeJson({ schema: 1, name, target: { branch: "main", version } });
    const { ctx, memory } = world();
    await commits(ctx, "main", 3);
    // Subfolders are names like any other (docs/guarantees.md, invariant 8): they protect.
    await memory.put(`${REFS_ROOT}tags/release/1.0.json`, tagBody("release/1.0", 1));
    await memory.put(
      `${REFS_ROOT}branches/team/dev.json`,
      encodeJson({ schema: 1, name: "team/dev", parent: { branch: "main", version: 2 } }),
    );
    expect(
      Object.fromEntries(
        await censusReferences(ctx, { format: holdfastFormat })("main", [1, 2, 3]),
      ),
    ).toEqual({
      1: "tag",
      2: "branch-lineage",
    });
    // An object the census cannot read as a reference stops it, naming the key.
    for (const [key, body, code] of [
      [`${REFS_ROOT}tags/v1`, tagBody("v1", 3), FOREIGN_REFERENCE_OBJECT],
      [`${REFS_ROOT}heads/main.json`, tagBody("main", 3), FOREIGN_REFERENCE_OBJECT],
      [`${REFS_ROOT}tags/broken.json`, encodeJson({ schema: 1, what: "?" }), "MALFORMED_OBJECT"],
    ] as const) {
      await memory.put(key, body);
      const error = await rejects(censusReferences(ctx, { format: holdfastFormat })("main", [3]));
      expect(error).toMatchObject({ kind: "invalid-input", code, key });
      await memory.delete(key);
    }
    expect(
      Object.fromEntries(await censusReferences(ctx, { format: holdfastFormat })("main", [3])),
    ).toEqual({});
  });

  it("fails closed on a malformed intent", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 1);
    await memory.put(`${INTENTS_PREFIX}tags/x/bad.json`, encodeJson({ schema: 1, what: "?" }));
    const error = await rejects(censusReferences(ctx, { format: holdfastFormat })("main", [1]));
    expect(error.code).toBe("MALFORMED_OBJECT");
  });

  it("a publication admitted while the version drains wins: the census retains it", async () => {
    const { ctx } = world();
    await commits(ctx, "main", 2);
    const head = await ctx.store.head(manifestKey("main", 1));
    const drained = await drain(ctx, {
      branch: "main",
      versions: [{ version: 1, manifestEtag: head!.etag }],
      owner: ctx.ids.next(),
    });
    await createTag(
      ctx,
      { name: "during-drain", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const sealed = await seal(ctx, drained);
    const kept = await censusReferences(ctx, { format: holdfastFormat })("main", [1]);
    expect(kept.get(1)).toBe("tag");
    const committed = await commit(ctx, sealed, { cancel: kept });
    expect(committed.record.state).toBe("cancelled");
    expect(await getTag(ctx, "during-drain", { format: holdfastFormat })).not.toBeNull();
  });

  it("a version whose retirement committed cannot be tagged or forked", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 2);
    const head = await ctx.store.head(manifestKey("main", 1));
    const drained = await drain(ctx, {
      branch: "main",
      versions: [{ version: 1, manifestEtag: head!.etag }],
      owner: ctx.ids.next(),
    });
    await commit(ctx, await seal(ctx, drained));
    expect(
      (
        await rejects(
          createTag(
            ctx,
            { name: "t", target: { branch: "main", version: 1 } },
            { format: holdfastFormat },
          ),
        )
      ).code,
    ).toBe("VERSION_RETIRING");
    expect(
      (
        await rejects(
          createBranch(
            ctx,
            { name: "b", parent: { branch: "main", version: 1 } },
            { format: holdfastFormat },
          ),
        )
      ).code,
    ).toBe("VERSION_RETIRING");
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    expect(
      (
        await rejects(
          updateTag(
            ctx,
            { name: "t", target: { branch: "main", version: 1 } },
            { format: holdfastFormat },
          ),
        )
      ).code,
    ).toBe("VERSION_RETIRING");
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target.version).toBe(2);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("deleting a branch refuses while a manifest-only descendant needs it", async () => {
    const { ctx } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 2, { branch: "main", version: 1 });
    await commits(ctx, "raw", 1, { branch: "p", version: 2 });
    expect((await rejects(deleteBranch(ctx, "p", { format: holdfastFormat }))).code).toBe(
      "BRANCH_HAS_DEPENDENTS",
    );
    expect((await censusReferences(ctx, { format: holdfastFormat })("p", [1, 2])).get(2)).toBe(
      "branch-lineage",
    );
  });
});

describe("request counts", () => {
  it("documents the cost of each operation without cleanup in flight", async () => {
    const { ctx, faults } = world();
    await commits(ctx, "main", 2);
    const count = async (run: () => Promise<unknown>) => {
      faults.resetCounts();
      await run();
      return Object.values(faults.requestCounts()).reduce((a, b) => a + b, 0);
    };
    expect(
      await count(() =>
        createTag(
          ctx,
          { name: "t", target: { branch: "main", version: 1 } },
          { format: holdfastFormat },
        ),
      ),
    ).toBe(5);
    expect(
      await count(() =>
        updateTag(
          ctx,
          { name: "t", target: { branch: "main", version: 2 } },
          { format: holdfastFormat },
        ),
      ),
    ).toBe(6);
    expect(await count(() => deleteTag(ctx, "t", { format: holdfastFormat }))).toBe(5);
    // createBranch: createTag's 5 + one LIST proving no manifests are stored under the name.
    expect(
      await count(() =>
        createBranch(
          ctx,
          { name: "b", parent: { branch: "main", version: 1 } },
          { format: holdfastFormat },
        ),
      ),
    ).toBe(6);
    expect(
      await count(() =>
        replaceBranchMetadata(ctx, { name: "b", metadata: { k: "v" } }, { format: holdfastFormat }),
      ),
    ).toBe(4);
    await commits(ctx, "b", 1, { branch: "main", version: 1 });
    // On a branch with a reference file: + GET branch before, GET fence + GET branch after.
    expect(
      await count(() =>
        createTag(
          ctx,
          { name: "on-b", target: { branch: "b", version: 1 } },
          { format: holdfastFormat },
        ),
      ),
    ).toBe(8);
    expect(await count(() => deleteTag(ctx, "on-b", { format: holdfastFormat }))).toBe(5);
    faults.resetCounts();
    await deleteBranch(ctx, "b", { format: holdfastFormat });
    // GET b; W(intent); fence GET + W; LIST leases (none); LIST intents; dependents: LIST + GET intents
    // (our own delete intent); LIST + GET branches; LIST tags;
    // lineage: LIST _versions/ (one per branch + 1: 3), LIST main + GET per manifest (2);
    // teardown: 3 LIST + 1 batch DELETE of b's manifest + DELETE of b's head hint; DELETE
    // canonical; fence GET + DELETE; D(intent).
    expect(Object.values(faults.requestCounts()).reduce((a, b) => a + b, 0)).toBe(26);
  });
});
