import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const source = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "..", "src", "local.ts"),
  "utf8",
);

/** Counts calls of `name(temp, ...)`: the calls that make a written temp file an object. */
function callsOnTemp(name: string): number {
  return [...source.matchAll(new RegExp(`(?<![.\\w])await ${name}\\(temp,`, "g"))].length;
}

describe("local store write paths", () => {
  it("C9 exactly one create-only call site (link) and one replacing call site (rename)", () => {
    // A second copy of either would be a write path the contract and race tests might miss.
    expect(callsOnTemp("link")).toBe(1);
    expect(callsOnTemp("rename")).toBe(1);
    // The only other link is the self-file link of a file that becomes a directory.
    expect([...source.matchAll(/(?<![.\w])await (link|rename)\(/g)].length).toBe(3);
    // Unlinking an object happens in one helper, called only under the key lock.
    expect([...source.matchAll(/await unlink\(file\)/g)].length).toBe(1);
    const locked = source.slice(
      source.indexOf("async #unlinkLocked("),
      source.indexOf("#withLock<T>("),
    );
    const everywhere = [...source.matchAll(/await unlinkFile\(/g)].length;
    expect([...locked.matchAll(/await unlinkFile\(/g)].length).toBe(everywhere);
    expect(everywhere).toBe(3);
  });
});
