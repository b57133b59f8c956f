import { FORMAT_REQUIRED } from "@holdfast/dataset";
import { describe, expect, it } from "vitest";
import {
  censusReferences,
  createBranch,
  createTag,
  deleteBranch,
  deleteTag,
  getBranch,
  getTag,
  listBranches,
  listReferencedVersions,
  listTags,
  recoverReferences,
  replaceBranchMetadata,
  updateTag,
} from "../src/index.js";
import { commits, keysUnder, world } from "./support.js";

// docs/protocol.md §1.1: no operation falls back to holdfast's layout. A
// call without the dataset's format is a type error (each `@ts-expect-error` below fails
// the typecheck once the format is optional again) and, for a JavaScript caller, a typed
// refusal before any request.
describe("reference operations take the dataset's format", () => {
  it("invariant 6: every operation called without a format refuses with FORMAT_REQUIRED and sends nothing", async () => {
    const { ctx, faults, memory } = world();
    await commits(ctx, "main", 2);
    const target = { branch: "main", version: 1 };
    const before = keysUnder(memory, "");
    faults.resetCounts();
    const calls: [string, () => unknown][] = [
      // @ts-expect-error the format is required
      ["createTag", () => createTag(ctx, { name: "t", target })],
      // @ts-expect-error the format is required
      ["updateTag", () => updateTag(ctx, { name: "t", target })],
      // @ts-expect-error the format is required
      ["getTag", () => getTag(ctx, "t")],
      // @ts-expect-error the format is required
      ["listTags", () => listTags(ctx)],
      // @ts-expect-error the format is required
      ["createBranch", () => createBranch(ctx, { name: "b", parent: target })],
      // @ts-expect-error the format is required
      ["replaceBranchMetadata", () => replaceBranchMetadata(ctx, { name: "b", metadata: {} })],
      // @ts-expect-error the format is required
      ["getBranch", () => getBranch(ctx, "b")],
      // @ts-expect-error the format is required
      ["listBranches", () => listBranches(ctx)],
      // @ts-expect-error the format is required
      ["deleteTag", () => deleteTag(ctx, "t")],
      // @ts-expect-error the format is required
      ["deleteBranch", () => deleteBranch(ctx, "b")],
      // @ts-expect-error the format is required
      ["recoverReferences", () => recoverReferences(ctx)],
      // @ts-expect-error the format is required
      ["censusReferences", () => censusReferences(ctx)],
      // @ts-expect-error the format is required
      ["listReferencedVersions", () => listReferencedVersions(ctx)],
      // An options object without its format is refused the same way.
      // @ts-expect-error the format is required
      ["createTag {}", () => createTag(ctx, { name: "t", target }, {})],
      // @ts-expect-error the format is required
      ["censusReferences {}", () => censusReferences(ctx, {})],
    ];
    for (const [name, call] of calls) {
      const error = await Promise.resolve()
        .then(call)
        .then(
          () => new Error(`${name} succeeded`),
          (e: unknown) => e,
        );
      expect({ name, error }).toMatchObject({
        name,
        error: { kind: "invalid-input", code: FORMAT_REQUIRED },
      });
    }
    expect(faults.requests()).toEqual([]);
    expect(keysUnder(memory, "")).toEqual(before);
  });
});
