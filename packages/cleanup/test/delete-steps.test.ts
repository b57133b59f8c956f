import { CountingStore, type ObjectStore } from "@holdfast/conditional-store";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import { DELETE_STEP_VERSIONS } from "../src/delete.js";
import { cleanup } from "../src/index.js";
import { keysUnder, seedDataset, world } from "./helpers.js";

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
