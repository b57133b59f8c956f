import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MemoryStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { manifestKey } from "@holdfast/dataset";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterEach, describe, expect, it } from "vitest";
import { type CleanupProgress, cleanup } from "../src/index.js";
import { ManifestSpill, type SpilledVersion } from "../src/spill.js";
import { keysUnder, seedDataset, versionsOf, world } from "./helpers.js";

// docs/protocol.md §6.1 and §6.2: the manifests a run
// reads before its first drain wait in memory up to options.spillAboveVersions versions,
// beyond it in a spill folder (options.spillDir) until their deletion; the folder is
// removed when the run ends, failed, aborted or not, and the deletion still compares each
// manifest's ETag with the record (RETIRED_MANIFEST_REWRITTEN). These tests force the
// spill (spillAboveVersions: 0) on the real filesystem; spill-local.test.ts compares it
// with the in-memory path on a real local store.

const RECORDS = "_holdfast/retirement/";
const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function spillRoot(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), "holdfast-spill-test-"));
  roots.push(root);
  return root;
}

/**
 * The manifest spill files (`<run folder>/<n>.jsonl`) under a root, read synchronously (from
 * `onProgress`); sealed records waiting for the commits (`<n>.record.json`) are not counted.
 */
function spillFiles(root: string): string[] {
  return readdirSync(root).flatMap((run) =>
    readdirSync(join(root, run))
      .filter((file) => file.endsWith(".jsonl"))
      .map((file) => join(root, run, file)),
  );
}

/** Calls `at` once, when the `delete` phase starts: after every commit and the last look. */
function atDeleteStart(at: () => void) {
  let done = false;
  return (p: CleanupProgress) => {
    if (p.phase !== "delete" || done) return;
    done = true;
    at();
  };
}

async function replace(store: MemoryStore, key: string) {
  const body = (await store.get(key))!.body;
  await store.delete(key);
  await store.put(key, body);
}

