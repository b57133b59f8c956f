import { readFile, writeFile } from "node:fs/promises";
import type { ProtocolContext } from "@holdfast/protocol";
import { HeldRecord, type RetirementHandle, type RetirementRecord } from "@holdfast/retirement";
import type { ManifestSpill } from "./spill.js";

/**
 * A record of this run the heartbeat renews and the run moves (commit, give-up): every move
 * runs on the latest handle, after any renewal in flight (`HeldRecord` of the retirement
 * package, or {@link SpilledRecord}).
 */
export interface Holding {
  update(move: (handle: RetirementHandle) => Promise<RetirementHandle>): Promise<RetirementHandle>;
  renew(): Promise<RetirementHandle>;
}

/**
 * Holds a record of this run that waits sealed for the run's commits (docs/protocol.md §6.2):
 * in memory while the sealed records held there name at most `spillAboveVersions` versions,
 * beyond that as a {@link SpilledRecord}, so the records waiting for their commits do not
 * grow the heap with the versions retired. `held` is the record as moved so far; its
 * renewals in flight land first.
 */
export async function holdSealed(
  ctx: ProtocolContext,
  spill: ManifestSpill,
  held: HeldRecord,
): Promise<Holding> {
  const handle = await held.update(async (h) => h);
  if (spill.holdsSealed(handle.record.versions.length)) return held;
  return SpilledRecord.write(ctx, await spill.newFile("record.json"), handle);
}

/**
 * A sealed record of this run whose body waits in a file of the run's spill folder (mode
 * 0600), read for each move and written back after it: a renewal or the commit holds one
 * record's body at a time. The file is a copy of what this process last wrote to the store
 * (the store's record is the anchor): a write to the file that fails after a move leaves
 * the store's ETag ahead of the copy, so the next move fails its if-match (fenced) and the
 * run keeps every version of the record, as when another cleaner took it over.
 */
export class SpilledRecord implements Holding {
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly ctx: ProtocolContext,
    private readonly path: string,
  ) {}

  static async write(
    ctx: ProtocolContext,
    path: string,
    handle: RetirementHandle,
  ): Promise<SpilledRecord> {
    const spilled = new SpilledRecord(ctx, path);
    await spilled.#save(handle, "wx");
    return spilled;
  }

  update(move: (handle: RetirementHandle) => Promise<RetirementHandle>): Promise<RetirementHandle> {
    return this.#inTurn((held) => held.update(move));
  }

  /** `HeldRecord.renew` on the saved copy: only a pre-commit record is rewritten. */
  renew(): Promise<RetirementHandle> {
    return this.#inTurn((held) => held.renew());
  }

  /** One move at a time: the saved copy, held for the move, written back after it. */
  #inTurn(step: (held: HeldRecord) => Promise<RetirementHandle>): Promise<RetirementHandle> {
    const next = this.#chain.then(async () => {
      const moved = await step(new HeldRecord(this.ctx, await this.#load()));
      await this.#save(moved, "w");
      return moved;
    });
    // The chain keeps no handle: a resolved link would hold the record's body in memory.
    this.#chain = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  async #load(): Promise<RetirementHandle> {
    const saved = JSON.parse(await readFile(this.path, "utf8")) as {
      key: string;
      etag: string;
      record: RetirementRecord;
      lastModifiedMs?: number;
    };
    return {
      key: saved.key,
      etag: saved.etag,
      record: saved.record,
      ...(saved.lastModifiedMs === undefined
        ? {}
        : { lastModified: new Date(saved.lastModifiedMs) }),
    };
  }

  async #save(handle: RetirementHandle, flag: "w" | "wx"): Promise<void> {
    const text = JSON.stringify({
      key: handle.key,
      etag: handle.etag,
      record: handle.record,
      ...(handle.lastModified === undefined
        ? {}
        : { lastModifiedMs: handle.lastModified.getTime() }),
    });
    await writeFile(this.path, text, { mode: 0o600, flag });
  }
}
