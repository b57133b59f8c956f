import { deleteAllUnder, listAll } from "@holdfast/conditional-store";
import type { ProtocolContext, VersionRef } from "@holdfast/protocol";
import {
  listBranchesWithVersions,
  listVersions,
  type ManifestRecord,
  tryReadManifest,
  type VersionEntry,
} from "./dataset.js";
import { raiseRetiredFloor } from "./floor.js";
import { headHintKey } from "./heads.js";
import { latestVersion } from "./latest.js";
import { DATA_PREFIX, isDataKey, manifestKey, parseManifestKey, versionsPrefix } from "./layout.js";
import type { DataFile } from "./manifest.js";

/** Versions `from` to `to` of a branch, inclusive (`DatasetFormat.listVersions`). */
export interface VersionBounds {
  readonly from: number;
  readonly to: number;
}

/**
 * Where the holdfast layout's listing of a range starts: its keys sort by version, so
 * after the version before `from` (the range's end is the caller's to stop at).
 */
function versionsFrom(range: VersionBounds | undefined): { startAfterVersion?: number } {
  return range !== undefined && Number.isSafeInteger(range.from) && range.from > 1
    ? { startAfterVersion: range.from - 1 }
    : {};
}

/** The kinds of objects a cleanup reports deleting (objects and bytes each). */
export type ObjectKind = "manifests" | "data" | "deletion" | "index" | "transaction" | "other";

/** Every {@link ObjectKind}, in the order reports list them. */
export const OBJECT_KINDS: readonly ObjectKind[] = [
  "manifests",
  "data",
  "deletion",
  "index",
  "transaction",
  "other",
];

/** What cleanup needs to know of one version's manifest. */
export interface FormatManifest {
  readonly files: readonly DataFile[];
  readonly parent: VersionRef | null;
  /** ETag of the manifest object (retirement records it as the manifest's identity). */
  readonly etag: string;
}

/**
 * The dataset format as cleanup sees it, so a user can plug in another format: how to
 * enumerate branches and versions, read what a version references, and which keys are
 * data. Methods take the context, so a format object is stateless and shareable.
 * Implementations must stream `listVersions` and return `null` for an absent manifest.
 */
export interface DatasetFormat {
  readonly name: string;
  /**
   * Confirms that the store's root holds a dataset of this format, for a format object a
   * caller built without detection (docs/protocol.md §1.1: a handle is opened by detection,
   * or by naming a format that detection confirms). Cleanup calls it before its lock, a
   * lease acquire before its write; it throws what opening the dataset by detection would
   * (`not-found`, or `invalid-input` for a root inside a table). Cheap after the first call
   * on a store object. Optional: holdfast's own layout is confirmed by its dataset marker.
   */
  confirm?(ctx: ProtocolContext): Promise<void>;
  listBranches(ctx: ProtocolContext): Promise<string[]>;
  /**
   * The branch's versions in ascending order. With `range`, the versions from `range.from`
   * to `range.to` (inclusive) are what the caller wants: a format may list only those (one
   * whose names sort by version lists a key range, not the whole folder); one that ignores
   * `range` yields every version, so callers skip the versions outside it.
   */
  listVersions(
    ctx: ProtocolContext,
    branch: string,
    range?: VersionBounds | undefined,
  ): AsyncIterable<VersionEntry>;
  readManifest(
    ctx: ProtocolContext,
    branch: string,
    version: number,
  ): Promise<FormatManifest | null>;
  manifestKey(branch: string, version: number): string;
  parseManifestKey(key: string): { branch: string; version: number } | null;
  /** Prefix under which every data file lives. */
  readonly dataPrefix: string;
  /**
   * When set, the folders cleanup's orphan sweep lists instead of `dataPrefix` (a format
   * whose files live in several folders beside others no cleanup may list or touch, such
   * as Lance's `_mem_wal/`). Every key there is still filtered by {@link isDataKey}.
   */
  readonly dataPrefixes?: readonly string[] | undefined;
  /**
   * True for a key cleanup may delete as a data file. The orphan sweep passes its context:
   * a format may then decide by what it read through that context's store in the same run
   * (Lance: the branch folders its `listBranches` listed).
   */
  isDataKey(key: string, ctx?: ProtocolContext): boolean;
  /**
   * What a key of this format is, for the operator's accounting of what a cleanup deleted
   * (objects and bytes per kind). Without it, cleanup counts manifests as `manifests` and
   * every other file as `data`.
   */
  objectKind?(key: string): ObjectKind;
  /**
   * Called by cleanup before it deletes any manifest of `branch` numbered up to
   * `maxRetired`, and awaited: a format whose writers pick the next version number without
   * listing records here that these numbers are retired (the holdfast format raises the
   * head hint's retired floor, docs/protocol.md §2). A throw stops the deletion. Formats
   * whose writers always list (Lance) leave it out.
   */
  retireVersionNumbers?(ctx: ProtocolContext, branch: string, maxRetired: number): Promise<void>;
  /** The highest version of `branch`, or `null` when it has none. */
  latestVersion(ctx: ProtocolContext, branch: string): Promise<number | null>;
  /**
   * Which of `versions` still have a manifest on `branch` (retirement's finalize re-checks
   * that a committed record's manifests are gone before it removes the record, L3).
   */
  presentManifests(
    ctx: ProtocolContext,
    branch: string,
    versions: readonly number[],
  ): Promise<ReadonlySet<number>>;
  /**
   * The folder holding `branch`'s stored versions when anything is stored there, `null`
   * when nothing is (a new branch must not inherit versions it never made).
   */
  storedVersionsFolder(ctx: ProtocolContext, branch: string): Promise<string | null>;
  /**
   * Removes what this format stores of a branch incarnation's versions (its manifests and
   * their bookkeeping), for a branch deleted through holdfast. A format whose branches are
   * deleted by its own tools throws `unsupported`.
   */
  teardownVersions(ctx: ProtocolContext, branch: string): Promise<void>;
}

