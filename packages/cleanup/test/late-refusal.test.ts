import type { MemoryStore } from "@holdfast/conditional-store";
import { FaultStore } from "@holdfast/conditional-store/testing";
import { manifestKey, readManifest } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { commit, drain, readAdmission, seal } from "@holdfast/retirement";
import { describe, expect, it } from "vitest";
import { cleanup, recover } from "../src/index.js";
import { DEFAULT_MIN_VERSION_AGE_MS } from "../src/policy.js";
import {
  HookStore,
  keysUnder,
  MINUTE,
  RecordingStore,
  seedDataset,
  versionsOf,
  world,
} from "./helpers.js";

const RECORDS = "_holdfast/retirement/";
const garbage = new TextEncoder().encode("not a manifest");

/** Every listed version of `branch` can be leased (and the lease released). */
async function allAcquirable(
  ctx: Parameters<typeof acquireLease>[0],
  versions: number[],
  branch = "main",
) {
  for (const version of versions) {
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch,
      version,
      ttlMs: 60_000,
    });
    expect(lease.version).toBe(version);
  }
}

/** Replaces the object at `key` with the same bytes: another object, another ETag. */
async function replace(store: MemoryStore, key: string) {
  const body = (await store.get(key))!.body;
  await store.delete(key);
  await store.put(key, body);
}

// docs/protocol.md §6.1: every manifest a run retires or keeps
// is read and validated by the format before its first retirement record (the drain); a
// refusal writes no `_holdfast/retirement/` object at all and releases the cleanup lock.
describe("manifests the format refuses, found before the first retirement write", () => {
  it.each([
    ["a candidate", 2, 5, {}],
    ["the latest version", 5, 5, {}],
    ["a version the window keeps", 4, 5, { retainVersions: 3 }],
    ["the latest, three records after the first", 25, 25, { maxVersionsPerRecord: 10 }],
  ] as const)(
    "invariant 5: a corrupt manifest of %s stops the run before any retirement write; every version stays acquirable",
    async (_name, corrupt, versions, extra) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions, filesPer: 1 });
      await store.put(manifestKey("main", corrupt), garbage);
      await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE); // old enough to be a candidate
      const recording = new RecordingStore(store);
      const rctx = { ...ctx, store: recording };
      const { maxVersionsPerRecord, ...policy } = { retainVersions: 1, ...extra } as {
        retainVersions: number;
        maxVersionsPerRecord?: number;
      };
      const error = await cleanup(rctx, policy, {
        format: holdfastFormat,
        maxVersionsPerRecord,
      }).catch((e) => e);
      expect(error).toMatchObject({
        kind: "invalid-input",
        code: "MALFORMED_OBJECT",
        key: manifestKey("main", corrupt),
      });
      // Not one retirement write (drain, seal, abandon), not one deletion of a manifest or file.
      expect(recording.writesUnder(RECORDS)).toEqual([]);
      expect(recording.writesUnder("_versions/")).toEqual([]);
      expect(recording.writesUnder("data/")).toEqual([]);
      // The lock was taken and released.
      expect(recording.writesUnder("_holdfast/cleanup/lock.json")).toHaveLength(2);
      expect(keysUnder(store, "_holdfast/cleanup/")).toEqual([]);
      expect(versionsOf(store)).toHaveLength(versions);
      for (let v = 1; v < versions; v += 1) {
        expect((await readAdmission(ctx, "main", v)).state).toBe("open");
      }
      await allAcquirable(
        ctx,
        Array.from({ length: versions }, (_, i) => i + 1),
      );
    },
  );

  it("a manifest replaced between the listing and its read is kept (reason changed) and never drained", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const key = manifestKey("main", 2);
    const before = await readManifest(ctx, "main", 2);
    let replaced = false;
    const hook = new HookStore(store, async (op, k) => {
      if (op === "get" && k === key && !replaced) {
        replaced = true;
        await replace(store, key);
      }
    });
    const hctx = { ...ctx, store: hook };
    const stats = await cleanup(hctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(replaced).toBe(true);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 2, reason: "changed" }),
    );
    expect(stats.retiredRanges).toEqual([
      { branch: "main", from: 1, to: 1 },
      { branch: "main", from: 3, to: 4 },
    ]);
    expect(versionsOf(store)).toEqual([2, 5]);
    for (const file of before.manifest.files) expect(await store.head(file.key)).not.toBeNull();
    expect(keysUnder(store, RECORDS)).toEqual([]);
    await allAcquirable(ctx, [2, 5]);
  });

  it("a manifest replaced between its read and the drain is kept (reason changed) with its files", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const key = manifestKey("main", 2);
    const before = await readManifest(ctx, "main", 2);
    let replaced = false;
    const hook = new HookStore(store, async (op, k) => {
      if (op === "put" && k.startsWith(RECORDS) && !replaced) {
        replaced = true; // the drain: every manifest was read before it
        await replace(store, key);
      }
    });
    const hctx = { ...ctx, store: hook };
    const stats = await cleanup(hctx, { retainVersions: 1 }, { format: holdfastFormat });
    expect(replaced).toBe(true);
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version: 2, reason: "changed" }),
    );
    expect(versionsOf(store)).toEqual([2, 5]);
    for (const file of before.manifest.files) expect(await store.head(file.key)).not.toBeNull();
    expect(keysUnder(store, RECORDS)).toEqual([]);
    await allAcquirable(ctx, [2, 5]);
  });
});

