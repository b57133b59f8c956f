import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { privatePackageNames, publicPackages, WORKSPACE_ROOT } from "../src/workspace.js";

/** The Node lines holdfast supports: the maintenance lines 22 (from 22.12, require(esm)) and 24, and 26 on. */
const SUPPORTED_NODE = "^22.12.0 || ^24.0.0 || >=26.0.0";
const packages = publicPackages();
const rootLicense = readFileSync(join(WORKSPACE_ROOT, "LICENSE"), "utf8");
const privateNames = privatePackageNames();

describe("published manifests", () => {
  it("finds the public packages", () => {
    expect(packages.map((p) => p.name)).toContain("@holdfast/conditional-store");
    expect(packages.length).toBeGreaterThanOrEqual(11);
  });

  it("the workspace root declares the supported Node lines, and the pinned Nodes are in them", () => {
    const root = JSON.parse(readFileSync(join(WORKSPACE_ROOT, "package.json"), "utf8"));
    expect(root.engines).toEqual({ node: SUPPORTED_NODE });
    const pins = readFileSync(join(WORKSPACE_ROOT, "tooling/scripts/node-install.sh"), "utf8");
    const pinned = [...pins.matchAll(/^HOLDFAST_NODE_(\d+)=(\d+)\.(\d+)\.(\d+)$/gm)].map((m) => ({
      line: Number(m[1]),
      major: Number(m[2]),
      minor: Number(m[3]),
    }));
    expect(pinned.map((p) => p.line).sort()).toEqual([22, 26]);
    for (const pin of pinned) {
      expect(pin.major).toBe(pin.line);
      if (pin.major === 22) expect(pin.minor).toBeGreaterThanOrEqual(12);
    }
  });

  it.each(packages.map((p) => [p.name, p] as const))(
    "%s declares engines, license, repository, sideEffects and ships LICENSE",
    (_, pkg) => {
      const m = pkg.manifest;
      expect(m.engines).toEqual({ node: SUPPORTED_NODE });
      expect(m.license).toBe("Apache-2.0");
      expect(m.repository).toEqual({
        type: "git",
        url: "git+https://github.com/holdfast/holdfast.git",
        directory: pkg.dir,
      });
      expect(m.sideEffects === false || Array.isArray(m.sideEffects)).toBe(true);
      expect(m.files).toContain("LICENSE");
      expect(readFileSync(join(WORKSPACE_ROOT, pkg.dir, "LICENSE"), "utf8")).toBe(rootLicense);
    },
  );

  it.each(packages.map((p) => [p.name, p] as const))(
    "%s publishes require-able exports of shipped files only, and builds before packing",
    (_, pkg) => {
      const m = pkg.manifest;
      const published = m.publishConfig?.exports;
      expect(published).toBeDefined();
      for (const conditions of Object.values(published ?? {})) {
        // types + default: `import` and `require` (Node 22.12+ require(esm)) both resolve.
        expect(Object.keys(conditions)).toEqual(["types", "default"]);
        for (const file of Object.values(conditions)) expect(file).toMatch(/^\.\/dist\//);
      }
      // The workspace exports add only the source condition used in development.
      for (const [subpath, conditions] of Object.entries(m.exports ?? {})) {
        const { "@holdfast/source": _source, ...rest } = conditions;
        expect(rest).toEqual(published?.[subpath]);
      }
      expect(m.scripts?.prepack).toBe(
        "turbo run build --filter=$npm_package_name --output-logs=errors-only && node ../../tooling/release/bin/check-built.mjs",
      );
    },
  );

  it.each(packages.map((p) => [p.name, p] as const))(
    "%s depends on workspace packages by caret range and on no private package",
    (_, pkg) => {
      for (const [name, range] of Object.entries(pkg.manifest.dependencies ?? {})) {
        expect({ name, private: privateNames.has(name) }).toEqual({ name, private: false });
        if (name.startsWith("@holdfast/"))
          expect({ name, range }).toEqual({ name, range: "workspace:^" });
      }
    },
  );
});
