import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const source = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "..", "src", "local.ts"),
  "utf8",
);

/** Counts calls of `name(` that are not a method call, a declaration or an import. */
function calls(name: string): number {
  return [...source.matchAll(new RegExp(`(?<![.\\w])await ${name}\\(`, "g"))].length;
}

describe("local store write paths", () => {
  it("C9 exactly one create-only call site (link) and one replacing call site (rename)", () => {
    // A second copy of either would be a write path the contract and race tests might miss.
    expect(calls("link")).toBe(1);
    expect(calls("rename")).toBe(1);
    // Unlinking an object happens in one place, under the key lock.
    expect([...source.matchAll(/await unlink\(paths\.file\)/g)].length).toBe(1);
  });
});
