import { HoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import type { DatasetFormat } from "./format.js";
import { DATASET_KEY, parseManifestKey, VERSIONS_PREFIX } from "./layout.js";

/** Code of {@link NotAHoldfastDatasetError}. */
export const NOT_A_HOLDFAST_DATASET = "NOT_A_HOLDFAST_DATASET";

/**
 * What a store without holdfast's dataset marker holds, as far as one short listing says:
 * a Lance table (`_versions/*.manifest`), holdfast manifests written without `initDataset`,
 * other objects, or nothing.
 */
export type FoundLayout = "lance" | "holdfast-without-marker" | "other" | "empty";

/**
 * An operation of holdfast's own format met a store without `_holdfast/dataset.json`:
 * `invalid-input`, code NOT_A_HOLDFAST_DATASET, `found` says what is there. Thrown before
 * the operation writes anything (docs/protocol.md §1.1).
 */
export class NotAHoldfastDatasetError extends HoldfastError {
  readonly found: FoundLayout;

  constructor(operation: string, location: string, found: FoundLayout) {
    super(`no holdfast dataset at ${location}: ${DESCRIBE[found]}; nothing was written`, {
      kind: "invalid-input",
      operation,
      key: DATASET_KEY,
      code: NOT_A_HOLDFAST_DATASET,
      hint: HINT[found],
    });
    this.found = found;
  }

  override toJSON(): Record<string, unknown> {
    return { ...super.toJSON(), found: this.found };
  }
}

/**
 * Refuses to run an operation of holdfast's own layout on a store that is not a holdfast
 * dataset: every API whose format defaults to holdfast's calls this on that default path,
 * so a Lance table (or anything else) is never read, written or cleaned as holdfast's
 * layout. One HEAD of the marker; a store object that showed it once is not asked again
 * (holdfast never deletes the marker), so a process holding one store pays one HEAD.
 * `options.via` sends the requests through another view of the same store (a cleanup
 * run's request counter) while the answer is remembered for `ctx.store`. A missing marker
 * costs one more LIST to say what is there.
 */
export async function requireHoldfastDataset(
  ctx: ProtocolContext,
  operation: string,
  options: { via?: ObjectStore | undefined } = {},
): Promise<void> {
  if (marked.has(ctx.store)) return;
  const store = options.via ?? ctx.store;
  if (await store.head(DATASET_KEY)) {
    markHoldfastDataset(ctx.store);
    return;
  }
  throw new NotAHoldfastDatasetError(operation, store.location, await foundLayout(store));
}

/**
 * Whether `store` already showed holdfast's marker. Callers test it before awaiting
 * `requireHoldfastDataset`, so the known case costs no request and no await (an
 * await changes how concurrent operations interleave, which seeded schedules replay).
 */
export function holdfastDatasetKnown(store: ObjectStore): boolean {
  return marked.has(store);
}

/** Code of the `invalid-input` error an operation called without the dataset's format gets. */
export const FORMAT_REQUIRED = "FORMAT_REQUIRED";

/**
 * Refuses a call that names no dataset format (a JavaScript caller the types did not
 * stop): `invalid-input`, code FORMAT_REQUIRED, before any request. Every operation on a
 * dataset's layout takes the format it was opened with (docs/protocol.md §1.1); none falls back to
 * holdfast's.
 */
export function requireFormat(format: unknown, operation: string): asserts format is DatasetFormat {
  if (typeof format === "object" && format !== null) {
    if (typeof (format as { name?: unknown }).name === "string") return;
  }
  throw new HoldfastError(`${operation} needs the dataset's format; nothing was read or written`, {
    kind: "invalid-input",
    operation,
    code: FORMAT_REQUIRED,
    hint: "open the dataset (FormatRegistry.open) and pass its format, or pass holdfastFormat",
  });
}

/**
 * True when an operation in `format` must still check the store's marker
 * (`requireHoldfastDataset`) before its first write: the format is holdfast's
 * layout and `store` has not shown the marker. Synchronous, so the known case costs no
 * request and no await; any other format was bound by its own detection.
 */
export function holdfastMarkerUnchecked(store: ObjectStore, format: DatasetFormat): boolean {
  return format.name === HOLDFAST_FORMAT_NAME && !marked.has(store);
}

/** Records that `store` showed holdfast's marker (init wrote it, open read it). */
export function markHoldfastDataset(store: ObjectStore): void {
  marked.add(store);
}

// --- utils ---

const marked = new WeakSet<ObjectStore>();

/** `holdfastLayout.name`, repeated: format.ts reaches this module through dataset.ts, so importing it back would be a cycle. */
const HOLDFAST_FORMAT_NAME = "holdfast";

const LANCE_MANIFEST = /^_versions\/[^/]+\.manifest$/;

async function foundLayout(store: ObjectStore): Promise<FoundLayout> {
  const versions = await store.list(VERSIONS_PREFIX, { pageSize: 64 });
  if (versions.objects.some((meta) => LANCE_MANIFEST.test(meta.key))) return "lance";
  if (versions.objects.some((meta) => parseManifestKey(meta.key) !== null)) {
    return "holdfast-without-marker";
  }
  if (versions.objects.length > 0) return "other";
  const any = await store.list("", { pageSize: 1 });
  return any.objects.length > 0 ? "other" : "empty";
}

const DESCRIBE: Record<FoundLayout, string> = {
  lance: "this looks like a Lance table (_versions/*.manifest found)",
  "holdfast-without-marker": `holdfast manifests found, but no dataset marker (${DATASET_KEY})`,
  other: `the store holds objects, but no dataset marker (${DATASET_KEY})`,
  empty: "the store is empty",
};

const HINT: Record<FoundLayout, string> = {
  lance:
    "pass the Lance format (openLanceFormat or lanceFormatEntry of @holdfast/format-lance); the CLI and server detect it",
  "holdfast-without-marker":
    "run initDataset (holdfast init) once on this dataset: it only writes the marker",
  other: "check the storage URL and prefix, or pass the dataset's format",
  empty: "run initDataset (holdfast init) first, or check the storage URL and prefix",
};
