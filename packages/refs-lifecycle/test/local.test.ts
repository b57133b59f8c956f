import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { isHoldfastError, seededIds } from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import { createContext } from "@holdfast/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  canonicalKey,
  censusReferences,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  getTag,
  holdfastFormat,
  listTags,
  updateTag,
} from "../src/index.js";
import { commits, gate, releasedReadAll } from "./support.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function localWorld() {
  const root = await mkdtemp(join(tmpdir(), "holdfast-refs-"));
  roots.push(root);
  const local = createLocalStore({ root, fsync: false });
  const faults = new FaultStore(local);
  const ctx = createContext(faults, { ids: seededIds(3), sleep: recordingSleep() });
  return { local, faults, ctx };
}

describe("references on the local filesystem backend", () => {
  it("R3 local compare-and-swap cannot resurrect a concurrent delete", async () => {
    const { local, faults, ctx } = await localWorld();
    await commits(ctx, "main", 2);
    await createTag(
      ctx,
      { name: "t", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    const key = canonicalKey("tag", "t");
    const paused = gate();
    faults.on({ operation: "put", key, precondition: "if-match" }, paused.step);
    const updating = updateTag(
      ctx,
      { name: "t", target: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await paused.reached; // read the tag, holds its if-match
    await deleteTag(ctx, "t", { format: holdfastFormat });
    paused.release();
    const error = await updating.then(
      () => null,
      (e: unknown) => e,
    );
    expect(isHoldfastError(error, "conflict")).toBe(true);
    expect(await local.get(key)).toBeNull();
    expect(await getTag(ctx, "t", { format: holdfastFormat })).toBeNull();
  });

  it("the whole lifecycle runs on a real store", async () => {
    const { local, ctx } = await localWorld();
    await commits(ctx, "main", 3);
    await createTag(
      ctx,
      { name: "v1", target: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await createBranch(
      ctx,
      { name: "dev", parent: { branch: "main", version: 2 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "dev", 1, { branch: "main", version: 2 });
    await updateTag(
      ctx,
      { name: "v1", target: { branch: "main", version: 3 } },
      { format: holdfastFormat },
    );
    expect(
      Object.fromEntries(
        await censusReferences(ctx, { format: holdfastFormat })("main", [1, 2, 3]),
      ),
    ).toEqual({
      2: "branch-lineage",
      3: "tag",
    });
    await releasedReadAll(local);
    await deleteBranch(ctx, "dev", { format: holdfastFormat });
    await deleteTag(ctx, "v1", { format: holdfastFormat });
    expect(await listTags(ctx, { format: holdfastFormat })).toEqual([]);
    const leftovers = await local.list("_holdfast/refs/");
    expect(leftovers.objects).toEqual([]);
  });
});
