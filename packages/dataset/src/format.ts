import type { ProtocolContext } from "./context.js";
import {
  listBranchesWithVersions,
  listVersions,
  type ManifestRecord,
  tryReadManifest,
  type VersionEntry,
} from "./dataset.js";
import { raiseRetiredFloor } from "./floor.js";
import { DATA_PREFIX, isDataKey, manifestKey, parseManifestKey } from "./layout.js";
import type { DataFile, VersionRef } from "./manifest.js";

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
  listBranches(ctx: ProtocolContext): Promise<string[]>;
  listVersions(ctx: ProtocolContext, branch: string): AsyncIterable<VersionEntry>;
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
   * Called by cleanup before it deletes any manifest of `branch` numbered up to
   * `maxRetired`, and awaited: a format whose writers pick the next version number without
   * listing records here that these numbers are retired (the holdfast format raises the
   * head hint's retired floor, docs/protocol.md §2). A throw stops the deletion. Formats
   * whose writers always list (Lance) leave it out.
   */
  retireVersionNumbers?(ctx: ProtocolContext, branch: string, maxRetired: number): Promise<void>;
}

/** The holdfast format: `_versions/{branch}/{version:020d}.json` manifests naming files under `data/`. */
export const defaultFormat: DatasetFormat = {
  name: "holdfast",
  listBranches: (ctx) => listBranchesWithVersions(ctx),
  listVersions: (ctx, branch) => listVersions(ctx, branch),
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
};
