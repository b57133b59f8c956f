// The shared contract suite every holdfast ObjectStore backend must pass (see this package's README).
import { batches, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { afterEach, beforeEach, describe } from "vitest";
import { describeBasics } from "./basics.js";
import { describeAbortSignals, describePartialDelete } from "./cancellation.js";
import { describeKeysAndTimes } from "./keys.js";
import { describePreconditions } from "./preconditions.js";
import { describeResolver } from "./resolver.js";
import type { ObjectStoreContractOptions } from "./settings.js";

export type { ArrangeDeleteFailure, UndoDeleteFailure } from "./cancellation.js";
export {
  describeRepeatedRequestContract,
  type RepeatedRequestContractOptions,
  type RepeatedWrite,
  type RepeatingStoreHarness,
} from "./repeated.js";
export type { ObjectStoreContractOptions } from "./settings.js";

/**
 * Registers the shared backend contract suite (vitest `describe`) for one store
 * configuration: round trips, pagination, preconditions, races with exactly one winner,
 * batch delete, ETags, Last-Modified, key validation and the resolver on the real store.
 */
export function describeObjectStoreContract(
  name: string,
  options: ObjectStoreContractOptions,
): void {
  const settings = {
    rounds: options.concurrencyRounds ?? 20,
    loserKinds: options.raceLoserKinds ?? ["conflict", "in-flight"],
    tolerance: options.clockToleranceMs ?? 250,
    manyKeys: options.manyKeys ?? 1100,
    writeConcurrency: options.writeConcurrency ?? 16,
    largeBytes: options.largeObjectBytes ?? 8 * 1024 * 1024,
    slow: options.slowTestTimeoutMs ?? 120_000,
    capabilities: options.capabilities,
    arrangeDeleteFailure: options.arrangeDeleteFailure,
  };
  const cleanup = options.cleanup ?? deleteEverything;

  describe(`object store contract: ${name}`, () => {
    let store: ObjectStore;
    let created: ObjectStore | undefined;
    const current = () => store;

    beforeEach(async () => {
      created = await options.create();
      store = created;
    });

    // Emptying the store after the 1,100-key listing test takes many requests; on a
    // loaded machine that outlasts vitest's 10 s hook default.
    afterEach(async () => {
      if (created !== undefined) await cleanup(created);
      created = undefined;
    }, settings.slow);

    describeBasics(current, settings);
    describePreconditions(current, settings);
    describePartialDelete(current, settings.arrangeDeleteFailure);
    describeAbortSignals(current);
    describeKeysAndTimes(current, settings);
    describeResolver(current);
  });
}

/** The default cleanup: delete every object the store lists, in declared batch sizes. */
async function deleteEverything(store: ObjectStore): Promise<void> {
  const keys: string[] = [];
  for await (const meta of listAll(store, "")) keys.push(meta.key);
  for (const batch of batches(keys, store.capabilities.maxBatchDelete)) {
    const result = await store.deleteMany(batch);
    if (result.failed.length > 0) throw result.failed[0]!.error;
  }
}
