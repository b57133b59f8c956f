import { CountingStore, MemoryStore } from "@holdfast/conditional-store";
import { FORMAT_REQUIRED, NOT_A_HOLDFAST_DATASET } from "@holdfast/dataset";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { describe, expect, it } from "vitest";
import {
  type CleanupPolicy,
  cleanup,
  collectStatus,
  planCleanup,
  recover,
  recoverAll,
  recoverAndCleanup,
} from "../src/index.js";
import { seedDataset, world } from "./helpers.js";

// docs/protocol.md §1.1: cleanup never falls back to holdfast's layout. A
// call without the dataset's format is a type error (each `@ts-expect-error` below fails
// the typecheck once the format is optional again) and, for a JavaScript caller, a typed
// refusal before any request, the policy's check and the storage-time probe included.
describe("cleanup operations take the dataset's format", () => {
  it("invariant 6: cleanup, plan, recover and status called without a format refuse with FORMAT_REQUIRED and send nothing", async () => {
    const { ctx, time, store } = world();
    await seedDataset(ctx, time, { versions: 3 });
    const counting = new CountingStore(store);
    const c = { ...ctx, store: counting };
    const policy: CleanupPolicy = { retainVersions: 1 };
    const keysBefore = store.keys();
    const calls: [string, () => unknown][] = [
      // @ts-expect-error the format is required
      ["cleanup", () => cleanup(c, policy)],
      // @ts-expect-error the format is required
      ["planCleanup", () => planCleanup(c, policy)],
      // @ts-expect-error the format is required
      ["recover", () => recover(c)],
      // @ts-expect-error the format is required
      ["recoverAll", () => recoverAll(c)],
      // @ts-expect-error the format is required
      ["recoverAndCleanup", () => recoverAndCleanup(c, policy)],
      // @ts-expect-error the format is required
      ["collectStatus", () => collectStatus(c)],
      // An options object without its format is refused the same way.
      // @ts-expect-error the format is required
      ["cleanup {}", () => cleanup(c, policy, { concurrency: 2 })],
      // @ts-expect-error the format is required
      ["planCleanup {}", () => planCleanup(c, policy, {})],
      // @ts-expect-error the format is required
      ["recover {}", () => recover(c, {})],
      // @ts-expect-error the format is required
      ["recoverAll {}", () => recoverAll(c, {})],
      // @ts-expect-error the format is required
      ["recoverAndCleanup {}", () => recoverAndCleanup(c, policy, {})],
      // @ts-expect-error the format is required
      ["collectStatus {}", () => collectStatus(c, {})],
      // A dry run's recoverAndCleanup only plans: refused the same way.
      // @ts-expect-error the format is required
      ["recoverAndCleanup dry run", () => recoverAndCleanup(c, { ...policy, dryRun: true })],
      // Refused before the policy is checked: the missing format is what the caller learns.
      // @ts-expect-error the format is required
      ["cleanup, bad policy", () => cleanup(c, { retainVersions: 0 })],
    ];
    for (const [name, call] of calls) {
      const error = await Promise.resolve()
        .then(call)
        .then(
          () => new Error(`${name} succeeded`),
          (e: unknown) => e,
        );
      expect({ name, error }).toMatchObject({
        name,
        error: { kind: "invalid-input", code: FORMAT_REQUIRED },
      });
    }
    expect(counting.totalRequests()).toBe(0);
    expect(store.keys()).toEqual(keysBefore);
  });
});

// docs/protocol.md §1.1: holdfast's format on a store that is not a holdfast
// dataset (no marker) is refused before any write, whatever the call.
describe("holdfast's format on a store without holdfast's marker", () => {
  it("invariant 6: cleanup, plan, recover, recoverAll and status refuse with NOT_A_HOLDFAST_DATASET (found: lance) and write nothing", async () => {
    const store = new MemoryStore();
    await store.put("_versions/1.manifest", new Uint8Array([1]));
    await store.put("data/a.lance", new Uint8Array([2]));
    const keysBefore = store.keys();
    const format = holdfastFormat;
    const policy: CleanupPolicy = { retainVersions: 1, minVersionAgeMs: 0 };
    const calls: [string, (c: ProtocolContext) => Promise<unknown>][] = [
      ["cleanup", (c) => cleanup(c, policy, { format })],
      ["cleanup --concurrent", (c) => cleanup(c, policy, { format, concurrent: true })],
      ["planCleanup", (c) => planCleanup(c, policy, { format })],
      ["recover", (c) => recover(c, { format })],
      ["recoverAll", (c) => recoverAll(c, { format })],
      ["recoverAndCleanup", (c) => recoverAndCleanup(c, policy, { format })],
      ["collectStatus", (c) => collectStatus(c, { format })],
    ];
    for (const [name, call] of calls) {
      // A fresh store object per call: nothing is remembered between operations.
      const error = await call(createContext(new CountingStore(store))).then(
        () => new Error(`${name} succeeded`),
        (e: unknown) => e,
      );
      // recoverAll and recoverAndCleanup name the reference recovery's refusal, kept as the cause.
      const refusal = name.startsWith("recoverA") ? (error as Error).cause : error;
      expect({ name, error, refusal }).toMatchObject({
        name,
        error: { kind: "invalid-input", code: NOT_A_HOLDFAST_DATASET },
        refusal: { found: "lance" },
      });
    }
    expect(store.keys()).toEqual(keysBefore);
  });
});
