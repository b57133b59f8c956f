import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The decoders in src/generated/ are what protobufjs-cli (a pinned devDependency) generates
 * from proto/lance-table.proto (docs/lance.md): regenerated into a fresh folder, every file
 * must equal the committed one, so the .proto and the code cannot drift apart.
 */
describe("generated Lance decoders", () => {
  it("equal what scripts/proto-gen.mjs generates from proto/lance-table.proto", () => {
    const pkg = fileURLToPath(new URL("..", import.meta.url));
    const committed = join(pkg, "src/generated");
    const fresh = mkdtempSync(join(tmpdir(), "holdfast-proto-gen-"));
    try {
      execFileSync(process.execPath, [join(pkg, "scripts/proto-gen.mjs"), fresh]);
      const names = readdirSync(committed).sort();
      expect(names).toEqual(["lance-table.d.ts", "lance-table.js", "lance-table.json"]);
      expect(readdirSync(fresh).sort()).toEqual(names);
      for (const name of names) {
        expect(readFileSync(join(fresh, name), "utf8"), name).toBe(
          readFileSync(join(committed, name), "utf8"),
        );
      }
    } finally {
      rmSync(fresh, { recursive: true, force: true });
    }
  }, 60_000);
});
