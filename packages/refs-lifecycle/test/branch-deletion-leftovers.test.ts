import { manifestKey } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { drain } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { createBranch, deleteBranch, getBranch, holdfastFormat } from "../src/index.js";
import { commits, keysUnder, world } from "./support.js";

// Deleted branch incarnations must
// leave no retirement or lease namespace behind (invariant 5, L3).
describe("branch deletion leaves nothing behind (refs-lifecycle)", () => {
  it("L3 deleting a branch leaves none of its lease or retirement state behind", async () => {
    const { ctx, memory } = world();
    await commits(ctx, "main", 1);
    await createBranch(
      ctx,
      { name: "b", parent: { branch: "main", version: 1 } },
      { format: holdfastFormat },
    );
    await commits(ctx, "b", 2, { branch: "main", version: 1 });
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "b",
      version: 1,
      ttlMs: 60_000,
    });
    await releaseLease(ctx, lease);
    await acquireLease(ctx, { format: holdfastFormat, branch: "b", version: 2, ttlMs: 1_000 });
    // A cleaner drained version 1 of b and died.
    const head = await memory.head(manifestKey("b", 1));
    await drain(ctx, {
      branch: "b",
      versions: [{ version: 1, manifestEtag: head!.etag }],
      owner: ctx.ids.next(),
    });
    expect(keysUnder(memory, "_holdfast/retirement/").length).toBeGreaterThan(0);
    expect(keysUnder(memory, "_holdfast/leases/").length).toBeGreaterThan(0);

    await deleteBranch(ctx, "b", { format: holdfastFormat, force: true }); // its lease is still active
    expect(await getBranch(ctx, "b", { format: holdfastFormat })).toBeNull();
    expect(keysUnder(memory, "_versions/b/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/leases/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/retirement/")).toEqual([]);
    expect(keysUnder(memory, "_holdfast/refs/")).toEqual([]);
  });
});
