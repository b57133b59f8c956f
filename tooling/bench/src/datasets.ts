import { encodeJson, type ObjectStore, seededIds } from "@holdfast/conditional-store";
import { dataKey, type Manifest, manifestKey } from "@holdfast/dataset";

export interface DatasetShape {
  readonly versions: number;
  /** New small data files each version names. */
  readonly filesPerVersion: number;
  readonly seed: number;
  readonly branch?: string;
  /** Requests in flight while writing. @default 32 */
  readonly concurrency?: number;
  /** Called after each version's writes are sent (a long build's progress). */
  readonly onVersion?: (version: number) => void;
}

/**
 * Writes a dataset straight to the store: manifests as `commitVersion` writes them
 * (without its per-commit search, so building 100,000 versions takes seconds, not hours),
 * each naming `filesPerVersion` new 64-byte data files. No head hint is written: a commit
 * on it behaves as on a dataset written before hints existed.
 */
export async function buildDataset(store: ObjectStore, shape: DatasetShape): Promise<void> {
  const ids = seededIds(shape.seed);
  const branch = shape.branch ?? "main";
  await store.put(
    "_holdfast/dataset.json",
    encodeJson({
      schema: 1,
      format: "holdfast",
      datasetId: ids.next(),
      writerId: ids.next(),
      defaultBranch: "main",
    }),
  );
  const limit = shape.concurrency ?? 32;
  const pending = new Set<Promise<unknown>>();
  const send = async (p: () => Promise<unknown>) => {
    while (pending.size >= limit) await Promise.race(pending);
    const task = p().finally(() => pending.delete(task));
    pending.add(task);
  };
  const body = new Uint8Array(64);
  for (let version = 1; version <= shape.versions; version += 1) {
    const files = [];
    for (let f = 0; f < shape.filesPerVersion; f += 1) {
      const key = dataKey(ids.next());
      files.push({ key, size: body.byteLength });
      await send(() => store.put(key, body));
    }
    const manifest: Manifest = {
      schema: 1,
      branch,
      version,
      parent: version === 1 ? null : { branch, version: version - 1 },
      files,
      txnId: ids.next(),
    };
    await send(() => store.put(manifestKey(branch, version), encodeJson(manifest)));
    shape.onVersion?.(version);
  }
  await Promise.all(pending);
}
