import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const CONDITIONAL_NAMES = new Set(["precondition", "ifNoneMatch", "ifMatch"]);

/**
 * Finds calls `<anything>.put(...)` whose arguments carry a precondition: written inline
 * (`{ precondition: ... }`, `{ ifNoneMatch: "*" }`), or through a variable of the same file
 * whose initializer does. Comments and strings never count: this walks the syntax tree.
 */
export function conditionalPutCalls(fileName: string, source: string): number[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const initializers = new Map<string, ts.Node[]>();
  const collect = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
      const list = initializers.get(node.name.text) ?? [];
      list.push(node.initializer);
      initializers.set(node.name.text, list);
    }
    ts.forEachChild(node, collect);
  };
  collect(file);

  const mentionsPrecondition = (node: ts.Node, seen: Set<string>): boolean => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) {
      if (CONDITIONAL_NAMES.has(node.text)) return true;
      if (ts.isIdentifier(node) && !seen.has(node.text)) {
        seen.add(node.text);
        if ((initializers.get(node.text) ?? []).some((init) => mentionsPrecondition(init, seen))) {
          return true;
        }
      }
      return false;
    }
    if (ts.isStringLiteral(node) && CONDITIONAL_NAMES.has(node.text)) {
      // `{ "precondition": ... }` or `options["precondition"]`
      return ts.isPropertyAssignment(node.parent) || ts.isElementAccessExpression(node.parent);
    }
    return (
      ts.forEachChild(node, (child) => mentionsPrecondition(child, seen) || undefined) ?? false
    );
  };

  const lines: number[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === "put" &&
      node.arguments.some((arg) => mentionsPrecondition(arg, new Set()))
    ) {
      lines.push(file.getLineAndCharacterOfPosition(node.getStart()).line + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return lines;
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (entry === "node_modules" || entry === "dist") continue;
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (/\.(c|m)?tsx?$/.test(entry) && !entry.endsWith(".d.ts")) yield path;
  }
}

let inventory: ReturnType<typeof scanInventory> | undefined;
const productionInventory = () => {
  inventory ??= scanInventory();
  return inventory;
};

/** Every `packages/<name>/src` and `apps/<name>/src` tree, relative to the repo root. */
function scanInventory() {
  const production = new Map<string, number[]>();
  const testingSupport = new Map<string, number[]>();
  for (const group of ["packages", "apps"]) {
    const groupDir = join(repoRoot, group);
    if (!existsSync(groupDir)) continue;
    for (const pkg of readdirSync(groupDir)) {
      const src = join(groupDir, pkg, "src");
      if (!existsSync(src)) continue;
      for (const path of sourceFiles(src)) {
        const rel = relative(repoRoot, path).split(sep).join("/");
        const source = readFileSync(path, "utf8");
        const calls = conditionalPutCalls(rel, source);
        if (calls.length === 0) continue;
        // Test items are not production paths: scripted stores acting as "another writer"
        // (`src/testing/`), co-located tests, and suites that run under vitest (the
        // store contract drives raw backends on purpose).
        const isTestSupport =
          /\/src\/testing\//.test(rel) ||
          /\.(test|spec)\.tsx?$/.test(rel) ||
          /from\s+["']vitest["']/.test(source);
        (isTestSupport ? testingSupport : production).set(rel, calls);
      }
    }
  }
  return { production, testingSupport };
}

describe("C9 one conditional-put call site", () => {
  it("C9 exactly one production conditional put exists: the resolver's", () => {
    const { production } = productionInventory();
    const sites = [...production].map(([file, lines]) => ({ file, count: lines.length }));
    const where = [...production].map(([file, lines]) => `${file}:${lines.join(",")}`).join(" ");
    expect(
      sites,
      `conditional puts outside the resolver (${where}); use putIfAbsent/putIfMatch`,
    ).toEqual([{ file: "packages/conditional-store/src/resolve.ts", count: 1 }]);
  });

  it("C9 the scan sees the scripted store's foreign writes (test support, exempt)", () => {
    const { testingSupport } = productionInventory();
    expect(
      testingSupport.get("packages/conditional-store/src/testing/fault-store.ts")?.length,
    ).toBe(2);
  });

  describe("C9 the scanner", () => {
    const count = (source: string) => conditionalPutCalls("x.ts", source).length;

    it("C9 finds an inline precondition", () => {
      expect(count(`await store.put(k, b, { precondition: { ifNoneMatch: "*" } });`)).toBe(1);
      expect(count(`await this.#inner.put(k, b, { precondition });`)).toBe(1);
      expect(count(`await s?.put(k, b, { signal, precondition: p });`)).toBe(1);
    });

    it("C9 finds a precondition passed through a local variable", () => {
      expect(
        count(`const opts = { precondition: { ifMatch: e } };\nawait store.put(k, b, opts);`),
      ).toBe(1);
      expect(
        count(
          `const p = { ifNoneMatch: "*" };\nconst o = { precondition: p };\nstore.put(k, b, o);`,
        ),
      ).toBe(1);
    });

    it("C9 finds a second copy of the loop", () => {
      const copy = `for (let i = 0; i < 5; i++) {\n  try { return await store.put(key, body, { precondition }); } catch {}\n}\nawait other.put(key, body, { precondition: { ifMatch: tag } });`;
      expect(count(copy)).toBe(2);
    });

    it("C9 ignores unconditional puts, forwarding wrappers, comments and strings", () => {
      expect(count(`await store.put(k, b);`)).toBe(0);
      expect(count(`put(k, b, options) { return this.inner.put(k, b, options); }`)).toBe(0);
      expect(
        count(`// store.put(k, b, { precondition })\nconst s = "x.put(k, b, { precondition })";`),
      ).toBe(0);
      expect(count(`await map.set(k, { precondition });`)).toBe(0);
    });
  });
});
