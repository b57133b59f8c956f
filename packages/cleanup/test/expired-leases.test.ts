import { acquireLease, listLeases } from "@holdfast/leases";
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
    await acquireLease(ctx, { branch: "main", version: 2, ttlMs: MINUTE });

    await time.advance(30 * MINUTE);
    const early = await cleanup(ctx, { retainVersions: 5 });
    expect(early.objectsDeleted.expiredLeases).toBe(0);
    expect(await leaseCount(ctx)).toBe(1);

    await time.advance(40 * MINUTE);
    const plan = await planCleanup(ctx, { retainVersions: 5 });
    expect(plan.objectsDeleted.expiredLeases).toBe(0);
    expect(await leaseCount(ctx)).toBe(1);

    const late = await cleanup(ctx, { retainVersions: 5 });
    expect(late.objectsDeleted.expiredLeases).toBe(1);
    expect(await leaseCount(ctx)).toBe(0);
  });
});
