import { CountingStore } from "@holdfast/conditional-store";
import { initDataset } from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import {
  type FormatEntry,
  FormatRegistry,
  holdfastFormat,
  holdfastFormatEntry,
  type ResolvedFormat,
  UNKNOWN_FORMAT,
} from "../src/index.js";
import { commits, world } from "./support.js";

/** A format entry that recognises stores holding `other/marker` (no real layout). */
function otherEntry(): FormatEntry & { asked: number } {
  const resolved: ResolvedFormat = { name: "other", format: { ...holdfastFormat, name: "other" } };
  return {
    name: "other",
    asked: 0,
    async detect(ctx) {
      this.asked += 1;
      return (await ctx.store.head("other/marker")) !== null;
    },
    resolve: async () => resolved,
    open: async () => ({ resolved, defaultBranch: "main", datasetId: null }),
  };
}

describe("FormatRegistry (docs/lance.md: detection is shared)", () => {
  it("a store no registered entry recognises is the fallback's; holdfast's open reads its identity", async () => {
    const { ctx } = world();
    await commits(ctx, "main", 2);
    const other = otherEntry();
    const registry = new FormatRegistry(holdfastFormatEntry).register(other);
    expect(registry.names).toEqual(["holdfast", "other"]);
    expect((await registry.detect(ctx)).name).toBe("holdfast");
    const opened = await registry.open(ctx);
    expect(opened.resolved).toEqual({ name: "holdfast", format: holdfastFormat });
    expect(opened.defaultBranch).toBe("main");
    expect(opened.datasetId).toMatch(/^[0-9A-Z]{26}$/);
    expect(await opened.resolved.format.latestVersion(ctx, "main")).toBe(2);
    expect(other.asked).toBe(2);
  });

  it("a registered entry that recognises the store wins; a forced name skips detection", async () => {
    const { ctx, memory } = world();
    await memory.put("other/marker", new Uint8Array([1]));
    const other = otherEntry();
    const registry = new FormatRegistry(holdfastFormatEntry).register(other);
    expect((await registry.open(ctx)).resolved.name).toBe("other");
    const counting = new CountingStore(memory);
    const forced = await registry.resolve(createContext(counting), "holdfast");
    expect(forced.format).toBe(holdfastFormat);
    expect(counting.totalRequests()).toBe(0);
    expect(other.asked).toBe(1);
  });

  it("an unknown or duplicate name is refused (invalid-input UNKNOWN_FORMAT) before any request", async () => {
    const { memory } = world();
    const counting = new CountingStore(memory);
    const registry = new FormatRegistry(holdfastFormatEntry);
    await expect(registry.open(createContext(counting), "delta")).rejects.toMatchObject({
      kind: "invalid-input",
      code: UNKNOWN_FORMAT,
    });
    expect(() => registry.register(holdfastFormatEntry)).toThrow(
      expect.objectContaining({ kind: "invalid-input", code: UNKNOWN_FORMAT }),
    );
    expect(counting.totalRequests()).toBe(0);
  });

  it("holdfast's entry detects its marker; a store without one is not holdfast's", async () => {
    const { ctx, memory } = world();
    expect(await holdfastFormatEntry.detect(createContext(memory))).toBe(false);
    await initDataset(ctx);
    expect(await holdfastFormatEntry.detect(createContext(memory))).toBe(true);
  });

  it("opening holdfast's format on a store without its marker refuses: not-found, nothing written", async () => {
    const { memory } = world();
    await memory.put("_versions/1.manifest", new Uint8Array([1]));
    const registry = new FormatRegistry(holdfastFormatEntry);
    await expect(registry.open(createContext(memory))).rejects.toMatchObject({ kind: "not-found" });
    expect(memory.keys()).toEqual(["_versions/1.manifest"]);
  });
});
