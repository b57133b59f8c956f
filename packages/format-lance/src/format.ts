import { holdfastError, listAll, type ObjectStore } from "@holdfast/conditional-store";
import {
  type DataFile,
  type FormatManifest,
  type ProtocolContext,
  type VersionEntry,
  validateName,
} from "@holdfast/dataset";
import type { ReferenceFormat } from "@holdfast/refs-lifecycle";
import { UnsupportedLanceDatasetError } from "./errors.js";
import { readManifestFile } from "./manifest-file.js";
import {
  classifyVersionsKey,
  LANCE_VERSIONS_PREFIX,
  type LanceNaming,
  lanceManifestKey,
} from "./naming.js";
import {
  isLanceFileKey,
  LANCE_INDICES_PREFIX,
  LANCE_SWEPT_PREFIXES,
  versionNeeds,
} from "./needs.js";
import { LANCE_BRANCHES_PREFIX, LANCE_MAIN_BRANCH, LANCE_TREE_PREFIX } from "./refs.js";
import { lanceReferenceCodec } from "./tags.js";

/** Name of the format, as `DatasetFormat.name` and in the CLI. */
export const LANCE_FORMAT = "lance";

/**
 * A `DatasetFormat` bound to one Lance dataset's manifest naming. Its `references`
 * make holdfast's tags Lance tags and its reference census Lance's (docs/lance.md).
 */
export interface LanceFormat extends ReferenceFormat {
  readonly naming: LanceNaming;
}

/**
 * The Lance format for a dataset whose naming is known (see {@link openLanceFormat}). Its
 * branches are Lance's main (`_versions/` at the root, holdfast branch `main`) and every
 * Lance branch whose name is one holdfast names branches with (no `/`): its versions live
 * in `tree/{name}/_versions/` with the branch's own naming (LanceDB 0.31.0 names a branch's
 * manifests V2 even on a V1 table), its own files under `tree/{name}/`, and everything it
 * names through `base_paths` (its parent's files) is never named as its own, so a cleanup
 * of the branch never deletes a parent's file. A branch whose name holds `/` (`dev/sub`)
 * is not retired; its fork point stays kept through the census like every branch's.
 * A version needs its data files, deletion files, index folders, sidecars and transaction file.
 */
