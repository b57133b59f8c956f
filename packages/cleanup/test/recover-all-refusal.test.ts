import { readManifest } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { holdfastFormat, INTENTS_PREFIX } from "@holdfast/refs-lifecycle";
import { drain, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { recoverAll, recoverAndCleanup } from "../src/index.js";
import { keysUnder, seedDataset, versionsOf, world } from "./helpers.js";

// docs/protocol.md §5.3: the apps' recover and cleanup run
// the reference recovery first; when it fails (here an intent object that does not parse),
// the retirement records are still recovered before the failure is thrown, so a crashed
// cleaner's sealed record does not keep refusing leases while the reference refusal lasts.
type Ctx = Parameters<typeof recoverAll>[0];
const runs = [
  ["recover (recoverAll)", (ctx: Ctx) => recoverAll(ctx, { format: holdfastFormat })],
  [
    "cleanup (recoverAndCleanup)",
    (ctx: Ctx) => recoverAndCleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat }),
  ],
] as const;

describe("a reference recovery that fails", () => {
  it.each(runs)(
    "invariant 5: %s still decides a crashed cleaner's sealed record, then throws the refusal",
    async (_name, run) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 4, filesPer: 1 });
      const drained = [];
      for (const version of [1, 2]) {
        drained.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
      }
      const sealed = await seal(
        ctx,
        await drain(ctx, { branch: "main", versions: drained, owner: "01CRASHEDCLEANER" }),
      );
      await expect(
        acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 60_000 }),
      ).rejects.toThrow();
      const intent = `${INTENTS_PREFIX}tags/t/01ARZ3NDEKTSV4RRFFQ69G5FAV.json`;
      await store.put(intent, new TextEncoder().encode("not an intent"));

      await expect(run(ctx)).rejects.toMatchObject({ code: "MALFORMED_OBJECT", key: intent });
      // The sealed record no longer stands: its versions are leasable (or retired).
      expect(keysUnder(store, "_holdfast/retirement/")).not.toContain(sealed.key);
      for (const version of versionsOf(store)) {
        const lease = await acquireLease(ctx, {
          format: holdfastFormat,
          branch: "main",
          version,
          ttlMs: 60_000,
        });
        await releaseLease(ctx, lease);
      }
      expect(versionsOf(store)).toContain(4);
    },
  );
});
