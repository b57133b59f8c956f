import {
  compareKeys,
  holdfastError,
  listAll,
  listPages,
  type ObjectMeta,
  type ObjectStore,
} from "@holdfast/conditional-store";
import type { DataFile, FormatManifest, ObjectKind, VersionBounds } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { INSIDE_TABLE, type ReferenceFormat } from "@holdfast/refs-lifecycle";
import { checkBranchLayout, holdfastBranchName, lanceBranchName } from "./branch-names.js";
import { UnsupportedLanceDatasetError } from "./errors.js";
import { readLanceVersionHint } from "./hint.js";
import { ListedVersions } from "./listed-versions.js";
import { readManifestFile } from "./manifest-file.js";
import {
  classifyVersionsKey,
  LANCE_VERSIONS_PREFIX,
  type LanceNaming,
  lanceManifestKey,
} from "./naming.js";
import {
  isLanceFileKey,
  LANCE_DATA_PREFIX,
  LANCE_DELETIONS_PREFIX,
  LANCE_INDICES_PREFIX,
  LANCE_SWEPT_PREFIXES,
  LANCE_TRANSACTIONS_PREFIX,
  versionNeeds,
} from "./needs.js";
import {
  LANCE_BRANCHES_PREFIX,
  LANCE_MAIN_BRANCH,
  LANCE_TREE_PREFIX,
  listLanceReferences,
} from "./refs.js";
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
 * Lance branch with a holdfast name (`dev`; `dev/sub` is `dev..sub`, see branch-names.ts):
 * its versions live in `tree/{name}/_versions/` with the branch's own naming (LanceDB
 * 0.31.0 names a branch's manifests V2 even on a V1 table), its own files under
 * `tree/{name}/`, and everything it names through `base_paths` (its parent's files) is
 * never named as its own, so a cleanup of the branch never deletes a parent's file. A
 * Lance branch without a holdfast name is not retired; its fork point stays kept through
 * the census like every branch's. A version needs its data files, deletion files, index
 * folders, sidecars and transaction file. The orphan sweep covers main's folders and the
 * same folders under the root of every branch the last `listBranches` of that store
 * listed (docs/lance.md, "What holdfast reads").
 */
export function lanceFormat(
  naming: LanceNaming,
  options: { confirmedOn?: ObjectStore | undefined } = {},
): LanceFormat {
  const folderFiles = new WeakMap<ObjectStore, Map<string, Promise<DataFile[]>>>();
  // The naming of each Lance branch, learned when its versions are listed or read.
  const branchNaming = new Map<string, LanceNaming>([[LANCE_MAIN_BRANCH, naming]]);
  // Per store, the Lance branches its last listBranches read: what the sweep may enter.
  const branchRoots = new WeakMap<ObjectStore, BranchRoots>();
  // Stores this format object was confirmed on (see `confirm`).
  const confirmed = new WeakSet<ObjectStore>();
  if (options.confirmedOn) confirmed.add(options.confirmedOn);
  const confirm = async (ctx: ProtocolContext) => {
    if (confirmed.has(ctx.store)) return;
    const first = await firstManifestEntry(ctx);
    confirmNaming(ctx, naming, first?.naming ?? null);
    await requireTableRoot(ctx, first!.key);
    confirmed.add(ctx.store);
  };
  return {
    name: LANCE_FORMAT,
    naming,
    // A format named without detection (`lanceFormat("v2")`) is confirmed before a
    // cleanup takes its lock or a lease is written: a store holding no Lance table, one
    // named otherwise, or a branch's own folder is refused as openLanceFormat refuses it
    // (docs/lance.md, "Opening a table").
    confirm,
    async listBranches(ctx) {
      // One manifest is enough to say main has versions; it also says the table is there
      // in this naming (no request beyond the listing this always made).
      if (!confirmed.has(ctx.store)) confirmNaming(ctx, naming, await firstManifest(ctx));
      const out = [LANCE_MAIN_BRANCH];
      const roots = await listLanceBranches(ctx);
      branchRoots.set(ctx.store, roots);
      for (const name of roots.retired.values()) out.push(name);
      // What the reference census refuses is refused here too, so a cleanup (which lists
      // the branches before its first retirement record) stops before writing any: an
      // unreadable or foreign `_refs/` object, a branch folder without its JSON, an
      // unreadable version hint (docs/protocol.md §6.1).
      await listLanceReferences(ctx);
      await Promise.all(out.map((branch) => readLanceVersionHint(ctx, branch)));
      return out;
    },
    async *listVersions(ctx, branch, range) {
      if (branch === LANCE_MAIN_BRANCH || isRetirableBranch(branch)) {
        yield* await listBranchVersions(ctx, branch, branchNaming, range);
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
        checkManifestBranch(file.manifest.branch, branch, key);
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
        // `tree/{lance name}/_versions/{file}`: the last `/_versions/`, as names hold `/`.
        const at = key.lastIndexOf(`/${LANCE_VERSIONS_PREFIX}`);
        if (at < LANCE_TREE_PREFIX.length) return null;
        const name = holdfastBranchName(key.slice(LANCE_TREE_PREFIX.length, at));
        if (name === null) return null;
        branch = name;
        rest = key.slice(at + 1);
      }
      if (!rest.startsWith(LANCE_VERSIONS_PREFIX)) return null;
      const entry = classifyVersionsKey(rest);
      if (entry.kind !== "manifest" || entry.version < 1) return null;
      const scheme = branchNaming.get(branch);
      if (scheme !== undefined && entry.naming !== scheme) return null;
      return { branch, version: entry.version };
    },
    // Lance's files live under four folders of each root: the orphan sweep lists only
    // those and `tree/` (never `_mem_wal/`, `_blobs/`, `_fri/`, `_refs/`) and filters with
    // isDataKey.
    dataPrefix: "",
    dataPrefixes: [...LANCE_SWEPT_PREFIXES, LANCE_TREE_PREFIX],
    isDataKey(key, ctx) {
      if (!key.startsWith(LANCE_TREE_PREFIX)) return isLanceFileKey(key);
      const roots = ctx ? branchRoots.get(ctx.store) : undefined;
      return roots !== undefined && isBranchFileKey(key, roots);
    },
    objectKind: lanceObjectKind,
    references: lanceReferenceCodec,
    async latestVersion(ctx, branch) {
      // A branch holdfast does not retire is read from its own tree/{branch}/_versions/
      // without the listing's refusals.
      if (branch !== LANCE_MAIN_BRANCH && !isRetirableBranch(branch)) {
        return latestLanceBranchVersion(ctx, branch);
      }
      return (await listBranchVersions(ctx, branch, branchNaming)).at(-1)?.version ?? null;
    },
    async presentManifests(ctx, branch, versions) {
      const wanted = new Set(versions);
      const present = new Set<number>();
      if (wanted.size === 0 || !(branch === LANCE_MAIN_BRANCH || isRetirableBranch(branch))) {
        return present;
      }
      let from = Number.POSITIVE_INFINITY;
      let to = Number.NEGATIVE_INFINITY;
      for (const v of wanted) {
        from = Math.min(from, v);
        to = Math.max(to, v);
      }
      const range = { from, to };
      for (const entry of await listBranchVersions(ctx, branch, branchNaming, range)) {
        if (wanted.has(entry.version)) present.add(entry.version);
      }
      return present;
    },
    async storedVersionsFolder(ctx, branch) {
      if (branch === LANCE_MAIN_BRANCH) {
        return (await firstManifest(ctx)) === null ? null : LANCE_VERSIONS_PREFIX;
      }
      const folder = `${LANCE_TREE_PREFIX}${lanceBranchName(branch) ?? branch}/${LANCE_VERSIONS_PREFIX}`;
      return (await latestLanceBranchVersion(ctx, branch)) === null ? null : folder;
    },
    teardownVersions(_ctx, branch) {
      return Promise.reject(
        holdfastError(
          "unsupported",
          "deleteBranch",
          `Lance branch ${branch}: its versions are deleted by Lance's own tools`,
          { code: "REFS_UNSUPPORTED" },
        ),
      );
    },
  };
}

/** The latest version in a Lance branch's own `tree/{branch}/_versions/`, or `null`. */
export async function latestLanceBranchVersion(
  ctx: ProtocolContext,
  branch: string,
): Promise<number | null> {
  const prefix = `${LANCE_TREE_PREFIX}${lanceBranchName(branch) ?? branch}/${LANCE_VERSIONS_PREFIX}`;
  let latest: number | null = null;
  for await (const meta of listAll(ctx.store, prefix)) {
    const entry = classifyVersionsKey(meta.key.slice(prefix.length));
    if (entry.kind === "manifest" && (latest === null || entry.version > latest)) {
      latest = entry.version;
    }
  }
  return latest;
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
  const first = await firstManifestEntry(ctx);
  if (first === null) throw noLanceTable(ctx);
  await requireTableRoot(ctx, first.key);
  // Detected here: the format need not confirm this store again.
  return lanceFormat(first.naming, { confirmedOn: ctx.store });
}

/** Code of the `invalid-input` error for a Lance format whose naming is not the table's. */
export const LANCE_NAMING_MISMATCH = "LANCE_NAMING_MISMATCH";

/**
 * Confirms a format named without detection against what the store holds: no Lance
 * manifest is `not-found` DATASET_NOT_FOUND (as {@link openLanceFormat} answers), another
 * naming than the format's is `invalid-input` LANCE_NAMING_MISMATCH.
 */
function confirmNaming(ctx: ProtocolContext, naming: LanceNaming, found: LanceNaming | null): void {
  if (found === null) throw noLanceTable(ctx);
  if (found !== naming) {
    throw holdfastError(
      "invalid-input",
      "open",
      `the Lance format was given ${naming.toUpperCase()} manifest naming, but the table at ${ctx.store.location} names its manifests ${found.toUpperCase()}; nothing was decided`,
      {
        key: LANCE_VERSIONS_PREFIX,
        code: LANCE_NAMING_MISMATCH,
        hint: "open the table with openLanceFormat (or FormatRegistry.open), which detects the naming",
      },
    );
  }
}

function noLanceTable(ctx: ProtocolContext): Error {
  return holdfastError("not-found", "open", `no Lance dataset at ${ctx.store.location}`, {
    key: LANCE_VERSIONS_PREFIX,
    code: "DATASET_NOT_FOUND",
    hint: "point at the table folder (e.g. .../events.lance), which holds _versions/",
  });
}

/**
 * A manifest read for a branch must be that branch's: Lance records a branch's name in its
 * manifests (`Manifest.branch`, unset on main). A store rooted at a branch's own folder
 * (`t.lance/tree/dev/`) looks like a table whose main is that branch; reading it so would
 * clean or lease the branch as a standalone table, blind to its tags, child branches and
 * leases, which live at the table root. `invalid-input` INSIDE_TABLE before anything is
 * decided.
 */
function checkManifestBranch(recorded: string | undefined, branch: string, key: string): void {
  const expected = branch === LANCE_MAIN_BRANCH ? undefined : (lanceBranchName(branch) ?? branch);
  const found = recorded === undefined || recorded === "" ? undefined : recorded;
  if (found === expected) return;
  if (expected === undefined) {
    throw holdfastError(
      "invalid-input",
      "readManifest",
      `Lance manifest ${key} belongs to branch ${found}: this store is rooted at that branch's own folder (tree/${found}/) inside a table, not at a table; nothing was decided`,
      {
        key,
        code: INSIDE_TABLE,
        hint: `pass the table's URI (the folder above tree/) and the branch ${found}`,
      },
    );
  }
  throw holdfastError(
    "invalid-input",
    "readManifest",
    `Lance manifest ${key} of branch ${branch} records branch ${found ?? "main"}`,
    { key, code: "LANCE_MALFORMED_MANIFEST" },
  );
}

// --- utils ---

/**
 * Page size of {@link firstManifest}. Only `.tmp*` leftovers of failed Lance commits sort
 * before the manifests, so the first name almost always decides; a small page keeps the
 * three calls of a cleanup (format detection, the plan's and the last look's branch
 * listing) from reading metadata of names they never look at (a local store stats every
 * entry of a page). More leftovers than that only cost another page.
 */
const FIRST_MANIFEST_PAGE = 8;

/** The naming of the first manifest listed under `_versions/`, or `null` when there is none. */
async function firstManifest(ctx: ProtocolContext): Promise<LanceNaming | null> {
  return (await firstManifestEntry(ctx))?.naming ?? null;
}

/** The first manifest listed under `_versions/` (its key and naming), or `null`. */
async function firstManifestEntry(
  ctx: ProtocolContext,
): Promise<{ key: string; naming: LanceNaming } | null> {
  let pageToken: string | undefined;
  do {
    const page = await ctx.store.list(LANCE_VERSIONS_PREFIX, {
      pageSize: FIRST_MANIFEST_PAGE,
      pageToken,
    });
    for (const meta of page.objects) {
      const entry = classifyVersionsKey(meta.key);
      if (entry.kind === "manifest") return { key: meta.key, naming: entry.naming };
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return null;
}

/** Stores whose root showed a main manifest (no `Manifest.branch`): not asked again. */
const tableRoots = new WeakSet<ObjectStore>();

/**
 * Refuses a store rooted at a Lance branch's own folder (`t.lance/tree/dev/`), which holds
 * a `_versions/` like a table's: its manifests record the branch (`Manifest.branch`).
 * One GET of the manifest found, once per store object (INSIDE_TABLE, before anything is
 * decided or written).
 */
async function requireTableRoot(ctx: ProtocolContext, key: string): Promise<void> {
  if (tableRoots.has(ctx.store)) return;
  const got = await ctx.store.get(key);
  // Gone meanwhile (a cleanup retired it): the listings and reads that follow decide.
  if (got === null) return;
  let recorded: string | undefined;
  try {
    recorded = readManifestFile(got.body, key).manifest.branch;
  } catch {
    // A manifest that does not decode is refused by the read that needs it (every
    // manifest a cleanup or a lease reads is checked, its branch included): opening
    // reads only this one for its branch.
    return;
  }
  checkManifestBranch(recorded, LANCE_MAIN_BRANCH, key);
  tableRoots.add(ctx.store);
}

/**
 * A branch's versions in ascending order (main's under `_versions/`, a Lance branch's under
 * `tree/{name}/_versions/`). Lance's names do not sort by version (V2 sorts newest first, V1
 * is not zero-padded), so the listing is held as entries (about 100 bytes each) and sorted.
 * The branch's naming is the first name's; a mix is refused. Detached versions are refused
 * (their files could not be protected); staging manifests and hints are skipped.
 */
async function listBranchVersions(
  ctx: ProtocolContext,
  branch: string,
  namings: Map<string, LanceNaming>,
  range?: VersionBounds,
): Promise<ListedVersions> {
  const root = branchRoot(branch);
  const prefix = `${root}${LANCE_VERSIONS_PREFIX}`;
  const listed: { versions?: ListedVersions } = {};
  const keys = range === undefined ? null : v2KeyRange(root, range, namings.get(branch));
  // A page at a time, each in one synchronous pass (listPages). V2 names sort newest first,
  // so a range is one run of keys: from the newest version's key to the oldest's, nothing
  // listed past it. Otherwise the whole folder is listed.
  for await (const page of listPages(ctx.store, prefix, { startAfter: keys?.startAfter })) {
    addVersionEntries(listed, page, branch, root, namings);
    const last = page.at(-1);
    if (keys !== null && last !== undefined && compareKeys(last.key, keys.last) >= 0) break;
  }
  return (listed.versions ?? new ListedVersions(branch, root, "v2")).arrange(range);
}

/**
 * The keys of a branch's versions `range.from` to `range.to` under V2 naming: they follow
 * `startAfter` (the newest one's name without `.manifest`, which sorts just before it) and
 * end at `last` (the oldest one's). `null` when the branch's naming is not known to be V2
 * (V1 names do not sort by version; an unknown naming is listed whole) or the range is not
 * one of valid versions.
 */
function v2KeyRange(
  root: string,
  range: VersionBounds,
  naming: LanceNaming | undefined,
): { startAfter: string; last: string } | null {
  const { from, to } = range;
  if (naming !== "v2" || !Number.isSafeInteger(from) || !Number.isSafeInteger(to)) return null;
  if (from < 0 || to < from) return null;
  const newest = `${root}${lanceManifestKey("v2", to)}`;
  return {
    startAfter: newest.slice(0, -".manifest".length),
    last: `${root}${lanceManifestKey("v2", from)}`,
  };
}

/** The manifests of one page of a branch's `_versions/` listing, added to `listed`. */
function addVersionEntries(
  listed: { versions?: ListedVersions },
  page: readonly ObjectMeta[],
  branch: string,
  root: string,
  namings: Map<string, LanceNaming>,
): void {
  for (const meta of page) {
    const entry = classifyVersionsKey(meta.key.slice(root.length));
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
    listed.versions ??= new ListedVersions(branch, root, entry.naming);
    listed.versions.add(entry.version, meta.etag, meta.lastModified, meta.size);
  }
}

/** The Lance branches of a table, as one `listBranches` read them from `_refs/branches/`. */
interface BranchRoots {
  /** Every Lance branch name, longest first (a key belongs to the longest root it is under). */
  readonly all: readonly string[];
  /** The branches holdfast retires: Lance name to holdfast name. */
  readonly retired: ReadonlyMap<string, string>;
}

/**
 * Every Lance branch named in `_refs/branches/` (`a%2Fb.json` is `a/b`), and those with a
 * holdfast name, which holdfast retires. A branch whose root lies inside another root's
 * folders is refused (`branch-layout`) before anything is decided.
 */
async function listLanceBranches(ctx: ProtocolContext): Promise<BranchRoots> {
  const all: string[] = [];
  const retired = new Map<string, string>();
  for await (const meta of listAll(ctx.store, LANCE_BRANCHES_PREFIX)) {
    const file = meta.key.slice(LANCE_BRANCHES_PREFIX.length);
    if (!file.endsWith(".json") || file.includes("/")) continue;
    let lance: string;
    try {
      lance = decodeURIComponent(file.slice(0, -".json".length));
    } catch {
      continue; // the census refuses what it cannot read
    }
    checkBranchLayout(lance, meta.key);
    all.push(lance);
    const name = holdfastBranchName(lance);
    if (name !== null) retired.set(lance, name);
  }
  all.sort((a, b) => b.length - a.length);
  return { all, retired: new Map([...retired].sort((a, b) => (a[1] < b[1] ? -1 : 1))) };
}

/**
 * A key under `tree/` the sweep may delete: a Lance file (isLanceFileKey) relative to the
 * root of the branch it belongs to (the longest branch root it is under), when holdfast
 * retires that branch. Anything under the root of a branch it does not retire, or under no
 * branch's root (a folder without `_refs/branches/` JSON), is left alone.
 */
function isBranchFileKey(key: string, roots: BranchRoots): boolean {
  const owner = roots.all.find((lance) => key.startsWith(`${LANCE_TREE_PREFIX}${lance}/`));
  if (owner === undefined || !roots.retired.has(owner)) return false;
  return isLanceFileKey(key.slice(`${LANCE_TREE_PREFIX}${owner}/`.length));
}

/** A holdfast name of a Lance branch holdfast retires (not main). */
function isRetirableBranch(name: string): boolean {
  return name !== LANCE_MAIN_BRANCH && lanceBranchName(name) !== null;
}

/** A branch's root under the table: `""` for main, `tree/{lance name}/` for a Lance branch. */
function branchRoot(branch: string): string {
  if (branch === LANCE_MAIN_BRANCH) return "";
  const lance = lanceBranchName(branch);
  if (lance === null) {
    throw holdfastError("invalid-input", "branchRoot", `no Lance branch is named ${branch}`, {
      code: "INVALID_NAME",
    });
  }
  return `${LANCE_TREE_PREFIX}${lance}/`;
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

/**
 * What a Lance key is (the table's root or a branch's `tree/<branch>/` root alike):
 * `_versions/` manifests, `data/` data files, `_deletions/` deletion files, `_indices/`
 * index files, `_transactions/` transaction files; anything else `other`.
 */
export function lanceObjectKind(key: string): ObjectKind {
  const folders: [string, ObjectKind][] = [
    [LANCE_VERSIONS_PREFIX, "manifests"],
    [LANCE_DATA_PREFIX, "data"],
    [LANCE_DELETIONS_PREFIX, "deletion"],
    [LANCE_INDICES_PREFIX, "index"],
    [LANCE_TRANSACTIONS_PREFIX, "transaction"],
  ];
  for (const [folder, kind] of folders) {
    if (
      key.startsWith(folder) ||
      (key.startsWith(LANCE_TREE_PREFIX) && key.includes(`/${folder}`))
    ) {
      return kind;
    }
  }
  return "other";
}