// docs/protocol.md §5.5.
describe("a committed record whose manifest changed since it was drained", () => {
  it.each([
    ["recover", (c: Parameters<typeof recover>[0]) => recover(c, { format: holdfastFormat })],
    [
      "the next cleanup",
      (c: Parameters<typeof recover>[0]) =>
        cleanup(c, { retainVersions: 5 }, { format: holdfastFormat }),
    ],
  ] as const)(
    "invariant 5: %s keeps the version and its files and removes the record; the version is acquirable again",
    async (_name, settle) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 4 });
      const drained = await readManifest(ctx, "main", 2);
      const committed = await commit(
        ctx,
        await seal(
          ctx,
          await drain(ctx, {
            branch: "main",
            versions: [{ version: 2, manifestEtag: drained.etag }],
            owner: "01CRASHEDCLEANER",
          }),
        ),
      );
      expect(committed.record.state).toBe("committed");
      // The manifest at the key is replaced (a repair): another object, another ETag.
      const key = manifestKey("main", 2);
      const body = (await store.get(key))!.body;
      await store.delete(key);
      await store.put(key, body);
      expect((await store.head(key))!.etag).not.toBe(drained.etag);
      await expect(
        acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 2, ttlMs: 60_000 }),
      ).rejects.toMatchObject({
        code: "COMMITTED",
      });

      const stats = await settle(ctx);
      expect(stats.warnings.join("\n")).toMatch(
        /main@2: manifest replaced since it was drained; cancelled in _holdfast\/retirement\//,
      );
      expect(keysUnder(store, RECORDS)).toEqual([]);
      expect(versionsOf(store)).toEqual([1, 2, 3, 4]);
      for (const file of drained.manifest.files) expect(await store.head(file.key)).not.toBeNull();
      await allAcquirable(ctx, [2]);
    },
  );
});

/** A crashed cleaner's committed record retiring `versions` of main, as it drained them. */
async function committedRecord(ctx: Parameters<typeof drain>[0], versions: number[]) {
  const drained = [];
  for (const version of versions) {
    drained.push({ version, manifestEtag: (await readManifest(ctx, "main", version)).etag });
  }
  return commit(
    ctx,
    await seal(
      ctx,
      await drain(ctx, { branch: "main", versions: drained, owner: "01CRASHEDCLEANER" }),
    ),
  );
}

