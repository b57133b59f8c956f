import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { holdfastBranchName, lanceBranchName } from "../src/branch-names.js";
import { isUnsupportedLance, openLanceFormat } from "../src/index.js";
import { listKeys, localPySite, pylance, type Written } from "./pylance.js";

/**
 * holdfast's names for Lance branches (docs/lance.md, "Lance branches"): a Lance `/` is
 * holdfast's `..` (Lance never allows `..` in a branch name), exact both ways, and a Lance
 * name the mapping cannot carry exactly has no holdfast name (not retired).
 */
describe("holdfast names of Lance branches", () => {
  it("maps `/` to `..` and back, exactly, and leaves one-segment names as they are", () => {
    const cases: [string, string][] = [
      ["dev", "dev"],
      ["dev/sub", "dev..sub"],
      ["a/b/c", "a..b..c"],
      ["team-1/feature_x.v2", "team-1..feature_x.v2"],
      ["_x", "_x"],
      ["a/-b", "a..-b"],
    ];
    for (const [lance, name] of cases) {
      expect({ lance, name: holdfastBranchName(lance) }).toEqual({ lance, name });
      expect({ name, lance: lanceBranchName(name) }).toEqual({ name, lance });
    }
  });

  it("gives no holdfast name where the mapping could not be exact, and none to main", () => {
    // In a nested name a segment with '.' at an end would make `...` (a./b, a/.b), a non-ASCII
    // letter or a leading '-' is no holdfast name, and the name must fit 128 characters.
    for (const lance of [
      "a./b",
      "a/.b",
      "a/b.",
      ".x",
      "-a",
      "-a/b",
      "ü",
      "ü/ä",
      `a/${"b".repeat(127)}`,
    ]) {
      expect({ lance, name: holdfastBranchName(lance) }).toEqual({ lance, name: null });
    }
    for (const name of ["a...b", "..a", "a..", "a....b", ".x", "dev/sub"]) {
      expect({ name, lance: lanceBranchName(name) }).toEqual({ name, lance: null });
    }
    expect(lanceBranchName("main")).toBe("main");
  });

  it("a Lance branch inside another root's folders (dev/data) is refused before anything is written", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    const written = await pylance<Written>(["write", "v1-naming", site.root], {});
    const uri = `${site.root}/v1names.lance`;
    // Lance accepts `dev` and `dev/data`: the second lives in tree/dev/data/, dev's data folder.
    await pylance(["create-branch", uri, "dev", "--from-version", "2"], {});
    await pylance(["create-branch", uri, "dev/data", "--from-version", "3"], {});
    const store = await site.store("v1names");
    const keysBefore = await listKeys(store);
    const ctx = createContext(store);
    const format = await openLanceFormat(ctx);
    const error = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
      { format },
    ).catch((e: unknown) => e);
    expect(isUnsupportedLance(error)).toBe(true);
    expect(error).toMatchObject({
      feature: "branch-layout",
      key: "_refs/branches/dev%2Fdata.json",
    });
    const keysAfter = await listKeys(store);
    expect(keysAfter.filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([]);
    // Every Lance object stays (holdfast's own lock and clock objects aside).
    expect(keysAfter.filter((k) => !k.startsWith("_holdfast/"))).toEqual(
      keysBefore.filter((k) => !k.startsWith("_holdfast/")),
    );
    expect(written.tables.v1names!.versions.length).toBeGreaterThan(3);
  });
});
