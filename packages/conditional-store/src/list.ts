import type { ListOptions, ObjectMeta, ObjectStore } from "./types.js";

/** Streams every object under `prefix`, one page at a time (memory stays flat). */
export async function* listAll(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, "pageToken"> = {},
): AsyncGenerator<ObjectMeta> {
  for await (const objects of listPages(store, prefix, options)) yield* objects;
}

/**
 * Streams the pages of every object under `prefix` (memory stays flat): what
 * {@link listAll} yields, a page's objects at a time. A caller that handles a page in one
 * synchronous pass is resumed once per page, not once per object: for a listing of
 * thousands of keys that is less promise work, and the caller's body stays cold to the
 * engine's optimizing compiler.
 */
export async function* listPages(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, "pageToken"> = {},
): AsyncGenerator<readonly ObjectMeta[]> {
  let pageToken: string | undefined;
  do {
    const page = await store.list(prefix, { ...options, pageToken });
    yield page.objects;
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
}

/** Splits keys into chunks of the store's batch-delete size. */
export function* batches<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/**
 * Deletes every object under `prefix` as it is listed, in the store's largest batches
 * (memory stays flat). Throws the first failed deletion's error.
 */
export async function deleteAllUnder(store: ObjectStore, prefix: string): Promise<void> {
  const size = Math.max(1, store.capabilities.maxBatchDelete);
  let keys: string[] = [];
  const flush = async () => {
    for (const batch of batches(keys, size)) {
      const failed = (await store.deleteMany(batch)).failed[0];
      if (failed) throw failed.error;
    }
    keys = [];
  };
  for await (const meta of listAll(store, prefix)) {
    keys.push(meta.key);
    if (keys.length >= size) await flush();
  }
  await flush();
}
