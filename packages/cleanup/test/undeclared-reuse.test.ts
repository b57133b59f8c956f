import { FaultStore } from "@holdfast/conditional-store/testing";
import {
  COMMIT_INTENT_PREFIX,
  COMMIT_SOURCES_REQUIRED,
  commitVersion,
  UNDECLARED_REUSE_MAX_AGE_MS,
  writeDataFile,
} from "@holdfast/dataset";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { cleanup, MIN_ORPHAN_GRACE_MS } from "../src/index.js";
import { keysUnder, MINUTE, seedDataset, versionsOf, world } from "./helpers.js";

const policy = { retainVersions: 1, orphanGraceMs: MIN_ORPHAN_GRACE_MS };

// docs/protocol.md §2.5 (writers that name no
// `sources`): the orphan sweep of a cleanup whose last look came before the commit's
// intent must never delete a file the commit names.
describe("commits that reuse files without naming their sources", () => {
  it("hole 1 without sources: a file older than the undeclared-reuse bound is refused (COMMIT_SOURCES_REQUIRED) when committed just before an orphan sweep; never lands naming a swept file", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 1 });
    // A file whose version is gone (read from its manifest earlier): named by no manifest,
    // older than the grace. A copy of the handle carries no "written here" marker.
    const written = await writeDataFile(ctx, new TextEncoder().encode("old rows"));
    const copy = { key: written.key, size: written.size };
    await time.advance(2 * 60 * MINUTE);
    // The commit runs after the cleaner's last look and before its sweep deletes.
    const cleaner = new FaultStore(store);
    let outcome: unknown;
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          outcome = await commitVersion(ctx, { branch: "main", files: [copy] }).catch(
            (e: unknown) => e,
          );
        },
      },
    );
    const stats = await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    expect(outcome).toMatchObject({ kind: "refused", code: COMMIT_SOURCES_REQUIRED });
    expect(stats.objectsDeleted.orphans).toBe(1);
    expect(versionsOf(store)).toEqual([1]);
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toEqual([]);
  });

  it("hole 1 without sources: a recently written file is still accepted (the intent protects it), and the bound stays at most half the orphan grace floor", async () => {
    expect(2 * UNDECLARED_REUSE_MAX_AGE_MS).toBeLessThanOrEqual(MIN_ORPHAN_GRACE_MS);
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 1 });
    const written = await writeDataFile(ctx, new TextEncoder().encode("recent rows"));
    await time.advance(20 * MINUTE);
    const result = await commitVersion(ctx, {
      branch: "main",
      files: [{ key: written.key, size: written.size }],
    });
    expect(result.version).toBe(2);
    expect(await store.head(written.key)).not.toBeNull();
    expect(keysUnder(store, COMMIT_INTENT_PREFIX)).toEqual([]);
  });
});
