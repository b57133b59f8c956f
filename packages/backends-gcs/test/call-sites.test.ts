// C9: the GCS backend path has exactly one place that sends an upload to GCS, and nothing in
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
  it("C9 exactly one client upload call site (GcsStore.put) in the GCS backend", () => {
    expect(sources.map((s) => s.name).sort()).toEqual([
      "errors.ts",
      "gcs.ts",
      "index.ts",
      "open.ts",
    ]);
    const uploads = occurrences(/\.save\(/g);
    expect(uploads).toHaveLength(1);
    expect(uploads[0]).toMatch(/^gcs\.ts:/);
    // No other client write path (streams, resumable sessions, copies, composes) exists beside it.
    expect(
      occurrences(
        /\.(createWriteStream|createResumableUpload|upload|copy|move|rename|combine|setMetadata)\(/g,
      ),
    ).toEqual([]);
  });

  it("C9 the probe sends no conditional put of its own (conditional-store probes through the resolver)", () => {
    const open = sources.find((s) => s.name === "open.ts")?.text ?? "";
    expect(open).toMatch(/probeStore\(/);
    expect(open).not.toMatch(/\.put\(/);
  });
});
