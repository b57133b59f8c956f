import { holdfastError, listAll, type ObjectStore } from "@holdfast/conditional-store";
import type { DataFile, FormatManifest, ProtocolContext, VersionEntry } from "@holdfast/dataset";
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
import { LANCE_MAIN_BRANCH } from "./refs.js";
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
 * The Lance format for a dataset whose naming is known (see {@link openLanceFormat}). Only
 * Lance's main branch (`_versions/` at the root, holdfast branch `main`) has versions
 * holdfast may retire; Lance branches (`tree/{name}/`) keep their fork point on main
 * through the reference census ({@link censusLanceReferences}) and are never touched.
 * A version needs its data files, deletion files, index folders and transaction file.
 */
export function lanceFormat(naming: LanceNaming): LanceFormat {
  const folderFiles = new WeakMap<ObjectStore, Map<string, Promise<DataFile[]>>>();
  return {
    name: LANCE_FORMAT,
    naming,
    async listBranches(ctx) {
      // One manifest is enough to say main has versions: no need to list them all.
      return (await firstManifest(ctx)) === null ? [] : [LANCE_MAIN_BRANCH];
    },
    async *listVersions(ctx, branch) {
      if (branch !== LANCE_MAIN_BRANCH) return;
      yield* listMainVersions(ctx, naming);
    },
    async readManifest(ctx, branch, version) {
      if (branch !== LANCE_MAIN_BRANCH) return null;
      const key = lanceManifestKey(naming, version);
      const got = await ctx.store.get(key);
      if (!got) return null;
      const file = readManifestFile(got.body, key);
      const needs = versionNeeds(file, key);
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
        ...needs.indexUuids.map((uuid) => `${LANCE_INDICES_PREFIX}${uuid}/`),
        ...needs.sidecarFolders,
      ];
      for (const lists of await Promise.all(folders.map((f) => listFolder(ctx, f, folderFiles)))) {
        files.push(...lists);
      }
      const manifest: FormatManifest = { files, parent: null, etag: got.etag };
      return manifest;
    },
    manifestKey(branch, version) {
      if (branch !== LANCE_MAIN_BRANCH) {
        throw holdfastError(
          "invalid-input",
          "manifestKey",
          `Lance branch ${branch}: holdfast retires versions of main only`,
        );
      }
      return lanceManifestKey(naming, version);
    },
    parseManifestKey(key) {
      const entry = classifyVersionsKey(key);
      if (!key.startsWith(LANCE_VERSIONS_PREFIX)) return null;
      if (entry.kind !== "manifest" || entry.naming !== naming || entry.version < 1) return null;
      return { branch: LANCE_MAIN_BRANCH, version: entry.version };
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
 * Main's versions in ascending order. Lance's names do not sort by version (V2 sorts newest
 * first, V1 is not zero-padded), so the listing is held as entries (about 100 bytes each)
 * and sorted. Detached versions are refused (their files could not be protected);
 * staging manifests and hints are skipped.
 */
async function* listMainVersions(
  ctx: ProtocolContext,
  naming: LanceNaming,
): AsyncGenerator<VersionEntry> {
  const entries: VersionEntry[] = [];
  for await (const meta of listAll(ctx.store, LANCE_VERSIONS_PREFIX)) {
    const entry = classifyVersionsKey(meta.key);
    if (entry.kind === "detached") {
      throw new UnsupportedLanceDatasetError(
        "detached-version",
        meta.key,
        `Lance detached version ${meta.key}: its files would not be protected by a cleanup`,
        "remove the detached version with Lance, or clean this dataset with Lance's own tools",
      );
    }
    if (entry.kind !== "manifest") continue;
    if (entry.naming !== naming) throw mixedNaming(meta.key);
    if (entry.version < 1) continue;
    entries.push({
      branch: LANCE_MAIN_BRANCH,
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
