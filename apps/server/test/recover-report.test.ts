import { CleanupJobsShape, JsonShapes } from "@holdfast/api-shapes";
import { isHoldfastError, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { createContext } from "@holdfast/protocol";
import { canonicalKey, createTag, holdfastFormat, INTENTS_PREFIX } from "@holdfast/refs-lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ZodApp } from "../src/index.js";
import { as, BACKENDS, freshStore, seedDataset, testServer } from "./support.js";

// POST .../recover answers with the reference recovery's report, naming what it settled.
for (const backend of BACKENDS) {
  describe(`recover reports interrupted reference operations (${backend})`, () => {
    let app: ZodApp;
    let store: ObjectStore;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      const fresh = await freshStore(backend);
      dispose = fresh.dispose;
      store = fresh.store;
      await seedDataset(store, 2);
      app = await testServer([{ name: "ds", store }]);
    });
    afterAll(async () => {
      await app?.close();
      await dispose?.();
    });

    const intents = async () => {
      const keys: string[] = [];
      for await (const meta of listAll(store, INTENTS_PREFIX)) keys.push(meta.key);
      return keys;
    };

    it("RR1 a tag create whose canonical write never answered leaves its intent; recover fences and reclaims it and names it", async () => {
      // Every answer to the tag's canonical put is lost: the creator cannot tell whether it
      // landed, so it leaves its intent behind for recovery (as a crashed writer would).
      const faulty = new FaultStore(store, {
        requestMode: "single-attempt",
        rules: [
          {
            operation: "put",
            key: canonicalKey("tag", "interrupted"),
            precondition: "create",
            times: Number.POSITIVE_INFINITY,
            fault: { type: "lose-before-apply" },
          },
        ],
      });
      const writer = createContext(faulty, { sleep: async () => {} });
      const created = await createTag(
        writer,
        { name: "interrupted", target: { branch: "main", version: 1 } },
        { format: holdfastFormat, ownershipBoundMs: 1 },
      ).catch((error: unknown) => error);
      expect(isHoldfastError(created, "unresolved"), String(created)).toBe(true);
      const left = await intents();
      expect(left).toHaveLength(1);
      // Past the intent's 1 ms bound in storage time (stamps are whole seconds on RGW and Azurite).
      await new Promise((resolve) => setTimeout(resolve, 2500));

      const res = await app.inject({
        method: "POST",
        url: "/v1/datasets/ds/recover",
        headers: as("admin"),
      });
      expect(res.statusCode, res.body).toBe(200);
      JsonShapes.recover.parse(res.json());
      const report = res.json() as {
        references: Record<string, number>;
        referenceKeys: Record<string, string[]>;
      };
      expect(report.referenceKeys.fencedIntents).toEqual(left);
      expect(report.referenceKeys.reclaimedIntents).toEqual(left);
      expect(report.references).toMatchObject({ fencedIntents: 1, reclaimedIntents: 1 });
      // Settled: no intent left, and a create is never replayed.
      expect(await intents()).toEqual([]);
      expect(await store.head(canonicalKey("tag", "interrupted"))).toBeNull();
      // The recovery job in the history on the store says the same.
      const jobs = CleanupJobsShape.parse(
        (await app.inject({ url: "/v1/datasets/ds/cleanup/jobs", headers: as("reader") })).json(),
      ).jobs;
      expect(jobs[0]).toMatchObject({ kind: "recover", state: "succeeded" });
      expect(jobs[0]!.referenceKeys?.fencedIntents).toEqual(left);
    });
  });
}
