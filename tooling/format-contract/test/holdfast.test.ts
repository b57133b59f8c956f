import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { commitVersion, holdfastLayout, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import { holdfastFormatEntry } from "@holdfast/refs-lifecycle";
import { afterAll } from "vitest";
import { describeDatasetFormatContract } from "../src/index.js";

const base = mkdtempSync(join(tmpdir(), "holdfast-format-contract-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;

describeDatasetFormatContract("holdfast format on the local backend", {
  async create() {
    n += 1;
    const ctx = createContext(createLocalStore({ root: join(base, `ds-${n}`) }));
    await initDataset(ctx);
    for (let v = 1; v <= 4; v += 1) {
      const file = await writeDataFile(ctx, new TextEncoder().encode(`version ${v}`));
      await commitVersion(ctx, { branch: "main", files: [file] });
    }
    return { ctx, format: holdfastLayout, branch: "main" };
  },
  entry: holdfastFormatEntry,
});
