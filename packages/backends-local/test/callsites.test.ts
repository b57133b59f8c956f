import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const srcDir = join(dirname(fileURLToPath(import.meta.url)), "..", "src");
const read = (file: string) => readFileSync(join(srcDir, file), "utf8");
const files = read("files.ts");
// Every other source file, so a call site moved to a new module is still counted.
const source = readdirSync(srcDir)
  .filter((name) => name.endsWith(".ts") && name !== "files.ts")
  .map(read)
  .join("\n");

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
    // Unlinking an object happens in one helper (files.ts), called only under the key lock.
    expect([...files.matchAll(/await unlink\(file\)/g)].length).toBe(1);
    expect([...source.matchAll(/unlinkFile\(|unlink\(file\)/g)].length).toBe(0);
    const helper = files.slice(
      files.indexOf("export async function unlinkObject("),
      files.indexOf("export async function locateObject("),
    );
    const everywhere = [...files.matchAll(/await unlinkFile\(/g)].length;
    expect([...helper.matchAll(/await unlinkFile\(/g)].length).toBe(everywhere);
    expect(everywhere).toBe(3);
    // Every call of the helper is inside a lock's critical section: a single-key delete's
    // (deleteOne) or a batch's, which holds the lock file its keys share. The one exception
    // is a batch the caller declares create-only (DeleteManyOptions.createOnly: no
    // compare-and-swap ever names its keys, so there is nothing for the lock to exclude).
    const calls = [...source.matchAll(/unlinkObject\(key, paths/g)].map((m) => m.index ?? 0);
    expect(calls).toHaveLength(2);
    const single = source.slice(Math.max(0, calls[0]! - 400), calls[0]!);
    expect(single).toMatch(/disk\.withLock\(/);
    const batch = source.slice(source.indexOf("export async function deleteBatch("));
    const batchCalls = [...batch.matchAll(/await unlink\(target\)|pMap\(targets, unlink/g)];
    expect(batchCalls.map((m) => m[0])).toEqual(["pMap(targets, unlink", "await unlink(target)"]);
    const unlocked = batch.slice(0, batchCalls[0]!.index);
    expect(unlocked.slice(-60)).toMatch(/if \(createOnly\) \{\s*await $/);
    const locked = batch.slice(0, batchCalls[1]!.index).slice(-400);
    expect(locked).toMatch(/withKeyLock\(/);
  });
});