describe("the manifest spill", () => {
  it("holds every retired manifest (one file per record) until the deletion, and is removed after the run", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 25, filesPer: 2 });
    const root = await spillRoot();
    const seen: { version: number; files: number }[][] = [];
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        maxVersionsPerRecord: 10,
        onProgress: atDeleteStart(() => {
          for (const file of spillFiles(root).sort()) {
            const lines = readFileSync(file, "utf8").trim().split("\n");
            seen.push(
              lines.map((l) => {
                const line = JSON.parse(l) as { v: number; f: unknown[] };
                return { version: line.v, files: line.f.length };
              }),
            );
          }
        }),
      },
    );
    // Three records (10 + 10 + 4 candidates), each spilled in ascending order, 2 files a version.
    expect(seen.map((lines) => lines.map((l) => l.version))).toEqual([
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      [11, 12, 13, 14, 15, 16, 17, 18, 19, 20],
      [21, 22, 23, 24],
    ]);
    expect(seen.flat().every((l) => l.files === 2)).toBe(true);
    expect(stats.objectsDeleted).toMatchObject({ manifests: 24, dataFiles: 48 });
    expect(versionsOf(store)).toEqual([25]);
    // The run's folder is gone; only the caller's root is left, empty.
    expect(await readdir(root)).toEqual([]);
  });

  it("is removed after a run that fails after its commits (a batch delete refused)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 12, filesPer: 1 });
    const root = await spillRoot();
    let during: string[] = [];
    const fault = new FaultStore(store).on(
      { operation: "deleteMany", times: Number.POSITIVE_INFINITY },
      { type: "refuse" },
    );
    const error = await cleanup(
      { ...ctx, store: fault },
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        maxVersionsPerRecord: 5,
        onProgress: atDeleteStart(() => {
          during = spillFiles(root);
        }),
      },
    ).catch((e) => e);
    expect(error).toMatchObject({ kind: "refused" });
    expect(during).toHaveLength(3);
    expect(keysUnder(store, RECORDS)).toHaveLength(3); // committed, for the next run
    expect(await readdir(root)).toEqual([]);
  });

  it("is removed after a run refused before its first drain (a malformed manifest read after earlier records were spilled)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 12, filesPer: 1 });
    const root = await spillRoot();
    // The 12th manifest (the latest, read last) is refused by the format.
    await store.delete(manifestKey("main", 12));
    await store.put(manifestKey("main", 12), new TextEncoder().encode("not a manifest"));
    const error = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      { format: holdfastFormat, spillDir: root, spillAboveVersions: 0, maxVersionsPerRecord: 5 },
    ).catch((e) => e);
    expect(error).toMatchObject({ kind: "invalid-input" });
    expect(keysUnder(store, RECORDS)).toEqual([]);
    expect(await readdir(root)).toEqual([]);
  });

  it("RETIRED_MANIFEST_REWRITTEN: a spilled manifest whose ETag is not the record's stops the deletion before any delete of its step", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const root = await spillRoot();
    const data = keysUnder(store, "data/");
    // After the last look, before the deletion: version 2's spilled manifest names another
    // ETag than the one its record names (a rewritten manifest, as the deletion would meet it).
    const error = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        onProgress: atDeleteStart(() => {
          const [file] = spillFiles(root);
          const lines = readFileSync(file!, "utf8").trim().split("\n");
          const rewritten = lines.map((l) => {
            const line = JSON.parse(l) as { v: number; e: string };
            return JSON.stringify(line.v === 2 ? { ...line, e: `${line.e}-rewritten` } : line);
          });
          writeFileSync(file!, `${rewritten.join("\n")}\n`);
        }),
      },
    ).catch((e) => e);
    expect(error).toMatchObject({
      kind: "refused",
      code: "RETIRED_MANIFEST_REWRITTEN",
      key: manifestKey("main", 2),
    });
    // Nothing of the step was deleted; the record stays committed (and marked) for the next run.
    expect(keysUnder(store, "data/")).toEqual(data);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    const [recordKey] = keysUnder(store, RECORDS);
    const record = JSON.parse(new TextDecoder().decode((await store.get(recordKey!))!.body));
    expect(record.state).toBe("committed");
    expect(typeof record.deletionStartedAt).toBe("string");
    expect(await readdir(root)).toEqual([]);
  });

  it("a spill gone before the deletion: each manifest is read again and ETag-checked; one rewritten since the last look stops it (RETIRED_MANIFEST_REWRITTEN)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const root = await spillRoot();
    const data = keysUnder(store, "data/");
    const key2 = manifestKey("main", 2);
    // The second read of version 2 is the deletion's (the first was before the drain):
    // a foreign writer replaces the manifest just before it.
    const fault = new FaultStore(store).on(
      { operation: "get", key: key2, nth: 2 },
      { type: "before", run: (inner) => replace(inner as MemoryStore, key2) },
    );
    const error = await cleanup(
      { ...ctx, store: fault },
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        onProgress: atDeleteStart(() => {
          for (const run of readdirSync(root)) rmSync(join(root, run), { recursive: true });
        }),
      },
    ).catch((e) => e);
    expect(error).toMatchObject({ code: "RETIRED_MANIFEST_REWRITTEN", key: key2 });
    expect(keysUnder(store, "data/")).toEqual(data);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    expect(keysUnder(store, RECORDS)).toHaveLength(1);
  });

  it("a spill gone before the deletion, nothing rewritten: the deletion reads each manifest again and finishes", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const root = await spillRoot();
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        onProgress: atDeleteStart(() => {
          for (const run of readdirSync(root)) rmSync(join(root, run), { recursive: true });
        }),
      },
    );
    expect(stats.objectsDeleted).toMatchObject({ manifests: 4, dataFiles: 4 });
    expect(versionsOf(store)).toEqual([5]);
    expect(keysUnder(store, RECORDS)).toEqual([]);
  });

  it("MANIFEST_SPILL_LOST: a spill gone before the first drain stops the run before any retirement write (no version is judged without its manifest)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const root = await spillRoot();
    const data = keysUnder(store, "data/");
    // One read at a time: both records (1-2, 3-4) are spilled before the latest is read.
    const fault = new FaultStore(store).on(
      { operation: "get", key: manifestKey("main", 5) },
      {
        type: "before",
        run: async () => {
          for (const run of readdirSync(root)) rmSync(join(root, run), { recursive: true });
        },
      },
    );
    const error = await cleanup(
      { ...ctx, store: fault },
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        maxVersionsPerRecord: 2,
        concurrency: 1,
      },
    ).catch((e) => e);
    expect(error).toMatchObject({ kind: "not-found", code: "MANIFEST_SPILL_LOST" });
    expect(fault.requests().some((r) => r.operation === "put" && r.key.startsWith(RECORDS))).toBe(
      false,
    );
    expect(keysUnder(store, "data/")).toEqual(data);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
  });

  it("is private to the run: a folder of its own (mode 0700, unique name) holding files of mode 0600", async () => {
    const { ctx, time } = world();
    await seedDataset(ctx, time, { versions: 12, filesPer: 1 });
    const root = await spillRoot();
    const seen: { folder: string; folderMode: number; fileModes: number[] }[] = [];
    const look = () => {
      for (const run of readdirSync(root)) {
        const folder = join(root, run);
        seen.push({
          folder: run,
          folderMode: statSync(folder).mode & 0o777,
          fileModes: readdirSync(folder).map((f) => statSync(join(folder, f)).mode & 0o777),
        });
      }
    };
    for (let i = 0; i < 2; i += 1) {
      await seedDataset(ctx, time, { versions: 6, filesPer: 1 });
      await cleanup(
        ctx,
        { retainVersions: 1, minVersionAgeMs: 0 },
        {
          format: holdfastFormat,
          spillDir: root,
          spillAboveVersions: 0,
          maxVersionsPerRecord: 5,
          onProgress: atDeleteStart(look),
        },
      );
    }
    expect(seen).toHaveLength(2);
    for (const run of seen) {
      expect(run.folder).toMatch(/^holdfast-cleanup-/);
      expect(run.folderMode).toBe(0o700);
      expect(run.fileModes.length).toBeGreaterThan(0);
      expect(run.fileModes.every((m) => m === 0o600)).toBe(true);
    }
    expect(seen[0]!.folder).not.toBe(seen[1]!.folder);
    expect(await readdir(root)).toEqual([]);
  });

  it.each([
    ["the reads (retire phase)", (p: CleanupProgress) => p.phase === "retire"],
    ["the deletion", (p: CleanupProgress) => p.phase === "delete"],
  ])("is removed after a run aborted during %s (CLEANUP_INTERRUPTED)", async (_, when) => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 30, filesPer: 1 });
    const root = await spillRoot();
    const abort = new AbortController();
    let during: string[] = [];
    const error = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 0,
        maxVersionsPerRecord: 5,
        signal: abort.signal,
        onProgress: (p) => {
          if (abort.signal.aborted || !when(p)) return;
          during = spillFiles(root);
          if (during.length > 0) abort.abort(new Error("stop"));
        },
      },
    ).catch((e) => e);
    expect(error).toMatchObject({ kind: "aborted", code: "CLEANUP_INTERRUPTED" });
    expect(during.length).toBeGreaterThan(0);
    expect(await readdir(root)).toEqual([]);
    // Nothing retained was lost.
    expect(versionsOf(store)).toContain(30);
  });

  it("below spillAboveVersions the run touches no disk: the manifests stay in memory (the default threshold)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 25, filesPer: 2 });
    const root = await spillRoot();
    const folders = new Set<string>();
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        maxVersionsPerRecord: 10,
        onProgress: () => {
          for (const run of readdirSync(root)) folders.add(run);
        },
      },
    );
    expect(folders).toEqual(new Set());
    expect(stats.objectsDeleted).toMatchObject({ manifests: 24, dataFiles: 48 });
    expect(versionsOf(store)).toEqual([25]);
  });

  it("spills only the records that would take the versions held in memory past spillAboveVersions", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 25, filesPer: 2 });
    const root = await spillRoot();
    let spilled: number[][] = [];
    await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      {
        format: holdfastFormat,
        spillDir: root,
        spillAboveVersions: 15,
        maxVersionsPerRecord: 10,
        onProgress: atDeleteStart(() => {
          spilled = spillFiles(root)
            .sort()
            .map((file) =>
              readFileSync(file, "utf8")
                .trim()
                .split("\n")
                .map((l) => (JSON.parse(l) as { v: number }).v),
            );
        }),
      },
    );
    // Records of 10, 10 and 4: the first is held in memory (10 <= 15), the second would
    // pass 15 and is spilled, the third still fits beside the first (14 <= 15).
    expect(spilled).toEqual([[11, 12, 13, 14, 15, 16, 17, 18, 19, 20]]);
    expect(versionsOf(store)).toEqual([25]);
    expect(await readdir(root)).toEqual([]);
  });

  it.each([-1, 1.5, "10", Number.NaN])(
    "spillAboveVersions %s is refused before any request (INVALID_OPTION)",
    async (value) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 2, filesPer: 1 });
      const fault = new FaultStore(store);
      await expect(
        cleanup(
          { ...ctx, store: fault },
          { retainVersions: 1 },
          { format: holdfastFormat, spillAboveVersions: value as number },
        ),
      ).rejects.toMatchObject({ kind: "invalid-input", code: "INVALID_OPTION" });
      expect(fault.requests()).toEqual([]);
    },
  );

  it("a record that goes to a file is serialized before write returns: its objects are the caller's again while the file is written", async () => {
    // docs/protocol.md §6.2: a run whose read tasks all wait on spill writes holds their
    // lines, not their manifests. A change made to the objects once write has returned is
    // not in the file, so the spill no longer needs (or holds) them.
    const root = await spillRoot();
    const spill = new ManifestSpill(root, 0);
    const files = [{ key: "data/1.lance", size: 10 }];
    const versions: SpilledVersion[] = [
      { version: 1, listedEtag: "e1", manifest: { etag: "e1", files } },
      { version: 2, listedEtag: "e2", manifest: null },
    ];
    const written = spill.write(versions);
    files.push({ key: "data/late.lance", size: 20 });
    versions.push({ version: 3, listedEtag: "e3", manifest: null });
    const manifests = await written;
    const back: SpilledVersion[] = [];
    for await (const v of manifests.versions()) back.push(v);
    expect(back).toEqual([
      {
        version: 1,
        listedEtag: "e1",
        manifest: { etag: "e1", files: [{ key: "data/1.lance", size: 10 }] },
      },
      { version: 2, listedEtag: "e2", manifest: null },
    ]);
    expect(manifests.files).toBe(1);
    await spill.remove();
    expect(await readdir(root)).toEqual([]);
  });

  it("a spillDir that is not a non-empty string is refused before any request (INVALID_OPTION)", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 2, filesPer: 1 });
    const fault = new FaultStore(store);
    await expect(
      cleanup(
        { ...ctx, store: fault },
        { retainVersions: 1 },
        { format: holdfastFormat, spillDir: "" },
      ),
    ).rejects.toMatchObject({ kind: "invalid-input", code: "INVALID_OPTION" });
    expect(fault.requests()).toEqual([]);
  });
});
