import { CountingStore, isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { DELETE_STEP_VERSIONS } from "../src/delete.js";
import { cleanup } from "../src/index.js";
import { CrashStore, keysUnder, MINUTE, seedDataset, world } from "./helpers.js";

// Cleanup 9 delete (docs/protocol.md §6): a record is deleted DELETE_STEP_VERSIONS versions
// at a time, a version's data files before its manifest: until they are gone, the manifest
// tells a resumed run what is left to delete.

/** One batch delete: its keys, and the order in which it was sent and answered. */
interface Batch {
  readonly keys: readonly string[];
  readonly sent: number;
  answered: number;
}

/** Logs every batch delete with the sequence numbers of its start and its answer. */
class BatchLog extends CountingStore {
  readonly batches: Batch[] = [];
  #tick = 0;

  override async deleteMany(
    keys: readonly string[],
    options?: Parameters<ObjectStore["deleteMany"]>[1],
  ) {
    const batch: Batch = { keys: [...keys], sent: ++this.#tick, answered: 0 };
    this.batches.push(batch);
    // Answered on a later turn of the event loop, as a real store's request is.
    await new Promise((resume) => setImmediate(resume));
    try {
      return await super.deleteMany(keys, options);
    } finally {
      batch.answered = ++this.#tick;
    }
  }
}

describe("Cleanup 9 delete: steps of a record", () => {
  it("a record of 2.5 steps: every manifest's batch is sent after the batch holding its version's data file has answered", async () => {
    const { ctx, time, store, on } = world(11);
    const versions = Math.floor(DELETE_STEP_VERSIONS * 2.5) + 1;
    await seedDataset(ctx, time, { versions, filesPer: 1 });
    // Each version's data file, by the manifest that names it (read before the run).
    const fileOf = new Map<string, string>();
    for (const key of keysUnder(store, "_versions/main/")) {
      const manifest = JSON.parse(new TextDecoder().decode((await store.get(key))!.body)) as {
        files: { key: string }[];
      };
      fileOf.set(key, manifest.files[0]!.key);
    }
    const log = new BatchLog(store);
    const stats = await cleanup(on(log), { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.objectsDeleted.manifests).toBe(versions - 1);
    expect(stats.objectsDeleted.dataFiles).toBe(versions - 1);
    const answeredFor = new Map<string, number>();
    for (const batch of log.batches)
      for (const key of batch.keys) answeredFor.set(key, batch.answered);
    const manifestBatches = log.batches.filter((b) => b.keys[0]!.startsWith("_versions/"));
    expect(manifestBatches.length).toBe(3);
    for (const batch of manifestBatches) {
      for (const key of batch.keys) {
        const file = fileOf.get(key)!;
        expect(answeredFor.get(file), `${file} deleted`).toBeDefined();
        expect(answeredFor.get(file)!, `${key} sent after its data file`).toBeLessThan(batch.sent);
      }
    }
    expect(keysUnder(store, "_versions/main/")).toHaveLength(1);
  });
});

/**
 * Holds each manifest batch's answer until a later data batch has been sent, or for at
 * most `turns` turns of the event loop, and notes which of the two released it.
 */
class HeldManifests extends CountingStore {
  readonly released: ("by a later data batch" | "by the turn bound")[] = [];
  readonly #waiting: (() => void)[] = [];

  constructor(
    inner: ObjectStore,
    private readonly turns: number,
  ) {
    super(inner);
  }

  override async deleteMany(
    keys: readonly string[],
    options?: Parameters<ObjectStore["deleteMany"]>[1],
  ) {
    if (!keys[0]!.startsWith("_versions/")) {
      for (const release of this.#waiting.splice(0)) release();
      return super.deleteMany(keys, options);
    }
    let released = false;
    this.#waiting.push(() => {
      released = true;
    });
    for (let turn = 0; turn < this.turns && !released; turn += 1) {
      await new Promise((resume) => setImmediate(resume));
    }
    this.released.push(released ? "by a later data batch" : "by the turn bound");
    return super.deleteMany(keys, options);
  }
}

describe("Cleanup 9 delete: a step's manifests go while the next step's data files do", () => {
  it("each manifest batch but the last is still unanswered when the next step's data batch is sent", async () => {
    const { ctx, time, store, on } = world(12);
    const versions = Math.floor(DELETE_STEP_VERSIONS * 2.5) + 1;
    await seedDataset(ctx, time, { versions, filesPer: 1 });
    const held = new HeldManifests(store, 10_000);
    const stats = await cleanup(on(held), { retainVersions: 1 }, { format: holdfastFormat });
    expect(stats.objectsDeleted.manifests).toBe(versions - 1);
    expect(stats.objectsDeleted.dataFiles).toBe(versions - 1);
    // Three steps: the first two steps' manifests overlap the next step's data files; the
    // last step's have no next step and wait out the bound.
    expect(held.released).toEqual([
      "by a later data batch",
      "by a later data batch",
      "by the turn bound",
    ]);
    expect(keysUnder(store, "_versions/main/")).toHaveLength(1);
  });
});

/**
 * Holds every manifest batch for `turns` turns of the event loop and counts the batch
 * deletes not yet answered; fails the get of one manifest.
 */
class SlowManifestsFailingGet extends CountingStore {
  inFlight = 0;

  constructor(
    inner: ObjectStore,
    private readonly failing: string,
    private readonly turns: number,
  ) {
    super(inner);
  }

  override async get(key: string, options?: Parameters<ObjectStore["get"]>[1]) {
    if (key === this.failing) throw new Error(`get ${key} failed (test)`);
    return super.get(key, options);
  }

  override async deleteMany(
    keys: readonly string[],
    options?: Parameters<ObjectStore["deleteMany"]>[1],
  ) {
    this.inFlight += 1;
    try {
      if (keys[0]!.startsWith("_versions/")) {
        for (let turn = 0; turn < this.turns; turn += 1) {
          await new Promise((resume) => setImmediate(resume));
        }
      }
      return await super.deleteMany(keys, options);
    } finally {
      this.inFlight -= 1;
    }
  }
}

describe("Cleanup 9 delete: no batch delete outlives the call", () => {
  it("a step whose manifest read fails rejects only once the last step's manifests have answered", async () => {
    const { ctx, time, store, on } = world(13);
    const versions = Math.floor(DELETE_STEP_VERSIONS * 1.5) + 1;
    await seedDataset(ctx, time, { versions, filesPer: 1 });
    // A first run dies at its first batch delete: its record is committed and marked, and
    // the next run reads its manifests step by step.
    const crashing = new CrashStore(store, (op) => op === "deleteMany", false);
    const crash = await cleanup(on(crashing), { retainVersions: 1 }, { format: holdfastFormat })
      .then(() => null)
      .catch((e: unknown) => e);
    expect(isHoldfastError(crash, "refused")).toBe(true);
    expect(crashing.crashed).toBe(true);
    await time.advance(16 * MINUTE);
    // The second step's first manifest cannot be read while the first step's are deleted.
    const second = keysUnder(store, "_versions/main/")[DELETE_STEP_VERSIONS]!;
    const slow = new SlowManifestsFailingGet(store, second, 200);
    const error = await cleanup(on(slow), { retainVersions: 1 }, { format: holdfastFormat }).catch(
      (e: unknown) => e,
    );
    expect(isHoldfastError(error) || error instanceof Error).toBe(true);
    expect(String(error)).toContain(second);
    expect(slow.inFlight).toBe(0);
    // The first step is gone, the second (from the failed read on) is left for a resume.
    expect(keysUnder(store, "_versions/main/")[0]).toBe(second);
  });
});
