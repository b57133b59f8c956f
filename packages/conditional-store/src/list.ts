import type { ListOptions, ObjectMeta, ObjectStore } from "./types.js";

/** Streams every object under `prefix`, one page at a time (memory stays flat). */
export async function* listAll(
  store: ObjectStore,
  prefix: string,
  options: Omit<ListOptions, "pageToken"> = {},
): AsyncGenerator<ObjectMeta> {
  let pageToken: string | undefined;
  do {
    const page = await store.list(prefix, { ...options, pageToken });
    yield* page.objects;
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
}

/** Splits keys into chunks of the store's batch-delete size. */
export function* batches<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
