import { seededIds } from "@holdfast/conditional-store";
import { holdfastLayout, readManifest } from "@holdfast/dataset";
import { acquireLease, censusLeases, listLeases, renewLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { drain, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { commitVersions, world } from "./helpers.js";

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/**
 * Every interleaving of one acquirer (HEAD, PUT lease, LIST retirement[, DELETE]) with one
 * cleaner (W drain, then R leases): the cleaner's two steps are injected before the
 * acquirer's k-th and j-th request (k <= j; 4 = after the acquirer finished).
 */
describe("acquire vs drain, all interleavings (docs/protocol.md §4)", () => {
  const points = [0, 1, 2, 3, 4];
  for (const k of points) {
    for (const j of points.filter((p) => p >= k)) {
      it(`drain before request ${k}, census before request ${j}: a successful acquire is always counted`, async () => {
        const w = world();
        await commitVersions(w, 1);
        const cleaner = createContext(w.memory, {
          ids: seededIds(5),
          clock: w.storeTime,
          sleep: w.storeTime.sleep,
        });
        const { etag } = await readManifest(cleaner, "main", 1);
        let census: Map<number, string> | null = null;
        const runDrain = async () => {
          const handle = await drain(cleaner, {
            branch: "main",
            versions: [{ version: 1, manifestEtag: etag }],
            owner: cleaner.ids.next(),
          });
          return handle;
        };
        let drainKey = "";
        const runCensus = async () => {
          const ref = (await w.memory.head(drainKey))!.lastModified;
          census = await censusLeases(cleaner)("main", [1], ref);
        };
        const steps: Record<number, (() => Promise<void>)[]> = {};
        const at = (n: number, f: () => Promise<void>) => {
          steps[n] = [...(steps[n] ?? []), f];
        };
        at(k, async () => {
          drainKey = (await runDrain()).key;
        });
        at(j, runCensus);
        const fired = new Set<number>();
        for (const n of [0, 1, 2, 3]) {
          const actions = steps[n];
          if (!actions) continue;
          w.fault.on(
            { nth: n + 1 },
            {
              type: "before",
              run: async () => {
                fired.add(n);
                for (const action of actions) await action();
              },
            },
          );
        }
        const outcome = await acquireLease(w.reader, {
          format: holdfastLayout,
          branch: "main",
          version: 1,
          ttlMs: 30_000,
        }).then(
          () => "acquired" as const,
          (e: { code?: string }) => e.code ?? "error",
        );
        // Points the acquirer never reached (a 4th request happens only when refused) run after it.
        for (const n of [0, 1, 2, 3, 4]) {
          if (fired.has(n)) continue;
          for (const action of steps[n] ?? []) await action();
        }

        expect(census).not.toBeNull();
        const counted = (census as Map<number, string> | null)?.has(1) ?? false;
        // The safety property: never "acquired" while the census missed the lease.
        expect(outcome === "acquired" && !counted).toBe(false);
        if (outcome !== "acquired") {
          expect(outcome).toBe("RETIRING");
          expect(await collect(listLeases(w.reader))).toEqual([]);
        }
      });
    }
  }
});

describe("renew vs seal (docs/protocol.md §4)", () => {
  for (const k of [0, 1, 2]) {
    it(`seal before renewal request ${k}: a renewal reported successful was written before the seal`, async () => {
      const w = world();
      await commitVersions(w, 1);
      const cleaner = createContext(w.memory, {
        ids: seededIds(6),
        clock: w.storeTime,
        sleep: w.storeTime.sleep,
      });
      const lease = await acquireLease(w.reader, {
        format: holdfastLayout,
        branch: "main",
        version: 1,
        ttlMs: 30_000,
      });
      const { etag } = await readManifest(cleaner, "main", 1);
      const drained = await drain(cleaner, {
        branch: "main",
        versions: [{ version: 1, manifestEtag: etag }],
        owner: cleaner.ids.next(),
      });
      await w.storeTime.advance(5_000);
      w.fault.resetCounts();
      let sealedAt: Date | null = null;
      const runSeal = async () => {
        const sealed = await seal(cleaner, drained);
        sealedAt = (await w.memory.head(sealed.key))!.lastModified;
        await w.storeTime.advance(1_000);
      };
      if (k < 2) w.fault.on({ nth: k + 1 }, { type: "before", run: runSeal });
      const outcome = await renewLease(w.reader, lease).then(
        () => "renewed" as const,
        (e: { code?: string }) => e.code ?? "error",
      );
      if (k === 2) await runSeal();
      const stored = (await w.memory.head(lease.key))!;
      if (outcome === "renewed") {
        // The renewal's write is stamped no later than the seal: census 2 sees it.
        expect(stored.lastModified.getTime()).toBeLessThanOrEqual(sealedAt!.getTime());
      } else {
        expect(outcome).toBe("SEALED");
      }
      expect(k === 2 ? outcome === "renewed" : outcome === "SEALED").toBe(true);
    });
  }
});
