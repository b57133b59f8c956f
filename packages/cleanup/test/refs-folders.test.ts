import { encodeJson, isHoldfastError } from "@holdfast/conditional-store";
import { FOREIGN_REFERENCE_OBJECT, holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { keysUnder, seedDataset, versionsOf, world } from "./helpers.js";

const tagBody = (name: string, version: number) =>
  encodeJson({ schema: 1, name, target: { branch: "main", version } });

// docs/protocol.md §7.9: every object under _refs/ is read as a reference or
// stops the cleanup with an error naming it (invariant 8).
describe("objects under _refs/ the census cannot name", () => {
  it("invariant 8: a released-format tag in a subfolder (_refs/tags/release/1.0.json) protects its version", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 4 });
    await store.put("_refs/tags/release/1.0.json", tagBody("release/1.0", 1));
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
      },
    );
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 1, reason: "tag" }),
    );
    expect(versionsOf(store)).toEqual([1, 4]);
  });

  it("invariant 8: a branch file in a subfolder protects its fork point", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 4 });
    await store.put(
      "_refs/branches/team/dev.json",
      encodeJson({ schema: 1, name: "team/dev", parent: { branch: "main", version: 2 } }),
    );
    const stats = await cleanup(
      ctx,
      { retainVersions: 1 },
      {
        format: holdfastFormat,
      },
    );
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 2, reason: "branch-lineage" }),
    );
    expect(versionsOf(store)).toEqual([2, 4]);
  });

  for (const key of [
    "_refs/tags/v1",
    "_refs/tags/V1.JSON",
    "_refs/tags/.json",
    "_refs/branches/dev",
    "_refs/README.md",
    "_refs/heads/main.json",
  ]) {
    it(`invariant 8: ${key} stops the cleanup with an error naming it, and nothing is deleted`, async () => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 4 });
      await store.put(key, tagBody("v1", 1));
      const dataBefore = keysUnder(store, "data/");
      const error = await cleanup(
        ctx,
        { retainVersions: 1 },
        {
          format: holdfastFormat,
        },
      ).catch((e: unknown) => e);
      expect(isHoldfastError(error, "invalid-input")).toBe(true);
      expect((error as { code?: string }).code).toBe(FOREIGN_REFERENCE_OBJECT);
      expect((error as { key?: string }).key).toBe(key);
      expect((error as Error).message).toContain(key);
      expect(versionsOf(store)).toEqual([1, 2, 3, 4]);
      expect(keysUnder(store, "data/")).toEqual(dataBefore);
    });
  }
});
