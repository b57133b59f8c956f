import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import type { ObjectStore } from "@holdfast/conditional-store";
import {
  FormatRegistry,
  holdfastFormatEntry,
  INSIDE_TABLE,
  refuseTableLocation,
} from "@holdfast/refs-lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lanceFormatEntry } from "../src/index.js";

// The rule "where is the table root, and is this URI inside one", specified once in
// conformance/table-root/cases.json and run here and by python/tests/test_table_root.py
// (docs/guarantees.md, "Where a table is"): the same outcome and the same number of
// requests in both languages, on real folders of the local file system.

interface Case {
  readonly name: string;
  readonly uri: string;
  readonly expect: {
    readonly kind: string;
    readonly format?: string;
    readonly root?: string;
    readonly folder?: string;
    readonly branch?: string | null;
  };
  readonly requests: number;
}

const doc = JSON.parse(
  await import("node:fs").then((fs) =>
    fs.readFileSync(new URL("../../../conformance/table-root/cases.json", import.meta.url), "utf8"),
  ),
) as { keys: string[]; cases: Case[] };

const registry = new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry);
let dir = "";

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "table-root-"));
  for (const key of doc.keys) {
    await mkdir(dirname(join(dir, key)), { recursive: true });
    await writeFile(join(dir, key), "x");
  }
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every list, head and get a store answers, counted. */
function counted(store: ObjectStore, count: { n: number }): ObjectStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop === "list" || prop === "head" || prop === "get") {
        return (...args: unknown[]) => {
          count.n += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function locate(uri: string, count: { n: number }) {
  return registry.locate(
    uri.split("/").filter((s) => s !== ""),
    async (segments) => {
      const root = join(dir, ...segments);
      const info = await stat(root).catch(() => null);
      if (!info?.isDirectory()) return null;
      return counted(createLocalStore({ root, createRoot: false, fsync: false }), count);
    },
  );
}

describe("where a table is (conformance/table-root/cases.json)", () => {
  it("the file has a case of every outcome", () => {
    expect(new Set(doc.cases.map((c) => c.expect.kind))).toEqual(
      new Set(["table", "inside", "holds", "none"]),
    );
  });

  for (const c of doc.cases) {
    it(c.name, async () => {
      const count = { n: 0 };
      const found = await locate(c.uri, count);
      const seen: Record<string, unknown> = { kind: found.kind };
      if (found.kind !== "none") seen.format = found.format;
      if (found.kind === "inside" || found.kind === "holds") seen.root = found.root.join("/");
      if (found.kind === "inside") {
        seen.folder = found.folder;
        seen.branch = found.branch;
      }
      expect(seen).toEqual(c.expect);
      expect(count.n).toBe(c.requests);
    });
  }

  it("a branch folder is refused as invalid-input naming the table root and the branch", async () => {
    const found = await locate("db/t.lance/tree/dev", { n: 0 });
    let thrown: unknown;
    try {
      refuseTableLocation(found, (s) => `/x/${s.join("/")}`);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      kind: "invalid-input",
      code: INSIDE_TABLE,
      key: "/x/db/t.lance",
    });
    expect((thrown as { hint: string }).hint).toContain("--branch dev");
  });
});
