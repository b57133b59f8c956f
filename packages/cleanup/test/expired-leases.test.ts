import { acquireLease, listLeases } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup, planCleanup } from "../src/index.js";
import { MINUTE, seedDataset, world } from "./helpers.js";

async function leaseCount(ctx: Parameters<typeof listLeases>[0]): Promise<number> {
  let n = 0;
  for await (const _ of listLeases(ctx, { branch: "main" })) n += 1;
  return n;
}

describe("leases of crashed readers (invariant 5)", () => {
  it("a lease never released on a kept version is swept an hour past its TTL, not before", async () => {
    const { ctx, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    // A reader leases the latest version (always kept) and crashes without releasing.
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 2, ttlMs: MINUTE });

    await time.advance(30 * MINUTE);
    const early = await cleanup(ctx, { retainVersions: 5 }, { format: holdfastFormat });
    expect(early.objectsDeleted.expiredLeases).toBe(0);
    expect(await leaseCount(ctx)).toBe(1);

    await time.advance(40 * MINUTE);
    const plan = await planCleanup(ctx, { retainVersions: 5 }, { format: holdfastFormat });
    expect(plan.objectsDeleted.expiredLeases).toBe(0);
    expect(await leaseCount(ctx)).toBe(1);

    const late = await cleanup(ctx, { retainVersions: 5 }, { format: holdfastFormat });
    expect(late.objectsDeleted.expiredLeases).toBe(1);
    expect(await leaseCount(ctx)).toBe(0);
  });

  it("a lease left under a branch that no longer has any version is swept too", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2 });
    // As left by a reader whose acquire on a deleted branch lost its own cleanup delete.
    const key = "_holdfast/leases/gone/00000000000000000003/01HF7YAT0GNAGTBC31KCVM365X.json";
    await store.put(
      key,
      new TextEncoder().encode(
        JSON.stringify({
          schema: 1,
          leaseId: "01HF7YAT0GNAGTBC31KCVM365X",
          writerId: "01HF7YAT0HP8EDJ58CP46HWDFK",
          branch: "gone",
          version: 3,
          ttlMs: MINUTE,
          renewal: 0,
        }),
      ),
    );
    await time.advance(30 * MINUTE);
    await cleanup(ctx, { retainVersions: 5 }, { format: holdfastFormat });
    expect(await store.head(key)).not.toBeNull();
    await time.advance(40 * MINUTE);
    const stats = await cleanup(ctx, { retainVersions: 5 }, { format: holdfastFormat });
    expect(stats.objectsDeleted.expiredLeases).toBe(1);
    expect(await store.head(key)).toBeNull();
  });
});
