import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { MemoryStore } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/protocol";
import { HeldRecord, type RetirementHandle } from "@holdfast/retirement";
import { afterAll, describe, expect, it } from "vitest";
import { holdSealed, SpilledRecord } from "../src/sealed.js";
import { ManifestSpill } from "../src/spill.js";

// docs/protocol.md §6.2: a sealed record past `spillAboveVersions` waits for the commits in
// the run's spill folder, so nothing in memory holds its body between its moves.

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const base = await mkdtemp(join(tmpdir(), "holdfast-sealed-"));
afterAll(() => rm(base, { recursive: true, force: true }));

function sealedHandle(etag: string): RetirementHandle {
  return {
    key: "_holdfast/retirement/main/r1.json",
    etag,
    record: {
      schema: 1,
      opId: "op",
      writerId: "w",
      owner: "o",
      branch: "main",
      state: "sealed",
      ownershipBoundMs: 60_000,
      versions: Array.from({ length: 1_000 }, (_, i) => ({
        version: i + 1,
        manifestEtag: `"etag-${i}"`,
        cancelled: false,
      })),
    },
  } as RetirementHandle;
}

describe("a sealed record waiting in the spill folder", () => {
  it("past spillAboveVersions goes to a file, and no handle it moved stays in memory", async () => {
    const ctx = createContext(new MemoryStore());
    const spill = new ManifestSpill(base, 500);
    const holding = await holdSealed(ctx, spill, new HeldRecord(ctx, sealedHandle("1")));
    expect(holding).toBeInstanceOf(SpilledRecord);
    const [folder] = await readdir(base);
    expect(await readdir(join(base, folder!))).toEqual(["1.record.json"]);

    // A move (as a renewal or the commit makes) whose answer the caller drops at once.
    const move = async () => {
      const moved = sealedHandle("2");
      const answered = await holding.update(async () => moved);
      expect(answered.etag).toBe("2");
      return new WeakRef(moved);
    };
    const gone = await move();
    for (let i = 0; i < 3; i += 1) {
      await new Promise((r) => setTimeout(r, 0));
      gc();
    }
    // Between its moves, the record's body is only in its file.
    expect(gone.deref(), "the moved handle is held in memory").toBeUndefined();
    // The next move reads the copy written back.
    expect((await holding.update(async (h) => h)).etag).toBe("2");
    await spill.remove();
  });

  it("within spillAboveVersions stays the HeldRecord it was", async () => {
    const ctx = createContext(new MemoryStore());
    const held = new HeldRecord(ctx, sealedHandle("1"));
    expect(await holdSealed(ctx, new ManifestSpill(base, 1_000), held)).toBe(held);
  });
});
