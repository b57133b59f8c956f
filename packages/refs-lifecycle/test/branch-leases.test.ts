import { isHoldfastError } from "@holdfast/conditional-store";
import { manifestKey } from "@holdfast/dataset";
import { acquireLease, branchFenceKey, renewLease } from "@holdfast/leases";
import { describe, expect, it } from "vitest";
import {
  canonicalKey,
  createBranch,
  deleteBranch,
  fenceKey,
  getBranch,
  holdfastFormat,
} from "../src/index.js";
import { commits, gate, world } from "./support.js";

const MINUTE = 60_000;

async function failure(
  p: Promise<unknown>,
): Promise<{ kind: string; code?: string; key?: string }> {
  const error = await p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: unknown) => e,
  );
  expect(isHoldfastError(error)).toBe(true);
  return error as { kind: string; code?: string; key?: string };
}

describe("lease admission vs branch deletion (docs/operations.md)", () => {
  it("leases and refs-lifecycle agree on the fence key", () => {
    expect(branchFenceKey("dev")).toBe(fenceKey("dev"));
  });

  it("a lease acquired after the deletion's fence is written is refused, and the deletion completes", async () => {
    const { ctx, faults, memory } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "dev", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "dev", 2, { branch: "main", version: 1 });
    // The deletion pauses right after its fence landed, before removing anything.
    const paused = gate();
    faults.on(
      { operation: "list", key: (k) => k.startsWith("_holdfast/leases/dev/") },
      paused.step,
    );
    const deleting = deleteBranch(ctx, "dev", { format: holdfastFormat });
    await paused.reached;
    expect(await memory.get(fenceKey("dev"))).not.toBeNull();
    const refused = await failure(
      acquireLease(ctx, { format: holdfastFormat, branch: "dev", version: 2, ttlMs: MINUTE }),
    );
    expect(refused).toMatchObject({
      kind: "refused",
      code: "BRANCH_DELETING",
      key: fenceKey("dev"),
    });
    expect(memory.keys().filter((k) => k.startsWith("_holdfast/leases/"))).toEqual([]);
    paused.release();
    await deleting;
    expect(await memory.get(manifestKey("dev", 2))).toBeNull();
    expect(await getBranch(ctx, "dev", { format: holdfastFormat })).toBeNull();
  });

  it("a branch with a live lease is not deleted unless forced", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "dev", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "dev", 2, { branch: "main", version: 1 });
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "dev",
      version: 2,
      ttlMs: MINUTE,
    });
    const refused = await failure(deleteBranch(ctx, "dev", { format: holdfastFormat }));
    expect(refused).toMatchObject({ kind: "conflict", code: "BRANCH_HAS_LEASES" });
    // Nothing torn down, fence and intent withdrawn: the lease renews, the branch is intact.
    expect(await memory.get(fenceKey("dev"))).toBeNull();
    expect(memory.keys().filter((k) => k.startsWith("_holdfast/refs/"))).toEqual([]);
    await renewLease(ctx, lease);
    expect(await memory.get(manifestKey("dev", 2))).not.toBeNull();
    expect(await memory.get(canonicalKey("branch", "dev"))).not.toBeNull();
    await deleteBranch(ctx, "dev", { format: holdfastFormat, force: true });
    expect(await getBranch(ctx, "dev", { format: holdfastFormat })).toBeNull();
    expect(memory.keys().filter((k) => k.startsWith("_holdfast/leases/"))).toEqual([]);
    expect((await failure(renewLease(ctx, lease))).code).toBe("LEASE_LOST");
  });
});

describe("createBranch on a name with stored manifests", () => {
  it("is refused with a typed error naming the manifests' folder", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 1);
    await commits(ctx, "left", 1, { branch: "main", version: 1 }); // versions, no reference file
    const refused = await failure(
      createBranch(
        ctx,
        { name: "left", parent: { branch: "main", version: 1 } },
        { format: holdfastFormat },
      ),
    );
    expect(refused).toMatchObject({
      kind: "conflict",
      code: "BRANCH_HAS_VERSIONS",
      key: "_versions/left/",
    });
    expect(await memory.get(canonicalKey("branch", "left"))).toBeNull();
    expect(memory.keys().filter((k) => k.startsWith("_holdfast/refs/"))).toEqual([]);
  });
});
