// C9: the Azure backend path has exactly one place that sends a put to Azure, and nothing in
// it sends a conditional put except through the resolver.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const srcDir = join(import.meta.dirname, "..", "src");
const sources = readdirSync(srcDir)
  .filter((name) => name.endsWith(".ts"))
  .map((name) => ({ name, text: readFileSync(join(srcDir, name), "utf8") }));

function occurrences(pattern: RegExp): string[] {
  return sources.flatMap(({ name, text }) =>
    [...text.matchAll(pattern)].map((m) => `${name}:${text.slice(0, m.index).split("\n").length}`),
  );
}

describe("conditional-put call sites", () => {
  it("C9 exactly one SDK upload call site (AzureStore.put) in the Azure backend", () => {
    expect(sources.map((s) => s.name).sort()).toEqual([
      "azure.ts",
      "errors.ts",
      "index.ts",
      "open.ts",
    ]);
    const uploads = occurrences(/\.upload\(/g);
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatch(/^azure\.ts:/);
    // No other SDK write path (block staging, copies, append/page blobs) exists beside it.
    expect(
      occurrences(
        /\.(stageBlock|commitBlockList|syncUploadFromURL|beginCopyFromURL|uploadData|uploadFile|uploadStream|appendBlock|uploadPages)\(/g,
      ),
    ).toEqual([]);
  });

  it("C9 the probe sends no conditional put of its own (conditional-store probes through the resolver)", () => {
    const open = sources.find((s) => s.name === "open.ts")?.text ?? "";
    expect(open).toMatch(/assertStoreSupported\(/);
    expect(open).not.toMatch(/\bstore\.put\(/);
  });
});
