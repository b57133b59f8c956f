import {
  holdfastError,
  listAll,
  type ObjectMeta,
  putIfAbsent,
  writerPayload,
} from "@holdfast/conditional-store";
import { DEFAULT_BRANCH, type ProtocolContext, validateName } from "@holdfast/protocol";
import { parseStored, resolverOptions } from "@holdfast/protocol/internal";
import {
  DATASET_KEY,
  dataKey,
  manifestKey,
  parseManifestKey,
  VERSIONS_PREFIX,
  versionsPrefix,
} from "./layout.js";
import {
  type DataFile,
  type DatasetInfo,
  DatasetInfoSchema,
  type Manifest,
  ManifestSchema,
} from "./manifest.js";
import { markHoldfastDataset } from "./marker.js";

/**
 * Creates a dataset: create-only put of `_holdfast/dataset.json`. Throws `conflict` when
 * a dataset already exists at this root (its identity is never overwritten).
 */
export async function initDataset(
  ctx: ProtocolContext,
  options: { defaultBranch?: string } = {},
): Promise<DatasetInfo> {
  const defaultBranch = validateName(options.defaultBranch ?? DEFAULT_BRANCH, "branch");
  const datasetId = ctx.ids.next();
  const { writerId, bytes } = writerPayload(
    { schema: 1 as const, format: "holdfast" as const, datasetId, defaultBranch },
    ctx.ids,
  );
  const outcome = await putIfAbsent(ctx.store, DATASET_KEY, bytes, resolverOptions(ctx));
  if (outcome.status === "conflict") {
    throw holdfastError("conflict", "init", `a dataset already exists at ${ctx.store.location}`, {
      key: DATASET_KEY,
      code: "DATASET_EXISTS",
    });
  }
  markHoldfastDataset(ctx.store);
  return { schema: 1, format: "holdfast", datasetId, writerId, defaultBranch };
}

/** Reads and checks the dataset identity; `not-found` when the root holds no dataset. */
export async function openDataset(ctx: ProtocolContext): Promise<DatasetInfo> {
  const got = await ctx.store.get(DATASET_KEY);
  if (!got) {
    throw holdfastError("not-found", "open", `no holdfast dataset at ${ctx.store.location}`, {
      key: DATASET_KEY,
      code: "DATASET_NOT_FOUND",
      hint: "run init first, or check the storage URL and prefix",
    });
  }
  const info = parseStored(DatasetInfoSchema, got.body, DATASET_KEY, "open");
  markHoldfastDataset(ctx.store);
  return info;
}

/**
 * Writes one immutable data file at a fresh `data/{ulid}.bin` (create-only, resolved).
 * Data files are written before the manifest that names them, so a committed manifest
 * never names a missing file.
 */
export async function writeDataFile(
  ctx: ProtocolContext,
  bytes: Uint8Array,
  options: { signal?: AbortSignal } = {},
): Promise<WrittenDataFile> {
  if (!(bytes instanceof Uint8Array)) {
    throw holdfastError("invalid-input", "writeDataFile", "data file bytes must be a Uint8Array");
  }
  validateSignal(options?.signal, "writeDataFile");
  // Local timer, read before the write is sent: the commit compares it with its own.
  const writtenAtMs = ctx.clock.now();
  const key = dataKey(ctx.ids.next());
  const outcome = await putIfAbsent(ctx.store, key, bytes, resolverOptions(ctx, options.signal));
  if (outcome.status === "conflict") {
    // A fresh ULID key that exists with other bytes: the id source repeated itself.
    throw holdfastError("conflict", "writeDataFile", `data file key ${key} already taken`, {
      key,
      hint: "the id source produced a duplicate id",
    });
  }
  // Not enumerable: the file still compares and serializes as `{ key, size }`; a copy
  // (spread, JSON) loses it and is then treated as reused, which is the safe side.
  return Object.defineProperty({ key, size: bytes.byteLength }, "writtenAtMs", {
    value: writtenAtMs,
    enumerable: false,
  }) as WrittenDataFile;
}

/**
 * A data file as `writeDataFile` returns it: `writtenAtMs` is the writer's local timer
 * before the write was sent. A commit treats such a file as its own (no commit intent)
 * for `FRESH_FILE_WINDOW_MS`; any other file it names is reused and covered.
 */