// docs/protocol.md §5.5 (committed →
// committed: `cancelReplaced`): a version whose manifest key holds another object than the
// recorded one is cancelled in its committed record before that manifest is read, so a
// manifest the format refuses blocks no lease; the run then stops with the refusal and
// deletes nothing.
describe("a committed record whose manifest was replaced by one the format refuses", () => {
  it("invariant 5: the run's last look cancels the version in its own committed record, then stops with the refusal naming the file; nothing is deleted", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const key = manifestKey("main", 2);
    const files = new Map<number, string[]>();
    for (let v = 1; v <= 5; v += 1) {
      files.set(
        v,
        (await readManifest(ctx, "main", v)).manifest.files.map((f) => f.key),
      );
    }
    const original = (await store.get(key))!.body;
    let broken = false;
    // After every read, just before the commit: version 2 gets bytes the format refuses.
    const hook = new HookStore(store, async (op, k) => {
      if (op !== "put" || !k.startsWith(RECORDS) || broken) return;
      const current = await store.get(k);
      if (current && new TextDecoder().decode(current.body).includes('"state":"sealed"')) {
        broken = true;
        await store.put(key, garbage);
      }
    });
    const hctx = { ...ctx, store: hook };
    const error = await cleanup(hctx, { retainVersions: 1 }, { format: holdfastFormat }).catch(
      (e) => e,
    );
    expect(broken).toBe(true);
    expect(error).toMatchObject({ kind: "invalid-input", code: "MALFORMED_OBJECT", key });
    // Nothing deleted: every manifest and data file is still there.
    expect(hook.writesUnder("_versions/")).toEqual([]);
    expect(hook.writesUnder("data/")).toEqual([]);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    for (const keys of files.values())
      for (const f of keys) expect(await store.head(f)).not.toBeNull();
    // The record stays committed with version 2 cancelled (reason changed): 2 is acquirable
    // at once, the versions being retired still refuse new leases.
    const records = keysUnder(store, RECORDS);
    expect(records).toHaveLength(1);
    const record = JSON.parse(new TextDecoder().decode((await store.get(records[0]!))!.body));
    expect(record.state).toBe("committed");
    expect(record.versions).toEqual([
      expect.objectContaining({ version: 1, cancelled: false }),
      expect.objectContaining({ version: 2, cancelled: true, reason: "changed" }),
      expect.objectContaining({ version: 3, cancelled: false }),
      expect.objectContaining({ version: 4, cancelled: false }),
    ]);
    await allAcquirable(ctx, [2]);
    for (const version of [1, 3, 4]) {
      await expect(
        acquireLease(ctx, { format: holdfastFormat, branch: "main", version, ttlMs: 60_000 }),
      ).rejects.toMatchObject({ code: "COMMITTED" });
    }
    // While the refusal stays, recover refuses too (the plan reads version 2) and deletes nothing.
    await expect(recover(ctx, { format: holdfastFormat })).rejects.toMatchObject({
      code: "MALFORMED_OBJECT",
      key,
    });
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    // Once version 2 is repaired, recover deletes the rest and removes the record.
    await store.put(key, original);
    await recover(ctx, { format: holdfastFormat });
    expect(keysUnder(store, RECORDS)).toEqual([]);
    expect(versionsOf(store)).toEqual([2, 5]);
    for (const v of [1, 3, 4])
      for (const f of files.get(v)!) expect(await store.head(f)).toBeNull();
    await allAcquirable(ctx, [2, 5]);
  });

  it("invariant 5: recover cancels the replaced version in a crashed cleaner's committed record, then stops with the refusal; nothing is deleted", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const committed = await committedRecord(ctx, [1, 2, 3]);
    expect(committed.record.state).toBe("committed");
    const key = manifestKey("main", 2);
    await store.put(key, garbage);
    const recording = new RecordingStore(store);
    const rctx = { ...ctx, store: recording };
    await expect(recover(rctx, { format: holdfastFormat })).rejects.toMatchObject({
      kind: "invalid-input",
      code: "MALFORMED_OBJECT",
      key,
    });
    // One retirement write: the if-match rewrite of the committed record; nothing deleted.
    expect(recording.writesUnder(RECORDS)).toEqual([committed.key]);
    expect(recording.writesUnder("_versions/")).toEqual([]);
    expect(recording.writesUnder("data/")).toEqual([]);
    const after = JSON.parse(new TextDecoder().decode((await store.get(committed.key))!.body));
    expect(after.state).toBe("committed");
    expect(after.versions.map((v: { cancelled: boolean }) => v.cancelled)).toEqual([
      false,
      true,
      false,
    ]);
    await allAcquirable(ctx, [2]);
    await expect(
      acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: "COMMITTED" });
    // A later cleanup meets the refusal in its plan, before any write of its own.
    const later = new RecordingStore(store);
    const lctx = { ...ctx, store: later };
    await expect(
      cleanup(lctx, { retainVersions: 1 }, { format: holdfastFormat }),
    ).rejects.toMatchObject({ code: "MALFORMED_OBJECT", key });
    expect(later.writesUnder(RECORDS)).toEqual([]);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
  });

  it.each([
    ["recover", (ctx: Parameters<typeof recover>[0]) => recover(ctx, { format: holdfastFormat })],
    [
      "cleanup",
      (ctx: Parameters<typeof recover>[0]) =>
        cleanup(ctx, { retainVersions: Number.MAX_SAFE_INTEGER }, { format: holdfastFormat }),
    ],
  ] as const)(
    "invariant 5: %s cancels a recovered record's replaced version before its plan meets a refusal of another manifest; nothing is deleted",
    async (_name, run) => {
      const { ctx, store, time } = world();
      await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
      const committed = await committedRecord(ctx, [1, 2, 3]);
      // Version 2 is replaced by a valid manifest (another ETag); version 4, which no record
      // retires and the plan reads, by bytes the format refuses.
      await replace(store, manifestKey("main", 2));
      const refused = manifestKey("main", 4);
      await store.put(refused, garbage);
      const recording = new RecordingStore(store);
      const rctx = { ...ctx, store: recording };
      await expect(run(rctx)).rejects.toMatchObject({
        kind: "invalid-input",
        code: "MALFORMED_OBJECT",
        key: refused,
      });
      // One retirement write: the if-match rewrite cancelling version 2; nothing deleted.
      expect(recording.writesUnder(RECORDS)).toEqual([committed.key]);
      expect(recording.writesUnder("_versions/")).toEqual([]);
      expect(recording.writesUnder("data/")).toEqual([]);
      const after = JSON.parse(new TextDecoder().decode((await store.get(committed.key))!.body));
      expect(after.state).toBe("committed");
      expect(after.versions).toEqual([
        expect.objectContaining({ version: 1, cancelled: false }),
        expect.objectContaining({ version: 2, cancelled: true, reason: "changed" }),
        expect.objectContaining({ version: 3, cancelled: false }),
      ]);
      await allAcquirable(ctx, [2]);
      for (const version of [1, 3]) {
        await expect(
          acquireLease(ctx, { format: holdfastFormat, branch: "main", version, ttlMs: 60_000 }),
        ).rejects.toMatchObject({ code: "COMMITTED" });
      }
      expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    },
  );

  it("a replaced version that every version of the record shares is cancelled with the record: nothing left committed", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 4, filesPer: 1 });
    const committed = await committedRecord(ctx, [2]);
    const key = manifestKey("main", 2);
    await store.put(key, garbage);
    // Cancelled before the plan (Cleanup 1): nothing is left committed, so recover reads no
    // manifest and meets no refusal; a cleanup still does.
    await recover(ctx, { format: holdfastFormat });
    expect(await store.head(committed.key)).toBeNull();
    expect(keysUnder(store, RECORDS)).toEqual([]);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4]);
    await allAcquirable(ctx, [2]);
    await expect(
      cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat }),
    ).rejects.toMatchObject({ code: "MALFORMED_OBJECT", key });
    expect(keysUnder(store, RECORDS)).toEqual([]);
  });
});

