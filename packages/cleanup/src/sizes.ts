import { listAll } from "@holdfast/conditional-store";
import type { ObjectKind } from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";

/**
 * Sizes of objects a run deletes whose size it was not told (a Lance manifest records no
 * size for its transaction and deletion files; a retired manifest's own size), from one
 * listing of their folder per run, taken before the run's first delete there (a listing
 * answers sizes with the keys: one LIST per 1,000 objects, never a HEAD per object). A key
 * the listing did not show (gone already) counts 0 bytes.
 */
export class ListedSizes {
  readonly #folders = new Map<string, Promise<Map<string, number>>>();

  constructor(private readonly ctx: ProtocolContext) {}

  /** The size of `key`, `recorded` when the caller knows it (a positive size). */
  async of(key: string, recorded?: number): Promise<number> {
    if (recorded !== undefined && recorded > 0) return recorded;
    const folder = key.slice(0, key.lastIndexOf("/") + 1);
    let listing = this.#folders.get(folder);
    if (listing === undefined) {
      listing = this.#list(folder);
      this.#folders.set(folder, listing);
    }
    return (await listing).get(key) ?? 0;
  }

  async #list(folder: string): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    for await (const meta of listAll(this.ctx.store, folder)) {
      if (meta.key.slice(folder.length).includes("/")) continue; // the folder's own files only
      sizes.set(meta.key, meta.size);
    }
    return sizes;
  }
}

/** Objects and bytes a run deleted (or would), per kind of object. */
export type DeletedByKind = Record<ObjectKind, { objects: number; bytes: number }>;

export function emptyByKind(): DeletedByKind {
  return {
    manifests: { objects: 0, bytes: 0 },
    data: { objects: 0, bytes: 0 },
    deletion: { objects: 0, bytes: 0 },
    index: { objects: 0, bytes: 0 },
    transaction: { objects: 0, bytes: 0 },
    other: { objects: 0, bytes: 0 },
  };
}
