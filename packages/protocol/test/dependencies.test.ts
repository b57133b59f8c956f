import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

describe("the protocol core depends on nothing above it", () => {
  it("declares only conditional-store and zod as dependencies", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual([
      "@holdfast/conditional-store",
      "zod",
    ]);
  });

  it("imports no other holdfast package from its source", () => {
    const imported = readdirSync(join(root, "src"))
      .filter((file) => file.endsWith(".ts"))
      .flatMap((file) => {
        const text = readFileSync(join(root, "src", file), "utf8");
        return [...text.matchAll(/from "(@holdfast\/[^"]+)"/g)].map((m) => m[1]);
      });
    expect(imported.length).toBeGreaterThan(0);
    expect(new Set(imported)).toEqual(new Set(["@holdfast/conditional-store"]));
  });
});
