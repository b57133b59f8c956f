import { createReadStream } from "node:fs";
import { mkdtemp, rm, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { holdfastError } from "@holdfast/conditional-store";

/** What the deletion and the retained set need of a manifest: its ETag and its files (key, size). */
export interface SpilledManifest {
  readonly etag: string;
  readonly files: readonly { readonly key: string; readonly size: number }[];
}

/** One version as read before the run's first drain (docs/protocol.md §6.1). */
export interface SpilledVersion {
  readonly version: number;
  /** The ETag the plan listed (the drain names it). */
  readonly listedEtag: string;
  /** The manifest as read; `null`: absent at the read. */
  readonly manifest: SpilledManifest | null;
}

/** Retired versions whose manifests a run holds in memory before it spills the rest. */
export const DEFAULT_SPILL_ABOVE_VERSIONS = 20_000;

/**
 * Where a run keeps the manifests it read before its first drain until it deletes their
 * versions (docs/protocol.md §6.2). In memory while the records held there name
 * at most `spillAboveVersions` versions in all; a record that would pass it goes to one file
 * of a folder of the run's own (`mkdtemp` under `CleanupOptions.spillDir`: a unique name,
 * mode 0700; files 0600), made on first use and removed when the run ends, failed or not
 * ({@link remove}). So a small run, and every run on a store the simulation orders, touches
 * no disk, and a large one holds at most `spillAboveVersions` versions' manifests plus one
 * record's reads in flight, whatever the number retired. Nothing here is an anchor: a crash
 * leaves a folder no later run reads (the committed records are what a resumed run works
 * from, and it reads their manifests again).
 */
export class ManifestSpill {
  #folder: Promise<string> | undefined;
  #files = 0;
  #removed = false;
  /** Versions of the records held in memory (released as each record is discarded). */
  #held = 0;
  /** Versions of the sealed records held in memory (retire.ts, {@link holdsSealed}). */
  #sealedHeld = 0;
  readonly #writing = new Set<Promise<unknown>>();

  /**
   * @param root the folder the spill's own temp folder is made in (`CleanupOptions.spillDir`).
   * @param above most versions held in memory before a record goes to disk (`CleanupOptions.spillAboveVersions`).
   */
  constructor(
    private readonly root: string = tmpdir(),
    private readonly above: number = DEFAULT_SPILL_ABOVE_VERSIONS,
  ) {}

  /**
   * Keeps one record's versions (in the given order, the plan's ascending one) and returns
   * them as a {@link RetiredManifests}: in memory below the threshold, else in a file. A
   * record that goes to a file is serialized before this returns, so the caller's version
   * and manifest objects are free while the file is written (a run with the read pool's
   * tasks all waiting on spill writes holds their lines, not their objects: docs/protocol.md
   * §6.2).
   */
  write(versions: readonly SpilledVersion[]): Promise<RetiredManifests> {
    if (this.#removed) {
      return Promise.reject(new Error("the manifest spill was removed (the run ended)"));
    }
    if (this.#held + versions.length <= this.above) {
      const count = versions.length;
      this.#held += count;
      return Promise.resolve(
        RetiredManifests.inMemory(versions, () => {
          this.#held -= count;
        }),
      );
    }
    const writing = this.#write(serialize(versions));
    this.#writing.add(writing);
    return writing.finally(() => this.#writing.delete(writing));
  }

  /**
   * Whether a sealed record naming `versions` versions stays in memory: while the sealed
   * records held there name at most `spillAboveVersions` versions in all (counted here);
   * otherwise it goes to a file of the folder ({@link newFile}). A sealed record in memory
   * stays there until the run's commits, which end the wait of all of them.
   */
  holdsSealed(versions: number): boolean {
    if (this.#sealedHeld + versions > this.above) return false;
    this.#sealedHeld += versions;
    return true;
  }

  /** A path for a new file of the run's own folder (made on first use), ending in `suffix`. */
  async newFile(suffix: string): Promise<string> {
    if (this.#removed) throw new Error("the manifest spill was removed (the run ended)");
    this.#folder ??= mkdtemp(join(this.root, "holdfast-cleanup-"));
    const folder = await this.#folder;
    this.#files += 1;
    return join(folder, `${this.#files}.${suffix}`);
  }

  async #write({ text, range, files }: Serialized): Promise<RetiredManifests> {
    const path = await this.newFile("jsonl");
    // `wx`: a file of this run's own folder, never one already there.
    await writeFile(path, text, { mode: 0o600, flag: "wx" });
    return RetiredManifests.inFile(path, range, files);
  }

  /** Removes the spill folder and everything in it (the end of the run, or its failure). */
  async remove(): Promise<void> {
    this.#removed = true;
    // A read task of a failed run may still be writing its record: let it land first.
    await Promise.allSettled([...this.#writing]);
    const folder = await this.#folder?.catch(() => undefined);
    if (folder) await rm(folder, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * The manifests of the versions one committed record retires: a spill file of this run
 * (streamed, one line at a time) under the replacements the last look read (a version whose
 * key holds another object, kept in memory: few), minus the versions the record kept. A
 * record of an earlier run has no file: only what the last look read.
 */
export class RetiredManifests {
  readonly #replaced = new Map<number, SpilledManifest | null>();
  readonly #except = new Set<number>();
  #released = false;

  /**
   * @param path the record's spill file (none: in memory, or a record of an earlier run).
   * @param range the lowest and highest version kept (none: a record of an earlier run).
   * @param memory the versions kept in memory, by version, in the written (ascending) order.
   * @param release called once when the record is discarded (the spill's memory budget).
   * @param files the file entries of the manifests written: what the deletion will send at
   *   most besides the manifests (a file retained, or named by two versions, is sent once or
   *   not at all), so the delete phase has a total before its first delete. 0 for a record
   *   of an earlier run, whose manifests are read at its deletion.
   */
  private constructor(
    private readonly path?: string,
    private readonly range?: { readonly first: number; readonly last: number },
    private memory?: Map<number, SpilledVersion>,
    private readonly release?: () => void,
    readonly files = 0,
  ) {}

  /** A record of an earlier run: nothing read before the drain, only what the last look reads. */
  static recovered(): RetiredManifests {
    return new RetiredManifests();
  }

  /** A record of this run kept in memory (below the spill threshold). */
  static inMemory(versions: readonly SpilledVersion[], release: () => void): RetiredManifests {
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    let files = 0;
    const memory = new Map<number, SpilledVersion>();
    for (const entry of versions) {
      first = Math.min(first, entry.version);
      last = Math.max(last, entry.version);
      files += entry.manifest?.files.length ?? 0;
      memory.set(entry.version, entry);
    }
    return new RetiredManifests(undefined, { first, last }, memory, release, files);
  }

  /** A record of this run spilled to a file of `files` file entries. */
  static inFile(
    path: string,
    range: { readonly first: number; readonly last: number },
    files: number,
  ): RetiredManifests {
    return new RetiredManifests(path, range, undefined, undefined, files);
  }

  /** Whether the spill may hold a version (between its lowest and highest). */
  covers(version: number): boolean {
    return this.range !== undefined && version >= this.range.first && version <= this.range.last;
  }

  /** The manifest the last look read for a version whose key holds another object. */
  replace(version: number, manifest: SpilledManifest | null): void {
    this.#replaced.set(version, manifest);
  }

  /** Versions the record kept (cancelled): not the record's to delete. */
  except(versions: Iterable<number>): this {
    for (const v of versions) this.#except.add(v);
    return this;
  }

  /**
   * Every version with its manifest, in the order written (ascending), replacements applied.
   * A spill file gone (removed under the run) throws `MANIFEST_SPILL_LOST`: what a record
   * retires or keeps is never decided without it, unless `missing: "skip"` (the deletion,
   * which then reads each manifest again and compares its ETag with the record).
   */
  async *versions(options: { missing?: "throw" | "skip" } = {}): AsyncGenerator<SpilledVersion> {
    if (this.memory) {
      for (const entry of this.memory.values()) {
        if (this.#except.has(entry.version)) continue;
        yield this.#replaced.has(entry.version)
          ? { ...entry, manifest: this.#replaced.get(entry.version) ?? null }
          : entry;
      }
      return;
    }
    if (!this.path) {
      for (const [version, manifest] of this.#replaced) {
        if (!this.#except.has(version)) yield { version, listedEtag: "", manifest };
      }
      return;
    }
    const input = createReadStream(this.path, { encoding: "utf8" });
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      for await (const text of lines) {
        if (text === "") continue;
        const entry = parseLine(this.path, text);
        if (this.#except.has(entry.version)) continue;
        yield this.#replaced.has(entry.version)
          ? { ...entry, manifest: this.#replaced.get(entry.version) ?? null }
          : entry;
      }
    } catch (error) {
      if ((error as { code?: unknown }).code !== "ENOENT") throw error;
      if (options.missing === "skip") return;
      throw holdfastError("not-found", "cleanup", `manifest spill ${this.path} is gone`, {
        key: this.path,
        code: "MANIFEST_SPILL_LOST",
        cause: error,
        hint: "the run's temp folder was removed under it; run cleanup again (the records are the anchor)",
      });
    } finally {
      lines.close();
      input.destroy(); // a pass left early (a cursor closed) holds no descriptor
    }
  }

  /**
   * A reader for ascending versions (the order a record lists them): `get` answers from one
   * pass over the file; a version asked out of order starts a new pass. `undefined`: not
   * read before the drain (the deletion reads it).
   */
  cursor(options: { missing?: "throw" | "skip" } = {}): RetiredManifestCursor {
    return new RetiredManifestCursor(this, options);
  }

  /**
   * The data files the deletion of this record will send: distinct keys its versions'
   * manifests (as read before the drain, replacements applied) name that `retained` does
   * not hold, as the deletion dedupes them record-wide. One pass over the spill; the
   * delete phase's total before its first delete (progress only).
   */
  async filesToDelete(retained: ReadonlySet<string>): Promise<number> {
    if (!this.spilled) return 0;
    const seen = new Set<string>();
    for await (const { manifest } of this.versions({ missing: "skip" })) {
      for (const file of manifest?.files ?? []) {
        if (!retained.has(file.key)) seen.add(file.key);
      }
    }
    return seen.size;
  }

  /** Whether the last look replaced a version (answers without the file). */
  replacement(version: number): { manifest: SpilledManifest | null } | undefined {
    return this.#replaced.has(version) && !this.#except.has(version)
      ? { manifest: this.#replaced.get(version) ?? null }
      : undefined;
  }

  /** Whether this run read the record's versions before the drain (in memory or in a file). */
  get spilled(): boolean {
    return this.path !== undefined || this.memory !== undefined;
  }

  /**
   * A version as read before the drain, looked up without a pass (in memory only);
   * `undefined`: not kept in memory (in a file, or not read before the drain).
   */
  held(version: number): { manifest: SpilledManifest | null } | undefined {
    const entry = this.#except.has(version) ? undefined : this.memory?.get(version);
    return entry ? { manifest: entry.manifest } : undefined;
  }

  /** Whether the record is kept in memory (no file to stream). */
  get inMemory(): boolean {
    return this.memory !== undefined;
  }

  /** Drops the record's manifests once its versions are deleted: its file, or its memory (the folder goes at the run's end anyway). */
  async discard(): Promise<void> {
    if (this.memory) {
      this.memory = undefined;
      if (!this.#released) this.release?.();
      this.#released = true;
    }
    if (this.path) await unlink(this.path).catch(() => {});
  }
}

/** See {@link RetiredManifests.cursor}. */
export class RetiredManifestCursor {
  #lines: AsyncGenerator<SpilledVersion> | undefined;
  #head: SpilledVersion | undefined;
  #last = 0;
  #done = false;

  constructor(
    private readonly source: RetiredManifests,
    private readonly options: { missing?: "throw" | "skip" },
  ) {}

  async get(version: number): Promise<{ manifest: SpilledManifest | null } | undefined> {
    const replaced = this.source.replacement(version);
    if (replaced || !this.source.spilled) return replaced;
    if (this.source.inMemory) return this.source.held(version);
    if (version < this.#last) await this.close(); // out of order: a new pass
    this.#last = version;
    this.#lines ??= this.source.versions(this.options);
    while (!this.#done && (this.#head === undefined || this.#head.version < version)) {
      const next = await this.#lines.next();
      if (next.done) this.#done = true;
      else this.#head = next.value;
    }
    return this.#head?.version === version ? { manifest: this.#head.manifest } : undefined;
  }

  async close(): Promise<void> {
    await this.#lines?.return(undefined);
    this.#lines = undefined;
    this.#head = undefined;
    this.#done = false;
    this.#last = 0;
  }
}

/** One record's versions as the lines of its spill file, with its version range and file count. */
interface Serialized {
  readonly text: string;
  readonly range: { readonly first: number; readonly last: number };
  readonly files: number;
}

function serialize(versions: readonly SpilledVersion[]): Serialized {
  const lines: string[] = [];
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  let files = 0;
  for (const { version, listedEtag, manifest } of versions) {
    first = Math.min(first, version);
    last = Math.max(last, version);
    files += manifest?.files.length ?? 0;
    lines.push(
      JSON.stringify(
        manifest
          ? {
              v: version,
              l: listedEtag,
              e: manifest.etag,
              f: manifest.files.map((f) => [f.key, f.size]),
            }
          : { v: version, l: listedEtag, e: null },
      ),
    );
  }
  return { text: lines.length > 0 ? `${lines.join("\n")}\n` : "", range: { first, last }, files };
}

function parseLine(path: string, text: string): SpilledVersion {
  // Written by this run a moment ago; checked all the same (a boundary: the temp folder).
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw unreadable(path, cause);
  }
  const line = parsed as { v?: unknown; l?: unknown; e?: unknown; f?: unknown };
  const files = line.f ?? [];
  if (
    typeof line.v !== "number" ||
    !Number.isSafeInteger(line.v) ||
    typeof line.l !== "string" ||
    (line.e !== null && typeof line.e !== "string") ||
    !Array.isArray(files) ||
    !files.every(
      (f: unknown) =>
        Array.isArray(f) &&
        f.length === 2 &&
        typeof f[0] === "string" &&
        Number.isSafeInteger(f[1]),
    )
  ) {
    throw unreadable(path);
  }
  return {
    version: line.v,
    listedEtag: line.l,
    manifest:
      line.e === null
        ? null
        : {
            etag: line.e,
            files: (files as [string, number][]).map(([key, size]) => ({ key, size })),
          },
  };
}

function unreadable(path: string, cause?: unknown) {
  return holdfastError("invalid-input", "cleanup", `manifest spill ${path} is unreadable`, {
    key: path,
    code: "MALFORMED_OBJECT",
    ...(cause === undefined ? {} : { cause }),
    hint: "the run's temp folder was changed under it; run cleanup again (the records are the anchor)",
  });
}
