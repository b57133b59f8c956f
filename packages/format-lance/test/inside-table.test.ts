import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import { listAll, type ObjectStore } from "@holdfast/conditional-store";
import { initDataset } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { FormatRegistry, holdfastFormatEntry, INSIDE_TABLE } from "@holdfast/refs-lifecycle";
import { beforeAll, describe, expect, it } from "vitest";
import {
  LANCE_NAMING_MISMATCH,
  lanceFormat,
  lanceFormatEntry,
  openLanceFormat,
} from "../src/index.js";
import { localPySite, type PySite, pylance, type Written } from "./pylance.js";

/**
 * Through the API (a store the caller roots itself, no URI to locate): a store rooted at a
 * Lance branch's own folder `t.lance/tree/dev` holds a `_versions/` like a table's, but its
 * manifests record the branch (`Manifest.branch`). Opening it (openLanceFormat,
 * FormatRegistry.open) and every operation given a Lance format named without detection
 * (`lanceFormat("v2")`: cleanup before its lock, a lease acquire before its write) refuse
 * it: `invalid-input` INSIDE_TABLE, nothing written. Before, a cleanup there cleaned branch
 * `dev` as a table whose only branch is main (its tag, `dev/sub`'s fork point and leases at
 * the table root unseen) and a lease landed under `tree/dev/_holdfast/`.
 *
 * A format named for another dataset (`lanceFormat("v2")` for a holdfast dataset) is
 * refused as openLanceFormat refuses that dataset (`not-found` DATASET_NOT_FOUND); before,
 * the cleanup reported success with nothing retired (docs/protocol.md §1.1).
 */

async function objects(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  for await (const meta of listAll(store, "")) out.push(`${meta.key} ${meta.etag}`);
  return out.sort();
}

const POLICY = { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true };

function describeSite(make: () => PySite) {
  const site = make();
  let table: ObjectStore;
  let dev: ObjectStore;
  let before: string[];

  describe(`a store rooted at a branch's folder is refused through the API (${site.name})`, () => {
    beforeAll(async () => {
      await pylance<Written>(["write", "branches", site.root], site.storageOptions);
      table = await site.store("branches");
      dev = createLocalStore({ root: `${site.dir}/branches.lance/tree/dev`, createRoot: false });
      before = await objects(table);
    }, 300_000);

    it("openLanceFormat and FormatRegistry.open: INSIDE_TABLE", async () => {
      const ctx = createContext(dev);
      await expect(openLanceFormat(ctx)).rejects.toMatchObject({
        kind: "invalid-input",
        code: INSIDE_TABLE,
      });
      const registry = new FormatRegistry(holdfastFormatEntry).register(lanceFormatEntry);
      await expect(registry.open(ctx)).rejects.toMatchObject({ code: INSIDE_TABLE });
      expect(await objects(table)).toEqual(before);
    });

    it("cleanup --retain 1 with lanceFormat(v2) named for the branch folder: INSIDE_TABLE before its lock, nothing written", {
      timeout: 120_000,
    }, async () => {
      const ctx = createContext(dev);
      await expect(cleanup(ctx, POLICY, { format: lanceFormat("v2") })).rejects.toMatchObject({
        kind: "invalid-input",
        code: INSIDE_TABLE,
      });
      expect(await objects(table)).toEqual(before);
    });

    it("a lease on dev@3 through the branch folder: INSIDE_TABLE before it is written", async () => {
      const ctx = createContext(dev);
      await expect(
        acquireLease(ctx, { format: lanceFormat("v2"), branch: "main", version: 3, ttlMs: 60_000 }),
      ).rejects.toMatchObject({ kind: "invalid-input", code: INSIDE_TABLE });
      expect(await objects(table)).toEqual(before);
    });
  });
}

// Local disk: the CLI's refusals of the same folders on RGW are apps/cli/test/inside-table.test.ts.
describeSite(localPySite);

describe("a Lance format named for another dataset is refused as detection refuses it", () => {
  it("lanceFormat(v2) for a holdfast dataset: cleanup and a lease are not-found DATASET_NOT_FOUND, as openLanceFormat answers", async () => {
    const site = localPySite();
    const store = createLocalStore({ root: `${site.root}/holdfast-ds`, fsync: false });
    const ctx = createContext(store);
    await initDataset(ctx);
    const snapshot = await objects(store);
    const detected = await openLanceFormat(createContext(store)).catch((e: unknown) => e);
    expect(detected).toMatchObject({ kind: "not-found", code: "DATASET_NOT_FOUND" });
    await expect(cleanup(ctx, POLICY, { format: lanceFormat("v2") })).rejects.toMatchObject({
      kind: "not-found",
      code: "DATASET_NOT_FOUND",
    });
    await expect(
      acquireLease(ctx, { format: lanceFormat("v2"), branch: "main", version: 1, ttlMs: 60_000 }),
    ).rejects.toMatchObject({ kind: "not-found", code: "DATASET_NOT_FOUND" });
    expect(await objects(store)).toEqual(snapshot);
  });

  it("lanceFormat(v1) for a V2-named table: invalid-input LANCE_NAMING_MISMATCH, nothing retired", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "branches", site.root], site.storageOptions);
    const table = await site.store("branches");
    const snapshot = await objects(table);
    await expect(
      cleanup(createContext(table), POLICY, { format: lanceFormat("v1") }),
    ).rejects.toMatchObject({ kind: "invalid-input", code: LANCE_NAMING_MISMATCH });
    expect(await objects(table)).toEqual(snapshot);
  });
});
