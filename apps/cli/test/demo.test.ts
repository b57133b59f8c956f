import { cleanup } from "@holdfast/cleanup";
import { MemoryStore } from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterEach, describe, expect, it } from "vitest";
import { ReadPacedStore } from "../src/commands/demo-reader.js";

/** A reader that reads on its own slow timer, as the demo's reader process does. */
function slowReader(everyMs: number) {
  let reads = 0;
  const waiting: ((read: boolean) => void)[] = [];
  const timer = setInterval(() => {
    reads += 1;
    for (const wake of waiting.splice(0)) wake(true);
  }, everyMs);
  return {
    reads: () => reads,
    nextRead: (timeoutMs: number) =>
      new Promise<boolean>((resolve) => {
        waiting.push(resolve);
        setTimeout(() => resolve(false), timeoutMs);
      }),
    stop: () => clearInterval(timer),
  };
}

describe("demo: the reader reads through the cleanup", () => {
  const stops: (() => void)[] = [];
  afterEach(() => {
    for (const stop of stops.splice(0)) stop();
  });

  it("D1 a cleanup faster than the reader's pause still sees reads during it: it waits for one before each batch delete", async () => {
    const ctx = createContext(new MemoryStore());
    await initDataset(ctx);
    for (let v = 1; v <= 6; v++) {
      const file = await writeDataFile(ctx, new TextEncoder().encode(`v${v}`));
      await commitVersion(ctx, { branch: "main", files: [file] });
    }
    const reader = slowReader(1500);
    stops.push(reader.stop);
    // Start right after a read: the next one is a whole pause away, longer than this cleanup takes.
    await reader.nextRead(5000);
    const before = reader.reads();
    const paced = { ...ctx, store: new ReadPacedStore(ctx.store, () => reader.nextRead(5000)) };
    const stats = await cleanup(
      paced,
      { retainVersions: 1, minVersionAgeMs: 0 },
      { format: holdfastFormat },
    );
    expect(stats.retired.length).toBe(5);
    expect(reader.reads() - before).toBeGreaterThan(0);
  });
});
