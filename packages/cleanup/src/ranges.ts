/** A run of consecutive versions of one branch, `from` to `to` inclusive. */
export interface VersionRange {
  readonly branch: string;
  readonly from: number;
  readonly to: number;
}

/**
 * A set of version numbers stored as sorted ranges: memory grows with the number of gaps,
 * not of versions (a listing of 100,000 consecutive versions is one range). Versions
 * usually arrive in ascending order (listings, records) and extend the last range in O(1).
 */
export class VersionSet {
  #from: number[] = [];
  #to: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  add(version: number): void {
    const last = this.#to.length - 1;
    if (last >= 0 && version === this.#to[last]! + 1) {
      this.#to[last] = version;
    } else if (last < 0 || version > this.#to[last]! + 1) {
      this.#from.push(version);
      this.#to.push(version);
    } else {
      if (this.has(version)) return;
      this.#insert(version);
      return;
    }
    this.#size += 1;
  }

  has(version: number): boolean {
    const i = this.#rangeAtOrBefore(version);
    return i >= 0 && version <= this.#to[i]!;
  }

  /** The ranges, ascending. */
  *ranges(): Generator<{ from: number; to: number }> {
    for (let i = 0; i < this.#from.length; i += 1) yield { from: this.#from[i]!, to: this.#to[i]! };
  }

  /** Index of the last range starting at or before `version`, or -1. */
  #rangeAtOrBefore(version: number): number {
    let lo = 0;
    let hi = this.#from.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.#from[mid]! <= version) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  }

  /** Out-of-order insertion (rare): a new range, merged with its neighbours. */
  #insert(version: number): void {
    const i = this.#rangeAtOrBefore(version);
    this.#from.splice(i + 1, 0, version);
    this.#to.splice(i + 1, 0, version);
    this.#size += 1;
    // Merge with the next, then with the previous range where they touch.
    const j = i + 1;
    if (j + 1 < this.#from.length && this.#to[j]! + 1 === this.#from[j + 1]) {
      this.#to[j] = this.#to[j + 1]!;
      this.#from.splice(j + 1, 1);
      this.#to.splice(j + 1, 1);
    }
    if (j > 0 && this.#to[j - 1]! + 1 === this.#from[j]) {
      this.#to[j - 1] = this.#to[j]!;
      this.#from.splice(j, 1);
      this.#to.splice(j, 1);
    }
  }
}

/**
 * The versions a run retired (or finished), per branch, as ranges: what `stats.retired`
 * reports. `push` keeps the shape of an array of `{ branch, version }` for the steps that
 * fill it; the list itself is only built when a caller reads `stats.retired`.
 */
export class RetiredLog {
  readonly #branches = new Map<string, VersionSet>();
  /** Branches in first-seen order, so the list keeps the order versions were reported in. */
  readonly #order: string[] = [];
  #count = 0;

  get count(): number {
    return this.#count;
  }

  push(entry: { branch: string; version: number }): void {
    let set = this.#branches.get(entry.branch);
    if (!set) {
      set = new VersionSet();
      this.#branches.set(entry.branch, set);
      this.#order.push(entry.branch);
    }
    const before = set.size;
    set.add(entry.version);
    this.#count += set.size - before;
  }

  ranges(): VersionRange[] {
    const out: VersionRange[] = [];
    for (const branch of this.#order) {
      for (const { from, to } of this.#branches.get(branch)!.ranges())
        out.push({ branch, from, to });
    }
    return out;
  }

  toList(): { branch: string; version: number }[] {
    const out: { branch: string; version: number }[] = [];
    for (const { branch, from, to } of this.ranges()) {
      for (let version = from; version <= to; version += 1) out.push({ branch, version });
    }
    return out;
  }
}
