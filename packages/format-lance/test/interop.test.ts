import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { openLanceFormat } from "../src/index.js";
import { readBranch, readVersion, TABLE, writeHistory } from "./history.js";
import { type LanceSite, lanceVersions, localSite, readEveryVersion, rgwSite } from "./sites.js";

/**
 * LanceDB is the oracle: it writes the dataset, holdfast cleans it, and LanceDB must then
 * read every kept version exactly as before, list exactly the kept versions, and fail to
 * open the removed ones (docs/lance.md, "Interop tests").
 */
function describeInterop(siteName: string, makeSite: () => LanceSite) {
  describe(`LanceDB interop on ${siteName}`, () => {
    it.each(["v2", "v1"] as const)(
      "cleanup keeps what LanceDB needs: kept versions read in full, removed ones gone (%s naming)",
      { timeout: 120_000 },
      async (naming) => {
        const site = makeSite();
        const history = await writeHistory(site, { manifestNaming: naming });
        expect(history.versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

        const ctx = createContext(await site.store(TABLE));
        const format = await openLanceFormat(ctx);
        expect(format.naming).toBe(naming);
        const stats = await cleanup(ctx, { retainVersions: 3, minVersionAgeMs: 0 }, { format });

        const kept = [2, 3, 8, 9, 10];
        const retained = stats.retained
          .filter((r) => r.branch === "main")
          .map((r) => [r.version, r.reason])
          .sort((a, b) => Number(a[0]) - Number(b[0]));
        expect(retained).toEqual([
          [2, "tag"],
          [3, "branch-lineage"],
          [8, "policy"],
          [9, "policy"],
          [10, "latest"],
        ]);
        const retiredMain = stats.retired.filter((r) => r.branch === "main");
        expect(retiredMain.map((r) => r.version).sort((a, b) => a - b)).toEqual([1, 4, 5, 6, 7]);
        // The branch retires by the same policy (its manifests in tree/feature/_versions/).
        expect(stats.objectsDeleted.manifests).toBe(stats.retired.length);
        expect(stats.objectsDeleted.dataFiles).toBeGreaterThan(0);

        expect(await lanceVersions(site, TABLE)).toEqual(kept);
        const after = await readEveryVersion(site, TABLE);
        expect([...after.keys()]).toEqual(kept);
        for (const version of kept) expect(after.get(version)).toEqual(history.reads.get(version));
        expect(await readVersion(site, "keep")).toEqual(history.reads.get(2));
        expect(await readBranch(site, history.branch.name)).toEqual(history.branch.read);
        for (const version of [1, 4, 5, 6, 7]) {
          await expect(readVersion(site, version)).rejects.toThrow();
        }

        // A second run finds nothing more to retire and deletes nothing LanceDB needs.
        const again = await cleanup(ctx, { retainVersions: 3, minVersionAgeMs: 0 }, { format });
        expect(again.retired).toEqual([]);
        expect(again.objectsDeleted.dataFiles + again.objectsDeleted.manifests).toBe(0);
        expect(await readEveryVersion(site, TABLE)).toEqual(after);
      },
    );
  });
}

describeInterop("Ceph RGW (S3)", rgwSite);
describeInterop("local disk", localSite);
