import { CountingStore, MemoryStore } from "@holdfast/conditional-store";
import {
  commitVersion,
  initDataset,
  NOT_A_HOLDFAST_DATASET,
  NotAHoldfastDatasetError,
  openDataset,
  requireHoldfastDataset,
} from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

const bytes = (s: string) => new TextEncoder().encode(s);

// docs/protocol.md §1.1.
describe("requireHoldfastDataset", () => {
  const fills: [string, (s: MemoryStore) => Promise<void>][] = [
    ["empty", async () => {}],
    ["other", async (s) => void (await s.put("notes.txt", bytes("x")))],
    ["lance", async (s) => void (await s.put("_versions/1.manifest", bytes("x")))],
    [
      "holdfast-without-marker",
      async (s) => void (await commitVersion(createContext(s), { branch: "main", files: [] })),
    ],
  ];
  it.each(fills)(
    "invariant 6: a store without the marker is refused, saying what it holds (%s); nothing is written",
    async (found, fill) => {
      const memory = new MemoryStore();
      await fill(memory);
      const keys = memory.keys();
      const counting = new CountingStore(memory);
      const error = await requireHoldfastDataset(createContext(counting), "cleanup").catch(
        (e) => e,
      );
      expect(error).toBeInstanceOf(NotAHoldfastDatasetError);
      expect(error).toMatchObject({
        kind: "invalid-input",
        code: NOT_A_HOLDFAST_DATASET,
        operation: "cleanup",
        key: "_holdfast/dataset.json",
        found,
      });
      expect(error.toJSON()).toMatchObject({ found });
      expect(counting.requestCounts()).toMatchObject({ put: 0, delete: 0, deleteMany: 0 });
      expect(memory.keys()).toEqual(keys);
    },
  );

  it("costs one HEAD per store object; init and open mark the store they used", async () => {
    const memory = new MemoryStore();
    await initDataset(createContext(memory));
    const counting = new CountingStore(memory);
    const ctx = createContext(counting);
    await requireHoldfastDataset(ctx, "a");
    await requireHoldfastDataset(ctx, "b");
    expect(counting.totalRequests()).toBe(1);
    const opened = new CountingStore(memory);
    await openDataset(createContext(opened));
    await requireHoldfastDataset(createContext(opened), "c");
    expect(opened.requestCounts()).toMatchObject({ get: 1, head: 0 });
  });
});
