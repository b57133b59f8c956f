import { CountingStore, listAll, MemoryStore } from "@holdfast/conditional-store";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { lanceManifestKey, openLanceFormat } from "../src/index.js";
import { ListedVersions } from "../src/listed-versions.js";

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

  it("every entry carries the listed key, ETag, Last-Modified and size (V2 and V1)", async () => {
    for (const naming of ["v2", "v1"] as const) {
      const t = await table(naming);
      // One manifest rewritten: another ETag, size and stamp than its neighbours.
      await t.counting.inner.put(
        lanceManifestKey(naming, 7),
        new TextEncoder().encode("longer body"),
      );
      const listedMeta = new Map<string, { etag: string; size: number; lastModified: number }>();
      for await (const meta of listAll(t.counting.inner, "_versions/")) {
        listedMeta.set(meta.key, {
          etag: meta.etag,
          size: meta.size,
          lastModified: meta.lastModified.getTime(),
        });
      }
      const entries = [];
      for await (const entry of t.format.listVersions(t.ctx, "main")) entries.push(entry);
      expect(entries.map((e) => e.version)).toEqual(span(1, VERSIONS));
      for (const entry of entries) {
        expect(entry.branch).toBe("main");
        expect(entry.key).toBe(lanceManifestKey(naming, entry.version));
        expect({
          etag: entry.etag,
          size: entry.size,
          lastModified: entry.lastModified.getTime(),
        }).toEqual(listedMeta.get(entry.key));
      }
      expect(entries[6]!.size).toBe("longer body".length);
      expect(await t.format.latestVersion(t.ctx, "main")).toBe(VERSIONS);
    }
  });
});

describe("ListedVersions", () => {
  const add = (list: ListedVersions, versions: readonly number[]) => {
    for (const v of versions) list.add(v, `etag-${v}`, new Date(1_000 * v), v * 10);
  };
  const seen = (list: ListedVersions) =>
    [...list].map((e) => [e.version, e.etag, e.lastModified.getTime(), e.size, e.key]);
  const expected = (versions: readonly number[], naming: "v1" | "v2") =>
    versions.map((v) => [v, `etag-${v}`, 1_000 * v, v * 10, lanceManifestKey(naming, v)]);

  it("arranges newest-first (V2 listing), ascending and unordered (V1 listing) input ascending", () => {
    const newestFirst = new ListedVersions("main", "", "v2");
    add(newestFirst, [9, 8, 5, 3, 2]);
    expect(seen(newestFirst.arrange())).toEqual(expected([2, 3, 5, 8, 9], "v2"));
    const ascendingInput = new ListedVersions("main", "", "v2");
    add(ascendingInput, [1, 2, 3]);
    expect(seen(ascendingInput.arrange())).toEqual(expected([1, 2, 3], "v2"));
    // V1 names list in text order: 1, 10, 100, 11, ..., 2, 20, ...
    const textOrder = Array.from({ length: 120 }, (_, i) => i + 1).sort((a, b) =>
      String(a).localeCompare(String(b)),
    );
    const unordered = new ListedVersions("main", "", "v1");
    add(unordered, textOrder);
    const all = Array.from({ length: 120 }, (_, i) => i + 1);
    expect(seen(unordered.arrange())).toEqual(expected(all, "v1"));
    const ranged = new ListedVersions("main", "", "v1");
    add(ranged, textOrder);
    expect(seen(ranged.arrange({ from: 15, to: 31 }))).toEqual(expected(span(15, 31), "v1"));
    const none = new ListedVersions("main", "", "v2");
    expect(none.arrange().length).toBe(0);
    expect(none.at(-1)).toBeUndefined();
  });

  it("at(-1) is the newest version; keys are under the branch's root", () => {
    const list = new ListedVersions("b", "tree/b/", "v2");
    add(list, [30, 20, 10]);
    list.arrange();
    expect(list.at(-1)?.version).toBe(30);
    expect(list.at(0)?.key).toBe(`tree/b/${lanceManifestKey("v2", 10)}`);
  });
});