export interface WrittenDataFile extends DataFile {
  readonly writtenAtMs: number;
}

/** A manifest as stored, with the store's metadata of its object. */
export interface ManifestRecord {
  readonly key: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly manifest: Manifest;
}

/** Reads and zod-parses a manifest; `not-found` when absent, `invalid-input` (MALFORMED_OBJECT) when corrupt. */
export async function readManifest(
  ctx: ProtocolContext,
  branch: string,
  version: number,
): Promise<ManifestRecord> {
  const record = await tryReadManifest(ctx, branch, version);
  if (!record) {
    throw holdfastError(
      "not-found",
      "readManifest",
      `version ${version} of branch ${branch} does not exist`,
      {
        key: manifestKey(branch, version),
        code: "VERSION_NOT_FOUND",
      },
    );
  }
  return record;
}

/** Like {@link readManifest} but `null` when the manifest is absent. */
export async function tryReadManifest(
  ctx: ProtocolContext,
  branch: string,
  version: number,
): Promise<ManifestRecord | null> {
  const key = manifestKey(branch, version);
  const got = await ctx.store.get(key);
  if (!got) return null;
  const manifest = parseStored(ManifestSchema, got.body, key, "readManifest");
  if (manifest.branch !== branch || manifest.version !== version) {
    throw holdfastError("invalid-input", "readManifest", `manifest ${key} names another version`, {
      key,
      code: "MALFORMED_OBJECT",
    });
  }
  return { key, etag: got.etag, lastModified: got.lastModified, manifest };
}

/** One listed version: the manifest object's listing metadata. */
export interface VersionEntry {
  readonly branch: string;
  readonly version: number;
  readonly key: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly size: number;
}

/** Streams a branch's versions in ascending order, one listing page at a time (memory stays flat). */
export async function* listVersions(
  ctx: ProtocolContext,
  branch: string,
  options: { signal?: AbortSignal; startAfterVersion?: number } = {},
): AsyncGenerator<VersionEntry> {
  const prefix = versionsPrefix(branch);
  const startAfter =
    options.startAfterVersion === undefined
      ? undefined
      : manifestKey(branch, options.startAfterVersion);
  for await (const meta of listAll(ctx.store, prefix, { signal: options.signal, startAfter })) {
    const entry = toVersionEntry(meta);
    // Foreign keys under the prefix are not versions; they are never touched.
    if (entry && entry.branch === branch) yield entry;
  }
}

/**
 * Names of the branches that have at least one manifest, in key order. Costs one
 * single-key LIST per branch: after each branch it skips past that branch's keys, starting
 * the next LIST after `_versions/{branch}0` (`0` follows `/`, and a name holds no `/`), so
 * no key of the branch's folder is in its range: a local store does not read that folder
 * again (a LIST after `_versions/{branch}/~` started inside it).
 */
export async function listBranchesWithVersions(ctx: ProtocolContext): Promise<string[]> {
  const branches = new Set<string>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await ctx.store.list(VERSIONS_PREFIX, { startAfter, pageSize: 1 });
    const first = page.objects[0];
    if (!first) return [...branches];
    const parsed = parseManifestKey(first.key);
    if (parsed) {
      branches.add(parsed.branch);
      // Every key of the branch's folder sorts before its prefix with `/` raised to `0`.
      startAfter = `${versionsPrefix(parsed.branch).slice(0, -1)}0`;
    } else {
      // A foreign key: step over it alone and keep looking for manifests.
      startAfter = first.key;
    }
  }
}

// --- utils ---

function toVersionEntry(meta: ObjectMeta): VersionEntry | null {
  const parsed = parseManifestKey(meta.key);
  if (!parsed) return null;
  return {
    ...parsed,
    key: meta.key,
    etag: meta.etag,
    lastModified: meta.lastModified,
    size: meta.size,
  };
}

/** An optional abort signal must be an AbortSignal (checked before any request). */
export function validateSignal(signal: unknown, operation: string): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw holdfastError("invalid-input", operation, "signal must be an AbortSignal");
  }
}
