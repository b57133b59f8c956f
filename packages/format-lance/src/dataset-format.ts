import { holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import type { FormatEntry, ResolvedFormat } from "@holdfast/refs-lifecycle";
import { LANCE_FORMAT, openLanceFormat } from "./format.js";
import { classifyVersionsKey, LANCE_VERSIONS_PREFIX } from "./naming.js";
import { LANCE_MAIN_BRANCH } from "./refs.js";

/** Code of the `unsupported` error a write of holdfast's own layout into a Lance table gets. */
export const FORMAT_READ_ONLY = "FORMAT_READ_ONLY";

/**
 * True when the store's root holds a Lance table, from one short listing of `_versions/`:
 * Lance names manifests `_versions/{digits}.manifest` (holdfast one folder deeper), so one
 * name decides. One page is enough: only `.tmp*` leftovers of failed Lance commits sort
 * before the manifests.
 */
async function isLanceTable(ctx: ProtocolContext): Promise<boolean> {
  const page = await ctx.store.list(LANCE_VERSIONS_PREFIX, { pageSize: 64 });
  return page.objects.some((meta) => classifyVersionsKey(meta.key).kind === "manifest");
}

/**
 * Refuses a write of holdfast's own layout (a commit, a data file upload) into a dataset
 * whose format holdfast only reads: `unsupported`, code FORMAT_READ_ONLY, before any
 * request. A Lance table is written by LanceDB; holdfast never writes Lance manifests.
 */
export function requireWritableFormat(resolved: ResolvedFormat, operation: string): void {
  if (resolved.name === "holdfast") return;
  throw holdfastError(
    "unsupported",
    operation,
    "this is a Lance table: its versions are written by LanceDB, and holdfast never writes Lance manifests; nothing was written",
    {
      code: FORMAT_READ_ONLY,
      hint: "commit with LanceDB (table.add, table.delete, ...); holdfast leases, tags and cleans the versions it writes",
    },
  );
}

/**
 * Lance tables as an application registers the format:
 * `new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry)` (the CLI and the
 * server each build theirs). Detection is one listing of `_versions/`; opening reads the
 * manifest naming; a Lance table's versions live on `main` and it has no holdfast identity.
 */
export const lanceFormatEntry: FormatEntry = {
  name: LANCE_FORMAT,
  detect: isLanceTable,
  resolve: async (ctx) => ({ name: LANCE_FORMAT, format: await openLanceFormat(ctx) }),
  async open(ctx) {
    return {
      resolved: { name: LANCE_FORMAT, format: await openLanceFormat(ctx) },
      defaultBranch: LANCE_MAIN_BRANCH,
      datasetId: null,
    };
  },
};
