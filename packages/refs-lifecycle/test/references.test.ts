import { isHoldfastError } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { acquireLease } from "@holdfast/leases";
import { describe, expect, it } from "vitest";
import {
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
  replaceBranchMetadata,
  updateTag,
} from "../src/index.js";
import { commits, keysUnder, sealVersions, world } from "./support.js";

async function expectKind(promise: Promise<unknown>, kind: string, code?: string) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(isHoldfastError(error), String(error)).toBe(true);
  expect((error as { kind: string }).kind).toBe(kind);
  if (code !== undefined) expect((error as { code?: string }).code).toBe(code);
}

describe("tags", () => {
  it("create, get, list, update, delete; no sidecar left behind", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 3);
    const created = await createTag(
      ctx,
      { name: "v1", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    expect(created.target).toEqual({ branch: "main", version: 1 });
    expect((await getTag(ctx, "v1", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 1,
    });
    const updated = await updateTag(
      ctx,
      { name: "v1", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    expect(updated.etag).not.toBe(created.etag);
    expect(
      (await listTags(ctx, { format: holdfastFormat })).map((t) => [t.name, t.target.version]),
    ).toEqual([["v1", 2]]);
    await deleteTag(ctx, "v1", { format: holdfastFormat });
    expect(await getTag(ctx, "v1", { format: holdfastFormat })).toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
    expect(keysUnder(memory, "_refs/")).toEqual([]);
  });

  it("create costs at most 5 requests on the default branch", async () => {
    const { ctx, faults } = world();
    await commits(ctx, "main", 1);
    faults.resetCounts();
    await createTag(
      ctx,
      { name: "fast", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const counts = faults.requestCounts();
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    expect(total).toBeLessThanOrEqual(5);
    // W(intent), LIST retirement, HEAD manifest, W(canonical), D(intent)
    expect(faults.requests().map((r) => r.operation)).toEqual([
      "put",
      "list",
      "head",
      "put",
      "delete",
    ]);
  });

  it("verifyAfterWrite re-reads the intent and admission after the canonical write", async () => {
    const { ctx, faults } = world();
    await commits(ctx, "main", 1);
    faults.resetCounts();
    await createTag(
      ctx,
      { name: "checked", target: { branch: "main", version: 1 } },
      { format: holdfastFormat, verifyAfterWrite: true },
    );
    expect(faults.requests().map((r) => r.operation)).toEqual([
      "put",
      "list",
      "head",
      "put",
      "get",
      "list",
      "delete",
    ]);
  });

  it("invariant 4: a tag create whose answers are all lost is unresolved, never failed; recovery keeps what landed", async () => {
    const { ctx, faults, memory, time } = world();
    await commits(ctx, "main", 1);
    // The first copy lands, every answer is lost, read-back fails too.
    faults.on({ operation: "put", key: "_refs/tags/t.json" }, { type: "apply-then-lose" });
    faults.on(
      { operation: "put", key: "_refs/tags/t.json", nth: 2, times: 10 },
      { type: "lose-before-apply" },
    );
    faults.on({ operation: "get", key: "_refs/tags/t.json" }, { type: "lose-before-apply" });
    await expectKind(
      createTag(
        ctx,
        { name: "t", target: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
      "unresolved",
    );
    faults.clearScript();
    expect(await getTag(ctx, "t", { format: holdfastFormat })).not.toBeNull();
    expect(keysUnder(memory, "_holdfast/refs/intents/")).toHaveLength(1); // still covering
    await time.advance(16 * 60_000);
    const report = await recoverReferences(ctx, { format: holdfastFormat });
    expect(report.reclaimedIntents).toHaveLength(1);
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target).toEqual({
      branch: "main",
      version: 1,
    });
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("a repeating client's duplicate copy reads back as applied", async () => {
    const { ctx, faults, memory } = world();
    await commits(ctx, "main", 1);
    const repeating = new FaultStore(memory, { requestMode: "repeating" });
    repeating.on({ operation: "put", key: "_refs/tags/t.json" }, { type: "repeat" });
    const rctx = { ...ctx, store: repeating };
    const tag = await createTag(
      rctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.etag).toBe(tag.etag);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
    // Only the setup (dataset marker, manifest, its branch head hint) went through the other wrapper.
    expect(faults.requestCounts().put).toBe(3);
  });

  it("a second create of the same name conflicts and leaves the first intact", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 2);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await expectKind(
      createTag(
        ctx,
        { name: "t", target: { branch: "main", version: 2 } },
        { format: holdfastFormat },
      ),
      "conflict",
      "REF_EXISTS",
    );
    expect((await getTag(ctx, "t", { format: holdfastFormat }))?.target.version).toBe(1);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("a tag on a missing version is not-found and writes nothing lasting", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 1);
    await expectKind(
      createTag(
        ctx,
        { name: "t", target: { branch: "main", version: 9 } },
        { format: holdfastFormat },
      ),
      "not-found",
      "VERSION_NOT_FOUND",
    );
    expect(keysUnder(memory, "_refs/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("admission is refused while the target version is sealed", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 2);
    await sealVersions(ctx, "main", [1]);
    await expectKind(
      createTag(
        ctx,
        { name: "late", target: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
      "refused",
      "VERSION_RETIRING",
    );
    expect(keysUnder(memory, "_refs/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });

  it("a failed admission read withdraws the intent; a failed ownership check is unresolved", async () => {
    const { ctx, memory, faults, time } = world();
    await commits(ctx, "main", 1);
    faults.on({ operation: "list", key: "_holdfast/retirement/main/" }, { type: "refuse" });
    await expectKind(
      createTag(
        ctx,
        { name: "t", target: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
      "refused",
    );
    expect(keysUnder(memory, "_refs/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);

    // The canonical lands, then the cover was held too long and the ownership read fails.
    faults.clearScript();
    faults.on(
      { operation: "put", key: "_refs/tags/t.json" },
      {
        type: "before",
        run: () => time.advance(10 * 60_000),
      },
    );
    faults.on(
      { operation: "get", key: /^_holdfast\/refs\/intents\// },
      {
        type: "lose-before-apply",
      },
    );
    await expectKind(
      createTag(
        ctx,
        { name: "t", target: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
      "unresolved",
    );
    expect(await getTag(ctx, "t", { format: holdfastFormat })).not.toBeNull(); // landed, still covered by its intent
    expect(keysUnder(memory, "_holdfast/refs/intents/")).toHaveLength(1);
  });

  it("update with a stale expectedEtag conflicts; update of an absent tag is not-found", async () => {
    const { ctx } = world();
    await commits(ctx, "main", 2);
    const t = await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await updateTag(
      ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await expectKind(
      updateTag(
        ctx,
        { name: "t", target: { branch: "main", version: 1 }, expectedEtag: t.etag },
        { format: holdfastFormat },
      ),
      "conflict",
      "REF_CHANGED",
    );
    await expectKind(
      updateTag(
        ctx,
        { name: "nope", target: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
      "not-found",
    );
    await expectKind(
      deleteTag(ctx, "nope", { format: holdfastFormat }),
      "not-found",
      "REF_NOT_FOUND",
    );
  });

  it("invalid names and targets are invalid-input before anything is written", async () => {
    const { ctx, memory, faults } = world();
    await commits(ctx, "main", 1);
    const before = memory.keys();
    faults.resetCounts();
    for (const name of ["", "..", ".hidden", "-x", "a/b", "x".repeat(129), "sp ace", "ü"]) {
      await expectKind(
        createTag(
          ctx,
          { name, target: { branch: "main", version: 1 } },
          { format: holdfastFormat },
        ),
        "invalid-input",
      );
      await expectKind(
        createBranch(ctx, { name, parent: null }, { format: holdfastFormat }),
        "invalid-input",
      );
      await expectKind(deleteTag(ctx, name, { format: holdfastFormat }), "invalid-input");
      await expectKind(deleteBranch(ctx, name, { format: holdfastFormat }), "invalid-input");
      await expectKind(getTag(ctx, name, { format: holdfastFormat }), "invalid-input");
    }
    await expectKind(
      createTag(
        ctx,
        { name: "ok", target: { branch: "../x", version: 1 } },
        { format: holdfastFormat },
      ),
      "invalid-input",
    );
    await expectKind(
      createTag(
        ctx,
        { name: "ok", target: { branch: "main", version: 0 } },
        { format: holdfastFormat },
      ),
      "invalid-input",
    );
    await expectKind(
      createTag(
        ctx,
        { name: "ok", target: { branch: "main", version: 1.5 } },
        { format: holdfastFormat },
      ),
      "invalid-input",
    );
    await expectKind(
      createBranch(
        ctx,
        {
          name: "ok",
          parent: null,
          metadata: { a: 1 } as unknown as Record<string, string>,
        },
        { format: holdfastFormat },
      ),
      "invalid-input",
      "INVALID_METADATA",
    );
    await expectKind(
      createBranch(ctx, { name: "main", parent: null }, { format: holdfastFormat }),
      "invalid-input",
    );
    for (const ownershipBoundMs of [0, -1, 1.5, Number.NaN, 1e15]) {
      await expectKind(
        createTag(
          ctx,
          { name: "ok", target: { branch: "main", version: 1 } },
          { format: holdfastFormat, ownershipBoundMs },
        ),
        "invalid-input",
        "INVALID_OPTION",
      );
      await expectKind(
        deleteTag(ctx, "ok", { format: holdfastFormat, ownershipBoundMs }),
        "invalid-input",
        "INVALID_OPTION",
      );
    }
    await expectKind(deleteBranch(ctx, "main", { format: holdfastFormat }), "invalid-input");
    expect(memory.keys()).toEqual(before);
    expect(faults.requestCounts().put).toBe(0);
  });
});

describe("branches", () => {
  it("create, metadata replacement, list, delete with teardown of the incarnation", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 2);
    const b = await createBranch(
      ctx,
      {
        name: "dev",
        parent: { branch: "main", version: 2 },
        metadata: { owner: "ana" },
      },
      { format: holdfastFormat },
    );
    expect(b.incarnation).not.toBeNull();
    await commits(ctx, "dev", 2, { branch: "main", version: 2 });
    const replaced = await replaceBranchMetadata(
      ctx,
      { name: "dev", metadata: { owner: "bo" } },
      { format: holdfastFormat },
    );
    expect(replaced.metadata).toEqual({ owner: "bo" });
    expect(replaced.incarnation).toBe(b.incarnation);
    expect((await listBranches(ctx, { format: holdfastFormat })).map((x) => x.name)).toEqual([
      "dev",
    ]);
    // operational state of the incarnation
    await acquireLease(ctx, { format: holdfastFormat, branch: "dev", version: 2, ttlMs: 60_000 });
    expect(keysUnder(memory, "_holdfast/leases/dev/")).toHaveLength(1);
    await sealVersions(ctx, "dev", [1]);
    await deleteBranch(ctx, "dev", { format: holdfastFormat, force: true }); // the lease above is still active
    expect(await getBranch(ctx, "dev", { format: holdfastFormat })).toBeNull();
    expect(keysUnder(memory, "_versions/dev/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/leases/dev/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/retirement/dev/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
    expect(keysUnder(memory, "_versions/main/")).toHaveLength(2);
  });

  it("a branch with a child branch or a tag cannot be deleted; its fence is withdrawn", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "p", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "p", 1, { branch: "main", version: 1 });
    await createTag(
      ctx,
      { name: "on-p", target: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await expectKind(
      deleteBranch(ctx, "p", { format: holdfastFormat }),
      "conflict",
      "BRANCH_HAS_DEPENDENTS",
    );
    expect(await getBranch(ctx, "p", { format: holdfastFormat })).not.toBeNull();
    expect(keysUnder(memory, "_versions/p/")).toHaveLength(1);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
    await deleteTag(ctx, "on-p", { format: holdfastFormat });
    await createBranch(
      ctx,
      { name: "c", parent: { branch: "p", version: 1 } },
      { format: holdfastFormat },
    );
    await expectKind(
      deleteBranch(ctx, "p", { format: holdfastFormat }),
      "conflict",
      "BRANCH_HAS_DEPENDENTS",
    );
    await deleteBranch(ctx, "c", { format: holdfastFormat });
    await deleteBranch(ctx, "p", { format: holdfastFormat });
    expect(await listBranches(ctx, { format: holdfastFormat })).toEqual([]);
  });

  it("a re-created branch is a new incarnation", async () => {
    const { ctx } = world();
    await commits(ctx, "main", 1);
    const first = await createBranch(
      ctx,
      { name: "x", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await deleteBranch(ctx, "x", { format: holdfastFormat });
    const second = await createBranch(
      ctx,
      { name: "x", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    expect(second.incarnation).not.toBe(first.incarnation);
  });
});