export function lanceFormat(naming: LanceNaming): LanceFormat {
  const folderFiles = new WeakMap<ObjectStore, Map<string, Promise<DataFile[]>>>();
  // The naming of each Lance branch, learned when its versions are listed or read.
  const branchNaming = new Map<string, LanceNaming>([[LANCE_MAIN_BRANCH, naming]]);
  return {
    name: LANCE_FORMAT,
    naming,
    async listBranches(ctx) {
      // One manifest is enough to say main has versions: no need to list them all.
      const out = (await firstManifest(ctx)) === null ? [] : [LANCE_MAIN_BRANCH];
      for (const name of await listRetirableBranches(ctx)) out.push(name);
      return out;
    },
    async *listVersions(ctx, branch) {
      if (branch === LANCE_MAIN_BRANCH) {
        yield* listBranchVersions(ctx, branch, branchNaming);
      } else if (isRetirableBranch(branch)) {
        yield* listBranchVersions(ctx, branch, branchNaming);
      }
    },
    async readManifest(ctx, branch, version) {
      if (branch !== LANCE_MAIN_BRANCH && !isRetirableBranch(branch)) return null;
      const root = branchRoot(branch);
      const known = branchNaming.get(branch);
      // A branch's naming is its own: try the one learned, else V2 then V1 (as Lance does).
      const candidates = known ? [known] : (["v2", "v1"] as const);
      for (const scheme of candidates) {
        const key = `${root}${lanceManifestKey(scheme, version)}`;
        const got = await ctx.store.get(key);
        if (!got) continue;
        branchNaming.set(branch, scheme);
        const file = readManifestFile(got.body, key);
        const needs = versionNeeds(file, key, root);
        if (needs.version !== version) {
          throw holdfastError(
            "invalid-input",
            "readManifest",
            `Lance manifest ${key} names version ${needs.version}`,
            { key, code: "LANCE_MALFORMED_MANIFEST" },
          );
        }
        const files: DataFile[] = needs.objects.map((o) => ({ key: o.key, size: o.size }));
        const folders = [
          ...needs.indexUuids.map((uuid) => `${root}${LANCE_INDICES_PREFIX}${uuid}/`),
          ...needs.sidecarFolders,
        ];
        for (const lists of await Promise.all(
          folders.map((f) => listFolder(ctx, f, folderFiles)),
        )) {
          files.push(...lists);
        }
        const manifest: FormatManifest = { files, parent: null, etag: got.etag };
        return manifest;
      }
      return null;
    },
    manifestKey(branch, version) {
      const scheme = branchNaming.get(branch);
      if (!scheme || (branch !== LANCE_MAIN_BRANCH && !isRetirableBranch(branch))) {
        throw holdfastError(
          "invalid-input",
          "manifestKey",
          `Lance branch ${branch}: its manifest naming is not known (list or read its versions first)`,
        );
      }
      return `${branchRoot(branch)}${lanceManifestKey(scheme, version)}`;
    },
    parseManifestKey(key) {
      let branch: string = LANCE_MAIN_BRANCH;
      let rest = key;
      if (key.startsWith(LANCE_TREE_PREFIX)) {
        const at = key.indexOf(`/${LANCE_VERSIONS_PREFIX}`, LANCE_TREE_PREFIX.length);
        if (at < 0) return null;
        branch = key.slice(LANCE_TREE_PREFIX.length, at);
        if (!isRetirableBranch(branch)) return null;
        rest = key.slice(at + 1);
      }
      if (!rest.startsWith(LANCE_VERSIONS_PREFIX)) return null;
      const entry = classifyVersionsKey(rest);
      if (entry.kind !== "manifest" || entry.version < 1) return null;
      const scheme = branchNaming.get(branch);
      if (scheme !== undefined && entry.naming !== scheme) return null;
      return { branch, version: entry.version };
    },
    // Lance's files live under four folders: the orphan sweep lists only those (never
    // `_mem_wal/`, `_blobs/`, `_fri/`, `tree/`, `_refs/`) and filters with isDataKey.
    dataPrefix: "",
    dataPrefixes: LANCE_SWEPT_PREFIXES,
    isDataKey: isLanceFileKey,
    references: lanceReferenceCodec,
  };
}

/**
 * Detects the manifest naming of the Lance dataset at the store's root from the first
 * manifest name in `_versions/` and returns its format. `not-found` when there is no
 * manifest. Its listings refuse (UnsupportedLanceDatasetError `mixed-naming`) a
 * `_versions/` where both schemes appear.
 */
export async function openLanceFormat(ctx: ProtocolContext): Promise<LanceFormat> {
  // The first manifest name decides; every full listing (listVersions) checks that no
  // name of the other scheme appears, so a mix is refused before anything is decided.
  const naming = await firstManifest(ctx);
  if (naming === null) {
    throw holdfastError("not-found", "open", `no Lance dataset at ${ctx.store.location}`, {
      key: LANCE_VERSIONS_PREFIX,
      code: "DATASET_NOT_FOUND",
      hint: "point at the table folder (e.g. .../events.lance), which holds _versions/",
    });
  }
  return lanceFormat(naming);
}

// --- utils ---

