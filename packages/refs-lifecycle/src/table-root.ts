import { holdfastError, type ObjectStore } from "@holdfast/conditional-store";
import { DATASET_KEY } from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import type { FormatEntry } from "./formats.js";

/**
 * The folders a table root keeps: Lance's (`_versions`, `data`, `_deletions`, `_indices`,
 * `_transactions`, `_refs`, `tree`, `_mem_wal`, `_blobs`, `_fri`) and holdfast's own
 * (`_versions`, `data`, `_refs`, `_holdfast`). A folder below a table root is inside the
 * table only through one of these, so only an ancestor followed by one of these names is
 * asked whether it is a table root (docs/guarantees.md, "Where a table is").
 */
export const TABLE_LAYOUT_FOLDERS: ReadonlySet<string> = new Set([
  "_versions",
  "data",
  "_deletions",
  "_indices",
  "_transactions",
  "_refs",
  "tree",
  "_holdfast",
  "_mem_wal",
  "_blobs",
  "_fri",
]);

/** Code of the `invalid-input` error for a URI inside a table (a branch folder, `data/`, ...). */
export const INSIDE_TABLE = "INSIDE_TABLE";
/** Code of the `invalid-input` error for a URI naming a folder that holds a table. */
export const HOLDS_TABLE = "HOLDS_TABLE";

/** How many child folders a URI without a table is asked about before it is called empty of tables. */
export const HELD_TABLE_PROBES = 16;

/**
 * Where a URI stands relative to the tables around it:
 * - `table`: the URI is a table root of the format named (`lance`, `holdfast`);
 * - `inside`: the URI lies inside the table at `root` (segments of the namespace), through
 *   its layout folder `folder`; `branch` is the Lance branch when the URI is (or is inside)
 *   that branch's folder `tree/{branch}/`;
 * - `holds`: the URI is no table, and its child folder `root` is one;
 * - `none`: no table at, above or directly below the URI.
 */
export type TableLocation =
  | { readonly kind: "table"; readonly format: string }
  | {
      readonly kind: "inside";
      readonly root: readonly string[];
      readonly format: string;
      readonly folder: string;
      readonly branch: string | null;
    }
  | { readonly kind: "holds"; readonly root: readonly string[]; readonly format: string }
  | { readonly kind: "none" };

/**
 * A store rooted at a folder of the URI's namespace (a bucket, a container, the file
 * system), given by its segments; `null` when that folder cannot hold anything (a local
 * path that does not exist or is a file). Opening one sends nothing.
 */
export type StoreAt = (segments: readonly string[]) => Promise<ObjectStore | null>;

/**
 * Which format's table has its root at `store`'s root, from marker keys only: each
 * registered format's `detect` in order (Lance's: one listing of `_versions/`), then
 * holdfast's dataset marker (one HEAD). One or two requests for a table, two for none.
 */
export async function tableFormatAt(
  store: ObjectStore,
  entries: readonly FormatEntry[],
): Promise<string | null> {
  const ctx = createContext(store);
  for (const entry of entries) {
    if (await entry.detect(ctx)) return entry.name;
  }
  return (await store.head(DATASET_KEY)) === null ? null : "holdfast";
}

/**
 * The rule "where is the table root, and is this URI inside one" (conformance/table-root/):
 *
 * 1. Every ancestor of the URI that is followed by a table layout folder name
 *    ({@link TABLE_LAYOUT_FOLDERS}) is asked, outermost first, whether it is a table root;
 *    the first that is makes the URI `inside` it (`t.lance/tree/dev`, `t.lance/data`,
 *    `t.lance/_indices/{uuid}`, `ds/_holdfast`). No other ancestor is asked: a folder
 *    inside a table is reached only through one of those names.
 * 2. Else the URI itself: a table root is `table`.
 * 3. Else its first {@link HELD_TABLE_PROBES} child folders are asked; the first table root
 *    among them makes the URI `holds` it (a parent folder of a table).
 *
 * Each ask is {@link tableFormatAt} (one or two requests); a URI whose path names no layout
 * folder and that is a table costs one or two requests in all.
 */
export async function locateTable(
  segments: readonly string[],
  storeAt: StoreAt,
  entries: readonly FormatEntry[],
): Promise<TableLocation> {
  const asked = new Set<number>();
  for (let i = 0; i < segments.length; i += 1) {
    if (!TABLE_LAYOUT_FOLDERS.has(segments[i]!) || asked.has(i)) continue;
    asked.add(i);
    const root = segments.slice(0, i);
    const store = await storeAt(root);
    const format = store === null ? null : await tableFormatAt(store, entries);
    if (format === null) continue;
    const folder = segments[i]!;
    let branch: string | null = null;
    if (folder === "tree" && format !== "holdfast") {
      const rest = segments.slice(i + 1);
      const end = rest.findIndex((s) => TABLE_LAYOUT_FOLDERS.has(s));
      const name = (end < 0 ? rest : rest.slice(0, end)).join("/");
      branch = name === "" ? null : name;
    }
    return { kind: "inside", root, format, folder, branch };
  }
  const here = await storeAt(segments);
  if (here === null) return { kind: "none" };
  const format = await tableFormatAt(here, entries);
  if (format !== null) return { kind: "table", format };
  let startAfter: string | undefined;
  for (let probe = 0; probe < HELD_TABLE_PROBES; probe += 1) {
    const page = await here.list("", { pageSize: 1, ...(startAfter ? { startAfter } : {}) });
    const first = page.objects[0];
    if (first === undefined) break;
    const slash = first.key.indexOf("/");
    if (slash < 0) {
      startAfter = first.key;
      continue;
    }
    const child = first.key.slice(0, slash);
    // Past every key of the child folder: `/` sorts below every other character of a key.
    startAfter = `${child}/\u{10ffff}`;
    const store = await storeAt([...segments, child]);
    const held = store === null ? null : await tableFormatAt(store, entries);
    if (held !== null) return { kind: "holds", root: [...segments, child], format: held };
  }
  return { kind: "none" };
}

/**
 * Refuses a URI that is inside a table or holds one: `invalid-input` INSIDE_TABLE naming
 * the table root (for a Lance branch folder: pass the table URI and the branch), or
 * HOLDS_TABLE naming the table below. `display` prints a namespace path (with its scheme).
 * Thrown before anything is read through the URI's store or written anywhere.
 */
export function refuseTableLocation(
  location: TableLocation,
  display: (segments: readonly string[]) => string,
  operation = "open",
): void {
  if (location.kind === "inside") {
    const root = display(location.root);
    const what =
      location.branch === null
        ? `its ${location.folder}/ folder`
        : `the folder of its branch ${location.branch} (tree/${location.branch}/)`;
    throw holdfastError(
      "invalid-input",
      operation,
      `this URI is inside the ${location.format === "lance" ? "Lance table" : "holdfast dataset"} at ${root} (${what}): a folder inside a table is never a table; nothing was read or written`,
      {
        code: INSIDE_TABLE,
        key: root,
        hint:
          location.branch === null
            ? `pass the table's URI: ${root}`
            : `pass the table's URI and the branch: ${root} --branch ${location.branch} (Python: branch="${location.branch}")`,
      },
    );
  }
  if (location.kind === "holds") {
    const root = display(location.root);
    throw holdfastError(
      "invalid-input",
      operation,
      `this URI is a folder that holds the ${location.format === "lance" ? "Lance table" : "holdfast dataset"} ${root}, not a table; nothing was read or written`,
      { code: HOLDS_TABLE, key: root, hint: `pass the table's URI: ${root}` },
    );
  }
}