// docs/protocol.md §5.5: a replaced manifest
// rescues its version only before its record's deletion began (the record's mark).
describe("a manifest rewritten after its record's deletion began", () => {
  it("invariant 1: the version is not admitted again; recover stops with RETIRED_MANIFEST_REWRITTEN, the record stays, until the operator removes that manifest", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3, filesPer: 1 });
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    const key2 = manifestKey("main", 2);
    const data2 = (await readManifest(ctx, "main", 2)).manifest.files.map((f) => f.key);
    const fault = new FaultStore(store)
      // After the last look saw the recorded manifest, before the mark lands (seal, commit,
      // then the mark: the third if-match write of the record), a foreign writer replaces it.
      .on(
        { operation: "put", key: /^_holdfast\/retirement\//, precondition: "if-match", nth: 3 },
        { type: "before", run: (inner) => replace(inner as MemoryStore, key2) },
      )
      // The deletion of the manifests is lost before it applies: the replaced one stays.
      .on(
        { operation: "deleteMany", key: key2, times: Number.POSITIVE_INFINITY },
        { type: "lose-before-apply" },
      );
    const fctx = { ...ctx, store: fault };
    await expect(
      cleanup(fctx, { retainVersions: 1 }, { format: holdfastFormat }),
    ).rejects.toMatchObject({
      kind: "ambiguous",
    });
    for (const file of data2) expect(await store.head(file)).toBeNull(); // its data is gone
    expect(await store.head(key2)).not.toBeNull();
    const [recordKey] = keysUnder(store, RECORDS);
    const error = await recover(ctx, { format: holdfastFormat }).catch((e) => e);
    expect(error).toMatchObject({
      kind: "refused",
      code: "RETIRED_MANIFEST_REWRITTEN",
      key: key2,
      recordKey,
    });
    // The record stays as the anchor, version 2 uncancelled: leases on it stay refused.
    expect(keysUnder(store, RECORDS)).toEqual([recordKey]);
    const record = JSON.parse(new TextDecoder().decode((await store.get(recordKey!))!.body));
    expect(record.state).toBe("committed");
    expect(typeof record.deletionStartedAt).toBe("string");
    expect(record.versions.find((v: { version: number }) => v.version === 2).cancelled).toBe(false);
    expect((await readAdmission(ctx, "main", 2)).state).toBe("committed");
    await expect(
      acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 2, ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: "COMMITTED" });
    // A later cleanup stops the same way; the operator removes that manifest and the next
    // recover finishes the record.
    await expect(
      cleanup(ctx, { retainVersions: 1 }, { format: holdfastFormat }),
    ).rejects.toMatchObject({
      code: "RETIRED_MANIFEST_REWRITTEN",
    });
    await store.delete(key2);
    await recover(ctx, { format: holdfastFormat });
    expect(keysUnder(store, RECORDS)).toEqual([]);
    expect(versionsOf(store)).toEqual([3]);
    await allAcquirable(ctx, [3]);
  });

  it("an earlier run's record: a manifest rewritten after the last look, read at the deletion after the mark, stops the deletion before its deletes", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 5, filesPer: 1 });
    const record = await committedRecord(ctx, [1, 2, 3]);
    const key2 = manifestKey("main", 2);
    const before = keysUnder(store, "data/");
    // The deletion's read of version 2 (after the last look listed it with the recorded
    // ETag, and after the mark) finds another object there.
    const fault = new FaultStore(store).on(
      { operation: "get", key: key2 },
      { type: "before", run: (inner) => replace(inner as MemoryStore, key2) },
    );
    const error = await recover({ ...ctx, store: fault }, { format: holdfastFormat }).catch(
      (e) => e,
    );
    expect(error).toMatchObject({
      code: "RETIRED_MANIFEST_REWRITTEN",
      key: key2,
      recordKey: record.key,
    });
    // Nothing of the step was deleted; the record stays committed and marked.
    expect(keysUnder(store, "data/")).toEqual(before);
    expect(versionsOf(store)).toEqual([1, 2, 3, 4, 5]);
    const stored = JSON.parse(new TextDecoder().decode((await store.get(record.key))!.body));
    expect(stored.state).toBe("committed");
    expect(typeof stored.deletionStartedAt).toBe("string");
    expect((await readAdmission(ctx, "main", 2)).state).toBe("committed");
  });

  it("a manifest rewritten between the deletion and the finalize stops the finalize by name; the record stays", async () => {
    const { ctx, store, time } = world();
    await seedDataset(ctx, time, { versions: 3, filesPer: 1 });
    await time.advance(DEFAULT_MIN_VERSION_AGE_MS + MINUTE);
    const key2 = manifestKey("main", 2);
    const body2 = (await store.get(key2))!.body;
    let deleted = false;
    let landed = false;
    // Right after the manifests' delete, before finalize's listing, another writer puts a
    // manifest at version 2's key.
    const fault = new FaultStore(store)
      .on(
        { operation: "deleteMany", key: key2 },
        {
          type: "before",
          run: async () => {
            deleted = true;
          },
        },
      )
      .on(
        { operation: "list", key: "_versions/main/", times: Number.POSITIVE_INFINITY },
        {
          type: "before",
          run: async (inner) => {
            if (!deleted || landed) return;
            landed = true;
            await inner.put(key2, body2);
          },
        },
      );
    const error = await cleanup(
      { ...ctx, store: fault },
      { retainVersions: 1 },
      { format: holdfastFormat },
    ).catch((e) => e);
    expect(landed).toBe(true);
    expect(error).toMatchObject({ code: "RETIRED_MANIFEST_REWRITTEN", key: key2 });
    expect(keysUnder(store, RECORDS)).toHaveLength(1);
    await expect(
      acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 2, ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: "COMMITTED" });
  });
});
