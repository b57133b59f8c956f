import { CountingStore, MemoryStore } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { lanceManifestKey, openLanceFormat } from "../src/index.js";

/**
 * A listing of some of a branch's versions (`DatasetFormat.listVersions` with a range, what a
 * cleanup's finalize asks for one record; docs/lance.md, "What holdfast reads"): V2 names sort
 * newest first, so the versions from..to are one run of keys and only those pages are listed.
 * V1 names do not sort by version: the whole folder is listed and the range filtered.
 * Only names are listed here (no manifest is read), so the folder holds named placeholders.
 */
const PAGE = 10;
const VERSIONS = 100;

async function table(naming: "v1" | "v2") {
  const store = new MemoryStore({ pageSize: PAGE });
  const body = new TextEncoder().encode("placeholder");
  for (let v = 1; v <= VERSIONS; v += 1) await store.put(lanceManifestKey(naming, v), body);
  // What else `_versions/` holds: a staging leftover (sorts first) and the hint (last).
  await store.put("_versions/.tmp_1.manifest_1", body);
  await store.put("_versions/latest_version_hint.json", body);
  const counting = new CountingStore(store);
  const ctx = createContext(counting);
  const format = await openLanceFormat(ctx);
  return { counting, ctx, format };
}

async function listed(
  t: Awaited<ReturnType<typeof table>>,
  range?: { from: number; to: number },
): Promise<{ versions: number[]; lists: number }> {
  t.counting.resetCounts();
  const versions: number[] = [];
  for await (const entry of t.format.listVersions(t.ctx, "main", range)) {
    versions.push(entry.version);
  }
  return { versions, lists: t.counting.requestCounts().list };
}

const span = (from: number, to: number) =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

describe("Lance listVersions of a range", () => {
  it("V2: exactly the versions of the range, listing only the pages that hold them", async () => {
    const t = await table("v2");
    const whole = await listed(t);
    expect(whole.versions).toEqual(span(1, VERSIONS));
    expect(whole.lists).toBe(Math.ceil((VERSIONS + 2) / PAGE));
    for (const [from, to] of [
      [1, 10],
      [41, 60],
      [91, 100],
      [1, VERSIONS],
      [50, 50],
      [95, 120],
      [101, 200],
    ] as const) {
      const got = await listed(t, { from, to });
      expect(got.versions, `${from}..${to}`).toEqual(span(from, Math.min(to, VERSIONS)));
      // The pages from the newest version's key to the oldest's: one more when the run
      // does not start on a page boundary.
      const inRange = Math.max(0, Math.min(to, VERSIONS) - from + 1);
      expect(got.lists, `${from}..${to}`).toBeLessThanOrEqual(Math.ceil(inRange / PAGE) + 1);
    }
    // A record of the oldest 10 versions of 100: 2 LIST pages, not the folder's 11.
    expect((await listed(t, { from: 1, to: 10 })).lists).toBeLessThanOrEqual(2);
  });

  it("V1: the whole folder is listed (names do not sort by version), the range filtered", async () => {
    const t = await table("v1");
    const got = await listed(t, { from: 41, to: 60 });
    expect(got.versions).toEqual(span(41, 60));
    expect(got.lists).toBe(Math.ceil((VERSIONS + 2) / PAGE));
  });

  it("presentManifests lists the range of the versions asked for (V2)", async () => {
    const t = await table("v2");
    await t.counting.inner.delete(lanceManifestKey("v2", 5));
    t.counting.resetCounts();
    const present = await t.format.presentManifests(t.ctx, "main", [3, 4, 5, 6, 7]);
    expect([...present].sort((a, b) => a - b)).toEqual([3, 4, 6, 7]);
    expect(t.counting.requestCounts().list).toBeLessThanOrEqual(2);
  });
});
