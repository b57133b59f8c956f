import { describe, expect, it } from "vitest";
import { versionDryRun } from "../src/versioning.js";
import { publicPackages } from "../src/workspace.js";

describe("independent versions (changeset version in a scratch clone)", () => {
  const run = versionDryRun();
  const [first, patch, minor] = run.steps;
  const names = publicPackages().map((p) => p.name);

  it("the first release makes every public package 0.1.0 and writes only their changelogs", () => {
    expect(Object.keys(first!.bumped).sort()).toEqual([...names].sort());
    for (const change of Object.values(first!.bumped)) expect(change).toBe("0.0.0 -> 0.1.0");
    expect([...first!.changelogs].sort()).toEqual([...names].sort());
    expect(run.firstChangelog).toMatch(/^# @holdfast\/conditional-store\n\n## 0\.1\.0\n/);
  });

  it("holdfast --version: the next release plus the commit before it, exactly the package version after", () => {
    // The build stamps what changesets gives the CLI (tooling/release/bin/stamp-version.mjs).
    expect(run.cliVersion.unreleased).toBe(`0.1.0-dev+${run.cliVersion.commit}`);
    expect(run.cliVersion.released).toBe("0.1.0");
  });

  it("a patch changeset for conditional-store bumps only conditional-store", () => {
    expect(patch!.bumped).toEqual({ "@holdfast/conditional-store": "0.1.0 -> 0.1.1" });
    expect(run.cleanupRanges["@holdfast/conditional-store"]).toBe("workspace:^");
  });

  it("a minor one (0.1 -> 0.2) also patches the dependents whose ^0.1 range it breaks", () => {
    expect(minor!.bumped["@holdfast/conditional-store"]).toBe("0.1.1 -> 0.2.0");
    expect(minor!.bumped["@holdfast/dataset"]).toBe("0.1.0 -> 0.1.1");
  });
});