/** The naming of the first manifest listed under `_versions/`, or `null` when there is none. */
async function firstManifest(ctx: ProtocolContext): Promise<LanceNaming | null> {
  let pageToken: string | undefined;
  do {
    const page = await ctx.store.list(LANCE_VERSIONS_PREFIX, { pageSize: 64, pageToken });
    for (const meta of page.objects) {
      const entry = classifyVersionsKey(meta.key);
      if (entry.kind === "manifest") return entry.naming;
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return null;
}

/**
 * A branch's versions in ascending order (main's under `_versions/`, a Lance branch's under
 * `tree/{name}/_versions/`). Lance's names do not sort by version (V2 sorts newest first, V1
 * is not zero-padded), so the listing is held as entries (about 100 bytes each) and sorted.
 * The branch's naming is the first name's; a mix is refused. Detached versions are refused
 * (their files could not be protected); staging manifests and hints are skipped.
 */
async function* listBranchVersions(
  ctx: ProtocolContext,
  branch: string,
  namings: Map<string, LanceNaming>,
): AsyncGenerator<VersionEntry> {
  const root = branchRoot(branch);
  const prefix = `${root}${LANCE_VERSIONS_PREFIX}`;
  const entries: VersionEntry[] = [];
  for await (const meta of listAll(ctx.store, prefix)) {
    const name = meta.key.slice(root.length);
    const entry = classifyVersionsKey(name);
    if (entry.kind === "detached") {
      throw new UnsupportedLanceDatasetError(
        "detached-version",
        meta.key,
        `Lance detached version ${meta.key}: its files would not be protected by a cleanup`,
        "remove the detached version with Lance, or clean this dataset with Lance's own tools",
      );
    }
    if (entry.kind !== "manifest") continue;
    const scheme = namings.get(branch);
    if (scheme === undefined) namings.set(branch, entry.naming);
    else if (entry.naming !== scheme) throw mixedNaming(meta.key);
    if (entry.version < 1) continue;
    entries.push({
      branch,
      version: entry.version,
      key: meta.key,
      etag: meta.etag,
      lastModified: meta.lastModified,
      size: meta.size,
    });
  }
  entries.sort((a, b) => a.version - b.version);
  yield* entries;
}

/** The Lance branches holdfast retires versions of: named in `_refs/branches/`, without `/`. */
async function listRetirableBranches(ctx: ProtocolContext): Promise<string[]> {
  const names: string[] = [];
  for await (const meta of listAll(ctx.store, LANCE_BRANCHES_PREFIX)) {
    const file = meta.key.slice(LANCE_BRANCHES_PREFIX.length);
    if (!file.endsWith(".json") || file.includes("/")) continue;
    let name: string;
    try {
      name = decodeURIComponent(file.slice(0, -".json".length));
    } catch {
      continue; // the census refuses what it cannot read
    }
    if (isRetirableBranch(name)) names.push(name);
  }
  return names.sort();
}

/** A Lance branch name that is also a holdfast branch name (one path segment, not main). */
function isRetirableBranch(name: string): boolean {
  if (name === LANCE_MAIN_BRANCH) return false;
  try {
    validateName(name, "branch");
    return true;
  } catch {
    return false;
  }
}

/** A branch's root under the table: `""` for main, `tree/{name}/` for a Lance branch. */
function branchRoot(branch: string): string {
  return branch === LANCE_MAIN_BRANCH ? "" : `${LANCE_TREE_PREFIX}${branch}/`;
}

/**
 * The files of an index folder `_indices/{uuid}/` or a sidecar folder `data/{stem}/`, listed
 * once per store: Lance writes both completely before any manifest names the index or the
 * data file, and never adds to them afterwards.
 */
function listFolder(
  ctx: ProtocolContext,
  folder: string,
  cache: WeakMap<ObjectStore, Map<string, Promise<DataFile[]>>>,
): Promise<DataFile[]> {
  let perStore = cache.get(ctx.store);
  if (!perStore) {
    perStore = new Map();
    cache.set(ctx.store, perStore);
  }
  let files = perStore.get(folder);
  if (!files) {
    files = (async () => {
      const out: DataFile[] = [];
      for await (const meta of listAll(ctx.store, folder)) {
        out.push({ key: meta.key, size: meta.size });
      }
      return out;
    })();
    // A failed listing is not remembered: the next reader lists again.
    files.catch(() => perStore.delete(folder));
    perStore.set(folder, files);
  }
  return files;
}

function mixedNaming(key: string): UnsupportedLanceDatasetError {
  return new UnsupportedLanceDatasetError(
    "mixed-naming",
    key,
    `Lance _versions/ mixes the V1 and V2 manifest naming schemes (met ${key})`,
    "finish the migration with Lance's migrate_manifest_paths_v2 first",
  );
}
