import type { VersionEntry } from "@holdfast/dataset";
import { type LanceNaming, lanceManifestKey } from "./naming.js";
import { flatKey } from "./needs.js";

/**
 * A branch's listed versions, held as columns: a version number, ETag, Last-Modified and
 * size each, not an entry object with its key string and Date (a `_versions/` listing is
 * held whole, since Lance's names do not sort by version ascending: about 80 bytes a version
 * here against about 400 as objects). Each {@link VersionEntry} is built when it is read;
 * its key is the version's manifest key under the branch's one naming, which is the name
 * listed (a mix of namings, or a V1 name with leading zeros, is never added).
 */
export class ListedVersions implements Iterable<VersionEntry> {
  #versions: number[] = [];
  #etags: string[] = [];
  #modified: number[] = [];
  #sizes: number[] = [];

  constructor(
    private readonly branch: string,
    private readonly root: string,
    private readonly naming: LanceNaming,
  ) {}

  get length(): number {
    return this.#versions.length;
  }

  add(version: number, etag: string, lastModified: Date, size: number): void {
    this.#versions.push(version);
    this.#etags.push(etag);
    this.#modified.push(lastModified.getTime());
    this.#sizes.push(size);
  }

  /**
   * Keeps the versions from `from` to `to` (all without a range), ascending: a V2 listing
   * (newest first) is reversed, any other order sorted.
   */
  arrange(range?: { readonly from: number; readonly to: number }): this {
    const n = this.#versions.length;
    const versions = this.#versions;
    if (range === undefined && descending(versions)) {
      // A whole V2 listing: reversed in place, no copy of the columns.
      this.#versions.reverse();
      this.#etags.reverse();
      this.#modified.reverse();
      this.#sizes.reverse();
      return this;
    }
    let order: number[] = [];
    for (let i = 0; i < n; i += 1) {
      const v = versions[i]!;
      if (range === undefined || (v >= range.from && v <= range.to)) order.push(i);
    }
    if (!ascending(order, versions)) {
      order = order.reverse();
      if (!ascending(order, versions)) order.sort((a, b) => versions[a]! - versions[b]!);
    }
    this.#versions = order.map((i) => versions[i]!);
    this.#etags = order.map((i) => this.#etags[i]!);
    this.#modified = order.map((i) => this.#modified[i]!);
    this.#sizes = order.map((i) => this.#sizes[i]!);
    return this;
  }

  /** The entry at `i` (in the order arranged), built now. */
  at(i: number): VersionEntry | undefined {
    const version = this.#versions.at(i);
    if (version === undefined) return undefined;
    const j = i < 0 ? this.#versions.length + i : i;
    return {
      branch: this.branch,
      version,
      key: flatKey(this.root, lanceManifestKey(this.naming, version)),
      etag: this.#etags[j]!,
      lastModified: new Date(this.#modified[j]!),
      size: this.#sizes[j]!,
    };
  }

  *[Symbol.iterator](): Iterator<VersionEntry> {
    for (let i = 0; i < this.#versions.length; i += 1) yield this.at(i)!;
  }
}

function descending(versions: readonly number[]): boolean {
  for (let k = 1; k < versions.length; k += 1) {
    if (versions[k - 1]! < versions[k]!) return false;
  }
  return true;
}

function ascending(order: readonly number[], versions: readonly number[]): boolean {
  for (let k = 1; k < order.length; k += 1) {
    if (versions[order[k - 1]!]! > versions[order[k]!]!) return false;
  }
  return true;
}