/**
 * holdfast's own layout: `_versions/{branch}/{version:020d}.json` manifests naming files under
 * `data/`. Not a default: every operation takes the format its caller bound (docs/protocol.md
 * §1.1); `holdfastFormat` of `@holdfast/refs-lifecycle` is this layout with its reference codec.
 */
export const holdfastLayout: DatasetFormat = {
  name: "holdfast",
  listBranches: (ctx) => listBranchesWithVersions(ctx),
  listVersions: (ctx, branch, range) => listVersions(ctx, branch, versionsFrom(range)),
  async readManifest(ctx, branch, version) {
    const record: ManifestRecord | null = await tryReadManifest(ctx, branch, version);
    if (!record) return null;
    return { files: record.manifest.files, parent: record.manifest.parent, etag: record.etag };
  },
  manifestKey,
  parseManifestKey,
  dataPrefix: DATA_PREFIX,
  isDataKey,
  retireVersionNumbers: (ctx, branch, maxRetired) => raiseRetiredFloor(ctx, branch, maxRetired),
  latestVersion: (ctx, branch) => latestVersion(ctx, branch),
  presentManifests: (ctx, branch, versions) => presentHoldfastManifests(ctx, branch, versions),
  async storedVersionsFolder(ctx, branch) {
    // One single-key LIST: any object in the branch's folder counts.
    const prefix = versionsPrefix(branch);
    const page = await ctx.store.list(prefix, { pageSize: 1 });
    return page.objects.length > 0 ? prefix : null;
  },
  async teardownVersions(ctx, branch) {
    // The head hint goes first: its retired floor speaks for this incarnation only, and the
    // manifests deleted below never raise it. Without a hint a commit lists (docs/protocol.md
    // §2): it sees what an interrupted teardown left and never reuses a number of it.
    await ctx.store.delete(headHintKey(branch));
    await deleteAllUnder(ctx.store, versionsPrefix(branch));
  },
};

// --- utils ---

/**
 * Present-manifest check on holdfast's layout: one LIST page per 1,000 versions of the
 * range, from the lowest asked, instead of one HEAD per version.
 */
async function presentHoldfastManifests(
  ctx: ProtocolContext,
  branch: string,
  versions: readonly number[],
): Promise<ReadonlySet<number>> {
  const present = new Set<number>();
  if (versions.length === 0) return present;
  const wanted = new Set(versions);
  const min = Math.min(...versions);
  const max = Math.max(...versions);
  const startAfter = min > 1 ? manifestKey(branch, min - 1) : undefined;
  for await (const meta of listAll(ctx.store, versionsPrefix(branch), { startAfter })) {
    const parsed = parseManifestKey(meta.key);
    if (parsed?.branch !== branch) continue;
    if (parsed.version > max) break;
    if (wanted.has(parsed.version)) present.add(parsed.version);
  }
  return present;
}
