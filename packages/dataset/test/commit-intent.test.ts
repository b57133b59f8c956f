import { CountingStore, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import {
  COMMIT_INTENT_EXPIRED,
  COMMIT_INTENT_PREFIX,
  COMMIT_SOURCE_MISSING,
  commitVersion,
  FRESH_FILE_WINDOW_MS,
  initDataset,
  readManifest,
  writeDataFile,
} from "@holdfast/dataset";
import { headHintKey } from "@holdfast/dataset/internal";
import type { ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

function setup() {
  const time = new FakeTime(Date.UTC(2026, 5, 1));
  const memory = new MemoryStore({ clock: time });
  const counting = new CountingStore(memory);
  const ctx: ProtocolContext = {
    store: counting,
    clock: time,
    ids: seededIds(7),
    sleep: recordingSleep(),
  };
  return { time, memory, counting, ctx };
}

const bytes = (s: string) => new TextEncoder().encode(s);

describe("commit intents (docs/protocol.md §2.5)", () => {
  it("a commit of freshly written files sends no intent: it costs what a commit of no files costs", async () => {
    const { ctx, counting } = setup();
    await initDataset(ctx);
    await commitVersion(ctx, { branch: "main", files: [] });
    let before = counting.totalRequests();
    await commitVersion(ctx, { branch: "main", files: [] });
    const empty = counting.totalRequests() - before;
    const file = await writeDataFile(ctx, bytes("a"));
    before = counting.totalRequests();
    await commitVersion(ctx, { branch: "main", files: [file] });
    expect(counting.totalRequests() - before).toBe(empty);
    expect(counting.requestCounts().head).toBe(0);
  });

  it("a restore writes an intent, reads the records, HEADs source and files, commits, removes the intent", async () => {
    const { ctx, counting, memory } = setup();
    await initDataset(ctx);
    const a = await writeDataFile(ctx, bytes("a"));
    const b = await writeDataFile(ctx, bytes("b"));
    await commitVersion(ctx, { branch: "main", files: [a, b] });
    const { manifest } = await readManifest(ctx, "main", 1);
    const before = { ...counting.requestCounts() };
    const result = await commitVersion(ctx, {
      branch: "main",
      files: manifest.files,
      sources: [{ branch: "main", version: 1 }],
    });
    const after = counting.requestCounts();
    expect(result.version).toBe(2);
    // PUT intent, LIST records, HEAD source + 2 files, PUT manifest above the head hint,
    // PUT hint, DELETE intent (docs/protocol.md §2: no listing of the versions).
    expect({
      put: after.put - before.put,
      list: after.list - before.list,
      head: after.head - before.head,
      delete: after.delete - before.delete,
    }).toEqual({ put: 3, list: 1, head: 3, delete: 1 });
    expect(memory.keys().filter((k) => k.startsWith(COMMIT_INTENT_PREFIX))).toEqual([]);
  });

  it("a file written longer ago than the fresh window is covered like a reused one", async () => {
    const { ctx, time, memory } = setup();
    await initDataset(ctx);
    const a = await writeDataFile(ctx, bytes("a"));
    await time.advance(FRESH_FILE_WINDOW_MS);
    const store = new FaultStore(memory);
    await commitVersion({ ...ctx, store }, { branch: "main", files: [a] });
    expect(store.requests().map((r) => `${r.operation} ${r.key.split("/")[1]}`)).toContain(
      "put commits",
    );
  });

  it("a reused file that is gone refuses the commit (not-found COMMIT_SOURCE_MISSING), nothing committed", async () => {
    const { ctx, memory } = setup();
    await initDataset(ctx);
    const a = await writeDataFile(ctx, bytes("a"));
    await commitVersion(ctx, { branch: "main", files: [a] });
    await memory.delete(a.key);
    const error = await commitVersion(ctx, { branch: "main", files: [{ ...a }] }).catch((e) => e);
    expect(error.kind).toBe("not-found");
    expect(error.code).toBe(COMMIT_SOURCE_MISSING);
    expect(memory.keys().filter((k) => k.startsWith("_versions/"))).toHaveLength(1);
    expect(memory.keys().filter((k) => k.startsWith(COMMIT_INTENT_PREFIX))).toEqual([]);
  });

  it("a source version that is gone refuses the commit", async () => {
    const { ctx, memory } = setup();
    await initDataset(ctx);
    const a = await writeDataFile(ctx, bytes("a"));
    const error = await commitVersion(ctx, {
      branch: "main",
      files: [a],
      sources: [{ branch: "main", version: 9 }],
    }).catch((e) => e);
    expect(error.code).toBe(COMMIT_SOURCE_MISSING);
    expect(memory.keys().filter((k) => k.startsWith("_versions/"))).toEqual([]);
  });

  it("a commit that held its intent for half the bound does not send its manifest", async () => {
    const { ctx, time, memory } = setup();
    await initDataset(ctx);
    const a = await writeDataFile(ctx, bytes("a"));
    await commitVersion(ctx, { branch: "main", files: [a] });
    const slow = new FaultStore(memory);
    // The head hint's read stalls for 6 minutes on the writer's timer.
    slow.on(
      { operation: "get", key: headHintKey("main") },
      {
        type: "before",
        run: async () => time.advance(6 * 60_000),
      },
    );
    const error = await commitVersion(
      { ...ctx, store: slow },
      {
        branch: "main",
        files: [{ ...a }],
      },
    ).catch((e) => e);
    expect(error.kind).toBe("refused");
    expect(error.code).toBe(COMMIT_INTENT_EXPIRED);
    expect(memory.keys().filter((k) => k.startsWith("_versions/"))).toHaveLength(1);
  });

  it("rejects bad sources and a non-signal before any request", async () => {
    const { ctx, counting } = setup();
    const bad = [
      { branch: "main", files: [], sources: "main" },
      { branch: "main", files: [], sources: [null] },
      { branch: "main", files: [], sources: [{ branch: "../x", version: 1 }] },
      { branch: "main", files: [], signal: {} },
    ];
    for (const options of bad) {
      await expect(
        commitVersion(ctx, options as unknown as Parameters<typeof commitVersion>[1]),
      ).rejects.toMatchObject({ kind: "invalid-input" });
    }
    expect(counting.totalRequests()).toBe(0);
  });
});
