import { holdfastError } from "@holdfast/conditional-store";
import {
  holdfastLayout,
  NotAHoldfastDatasetError,
  openDataset,
  requireHoldfastDataset,
} from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { holdfastReferenceCodec, type ReferenceFormat } from "./codec.js";
import { locateTable, type StoreAt, type TableLocation } from "./table-root.js";

/**
 * The holdfast format with the codec of its references: holdfast's layout (`holdfastLayout`
 * of `@holdfast/dataset`: its manifests and data files) and its canonical JSON under `_refs/`. What opening a holdfast
 * dataset binds.
 */
export const holdfastFormat: ReferenceFormat = {
  ...holdfastLayout,
  references: holdfastReferenceCodec,
};

/**
 * A dataset's format bound to its store: its name and the format object every operation on
 * the dataset takes (its layout, its reference codec and, through it, its reference census).
 * `Name` narrows the name to an application's registered ones.
 */
export interface ResolvedFormat<Name extends string = string> {
  /** The format's registered name (`holdfast`, `lance`, ...). */
  readonly name: Name;
  readonly format: ReferenceFormat;
}

/** An existing dataset, opened through its format: the handle commands and routes pass on. */
export interface OpenedDataset<Name extends string = string> {
  readonly resolved: ResolvedFormat<Name>;
  /** The branch a command without `--branch` works on (holdfast's recorded one; `main` on a Lance table). */
  readonly defaultBranch: string;
  /** holdfast's dataset identity; `null` for a format that has none (a Lance table). */
  readonly datasetId: string | null;
}

/**
 * One dataset format as an application registers it: how to recognise a dataset of it at a
 * store's root, bind the format to that store, and open the dataset. A format package
 * exports one (`lanceFormatEntry`); the holdfast format's is {@link holdfastFormatEntry}.
 */
export interface FormatEntry {
  /** Unique name, as `--format` takes it. */
  readonly name: string;
  /** True when the store's root holds a dataset of this format; cheap (one listing) and read-only. */
  detect(ctx: ProtocolContext): Promise<boolean>;
  /** The format bound to this store (a Lance table's manifest naming is read here). */
  resolve(ctx: ProtocolContext): Promise<ResolvedFormat>;
  /** Opens the dataset at the store's root; `not-found` when there is none. */
  open(ctx: ProtocolContext): Promise<OpenedDataset>;
}

/** holdfast's own format: detected by its dataset marker, opened by `openDataset`. */
export const holdfastFormatEntry: FormatEntry = {
  name: holdfastLayout.name,
  async detect(ctx) {
    try {
      await requireHoldfastDataset(ctx, "detect");
      return true;
    } catch (error) {
      if (error instanceof NotAHoldfastDatasetError) return false;
      throw error;
    }
  },
  resolve: async () => ({ name: holdfastLayout.name, format: holdfastFormat }),
  async open(ctx) {
    const info = await openDataset(ctx);
    return {
      resolved: { name: holdfastLayout.name, format: holdfastFormat },
      defaultBranch: info.defaultBranch,
      datasetId: info.datasetId,
    };
  },
};

/** Code of the `invalid-input` error for a format name no entry has. */
export const UNKNOWN_FORMAT = "UNKNOWN_FORMAT";

/**
 * The formats an application knows, and detection among them. A store no registered entry
 * recognises is the fallback's (holdfast's: its open then reports a missing dataset), so
 * detection costs only the registered entries' checks (Lance's: one listing).
 * Adding a format is one `register` line: `new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry)`.
 */
export class FormatRegistry {
  readonly #fallback: FormatEntry;
  readonly #entries: FormatEntry[] = [];

  constructor(fallback: FormatEntry) {
    this.#fallback = fallback;
  }

  /** Adds a format, detected in registration order; a name taken already is refused. */
  register(entry: FormatEntry): this {
    if (this.names.includes(entry.name)) {
      throw holdfastError(
        "invalid-input",
        "registerFormat",
        `format ${entry.name} is registered already`,
        {
          code: UNKNOWN_FORMAT,
        },
      );
    }
    this.#entries.push(entry);
    return this;
  }

  /** Every registered name, the fallback's first. */
  get names(): readonly string[] {
    return [this.#fallback.name, ...this.#entries.map((e) => e.name)];
  }

  /** The entry named `name`; `invalid-input` UNKNOWN_FORMAT before any request otherwise. */
  entry(name: string): FormatEntry {
    const found = [this.#fallback, ...this.#entries].find((e) => e.name === name);
    if (found) return found;
    throw holdfastError("invalid-input", "format", `unknown format ${name}`, {
      code: UNKNOWN_FORMAT,
      hint: `use one of: ${this.names.join(", ")}`,
    });
  }

  /** The entry whose dataset is at the store's root: the first registered one that detects it, else the fallback. */
  async detect(ctx: ProtocolContext): Promise<FormatEntry> {
    for (const entry of this.#entries) {
      if (await entry.detect(ctx)) return entry;
    }
    return this.#fallback;
  }

  /**
   * Where the URI whose namespace path is `segments` stands among tables (the rule of
   * `locateTable`, conformance/table-root/): inside one, a table root, holding one, or none.
   * `storeAt` opens a store at any folder of the namespace without sending anything.
   */
  locate(segments: readonly string[], storeAt: StoreAt): Promise<TableLocation> {
    return locateTable(segments, storeAt, this.#entries);
  }

  /** The dataset's format bound to its store: `forced` (a `--format` flag) or detected. */
  async resolve(ctx: ProtocolContext, forced?: string): Promise<ResolvedFormat> {
    const entry = forced === undefined ? await this.detect(ctx) : this.entry(forced);
    return entry.resolve(ctx);
  }

  /**
   * Opens the existing dataset at the store's root in its format (`forced` or detected).
   * Every command and route that reads or writes an existing dataset opens it here, so the
   * format is bound once and honoured everywhere.
   */
  async open(ctx: ProtocolContext, forced?: string): Promise<OpenedDataset> {
    const entry = forced === undefined ? await this.detect(ctx) : this.entry(forced);
    return entry.open(ctx);
  }
}
