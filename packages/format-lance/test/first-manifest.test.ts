import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { openLanceFormat } from "../src/index.js";
import { localPySite, pylance, type Written } from "./pylance.js";

/**
 * The naming of a table is read from the first manifest its `_versions/` lists, a page of
 * a few names at a time (docs/lance.md, "What holdfast reads"): only `.tmp*` leftovers of
 * failed Lance commits sort before the manifests, and however many there are, the next
 * page is read until a manifest decides.
 */
describe("Lance naming from the first manifest listed", () => {
  it("staging leftovers filling more than a page before the manifests do not hide them", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    const written = await pylance<Written>(["write", "v1-naming", site.root], {});
    const versions = written.tables.v1names!.versions;
    // What a Lance commit that failed after writing its staging manifest leaves behind.
    for (let i = 0; i < 20; i += 1) {
      writeFileSync(
        join(site.dir!, "v1names.lance", "_versions", `.tmp_${i}.manifest_${i}`),
        "partial",
      );
    }
    const ctx = createContext(await site.store("v1names"));
    const format = await openLanceFormat(ctx);
    expect(format.naming).toBe("v1");
    expect(await format.listBranches(ctx)).toContain("main");
    const listed: number[] = [];
    for await (const entry of format.listVersions(ctx, "main")) listed.push(entry.version);
    expect(listed).toEqual(versions);
  });
});
