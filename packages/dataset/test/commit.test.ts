import {
  decodeJson,
  encodeJson,
  isHoldfastError,
  MemoryStore,
  seededIds,
} from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import {
  checkCommit,
  commitVersion,
  holdfastLayout,
  initDataset,
  latestVersion,
  listBranchesWithVersions,
  listVersions,
  manifestKey,
  openDataset,
  readManifest,
  tryReadManifest,
  UnresolvedCommitError,
  writeDataFile,
} from "@holdfast/dataset";
import { createContext, type ProtocolContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

const bytes = (s: string) => new TextEncoder().encode(s);

function memoryContext(
  seed = 1,
  store = new MemoryStore(),
): ProtocolContext & { store: MemoryStore } {
  return { ...createContext(store, { ids: seededIds(seed), sleep: recordingSleep() }), store };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe("init and open", () => {
  it("creates the dataset identity once", async () => {
    const ctx = memoryContext();
    await expect(openDataset(ctx)).rejects.toMatchObject({ kind: "not-found" });
    const info = await initDataset(ctx);
    expect((await openDataset(ctx)).datasetId).toBe(info.datasetId);
    await expect(initDataset(ctx)).rejects.toMatchObject({
      kind: "conflict",
      code: "DATASET_EXISTS",
    });
    expect((await openDataset(ctx)).datasetId).toBe(info.datasetId);
  });

  it("rejects a bad default branch before writing", async () => {
    const ctx = memoryContext();
    await expect(initDataset(ctx, { defaultBranch: "a/b" })).rejects.toMatchObject({
      kind: "invalid-input",
    });
    expect(ctx.store.size).toBe(0);
  });

  it("reports a malformed identity as a typed error", async () => {
    const ctx = memoryContext();
    await ctx.store.put("_holdfast/dataset.json", bytes("{not json"));
    await expect(openDataset(ctx)).rejects.toMatchObject({
      kind: "invalid-input",
      code: "MALFORMED_OBJECT",
    });
  });
});

describe("commit", () => {
  it("writes data files first, then numbered manifests with lineage", async () => {
    const ctx = memoryContext();
    const a = await writeDataFile(ctx, bytes("aaa"));
    expect(a.key).toMatch(/^data\/[0-9A-Z]{26}\.bin$/);
    expect(a.size).toBe(3);
    const v1 = await commitVersion(ctx, { branch: "main", files: [a] });
    const b = await writeDataFile(ctx, bytes("bb"));
    const v2 = await commitVersion(ctx, { branch: "main", files: [a, b] });
    expect([v1.version, v2.version]).toEqual([1, 2]);
    const m2 = await readManifest(ctx, "main", 2);
    expect(m2.manifest.parent).toEqual({ branch: "main", version: 1 });
    expect(m2.manifest.files).toEqual([a, b]);
    expect(m2.manifest.txnId).toBe(v2.txnId);
    expect(m2.etag).toBe(v2.etag);
    expect((await readManifest(ctx, "main", 1)).manifest.parent).toBeNull();

    const fork = await commitVersion(ctx, {
      branch: "dev",
      files: [a],
      parent: { branch: "main", version: 1 },
    });
    expect(fork.version).toBe(1);
    expect((await readManifest(ctx, "dev", 1)).manifest.parent).toEqual({
      branch: "main",
      version: 1,
    });
    expect(await listBranchesWithVersions(ctx)).toEqual(["dev", "main"]);
    expect(await latestVersion(ctx, "main")).toBe(2);
    expect(await latestVersion(ctx, "nope")).toBeNull();
  });

  it("listBranchesWithVersions skips a whole branch folder per LIST: neighbours named main-x, main0 and main_x are listed, keys past `~` and objects beside the folders are not branches", async () => {
    const ctx = memoryContext(3);
    await initDataset(ctx);
    for (const branch of ["main", "main-x", "main0", "main_x"]) {
      await commitVersion(ctx, { branch, files: [] });
    }
    // Not manifests: one past `~` inside main's folder, one beside the folders.
    await ctx.store.put("_versions/main/~note", bytes("x"));
    await ctx.store.put("_versions/main0", bytes("x"));
    const lists: (string | undefined)[] = [];
    const list = ctx.store.list.bind(ctx.store);
    ctx.store.list = (prefix, options) => {
      lists.push(options?.startAfter);
      return list(prefix, options);
    };
    expect(await listBranchesWithVersions(ctx)).toEqual(["main-x", "main", "main0", "main_x"]);
    // One LIST per branch and one that finds none; none starts inside a branch's folder.
    expect(lists).toEqual([
      undefined,
      "_versions/main-x0",
      "_versions/main0",
      "_versions/main00",
      "_versions/main_x0",
    ]);
  });

  it.each([
    ["a bad branch", { branch: "../x", files: [] }],
    ["a file outside data/", { branch: "main", files: [{ key: "_versions/main/x", size: 1 }] }],
    ["a negative size", { branch: "main", files: [{ key: "data/x.bin", size: -1 }] }],
    ["a fractional size", { branch: "main", files: [{ key: "data/x.bin", size: 1.5 }] }],
    [
      "a file named twice",
      {
        branch: "main",
        files: [
          { key: "data/x.bin", size: 1 },
          { key: "data/x.bin", size: 1 },
        ],
      },
    ],
    ["a malformed file key", { branch: "main", files: [{ key: "data//x", size: 1 }] }],
    ["files not an array", { branch: "main", files: "data/x" }],
    ["a bad parent", { branch: "main", files: [], parent: { branch: "main", version: 0 } }],
    [
      "a parent with a bad branch",
      { branch: "main", files: [], parent: { branch: ".x", version: 1 } },
    ],
  ])("rejects %s with invalid-input and writes nothing", async (_what, options) => {
    const ctx = memoryContext();
    const fault = new FaultStore(ctx.store);
    const err = await commitVersion({ ...ctx, store: fault }, options as never).catch(
      (e: unknown) => e,
    );
    expect(isHoldfastError(err, "invalid-input")).toBe(true);
    expect(fault.requestCounts().put).toBe(0);
    expect(ctx.store.size).toBe(0);
  });

  it("rejects non-bytes as a data file without writing", async () => {
    const ctx = memoryContext();
    await expect(writeDataFile(ctx, "text" as never)).rejects.toMatchObject({
      kind: "invalid-input",
    });
    expect(ctx.store.size).toBe(0);
  });

  it("concurrent commits: exactly one wins each version number", async () => {
    const ctx = memoryContext();
    const writers = 12;
    const results = await Promise.all(
      Array.from({ length: writers }, (_, i) =>
        commitVersion({ ...ctx, ids: seededIds(100 + i) }, { branch: "main", files: [] }),
      ),
    );
    const versions = results.map((r) => r.version).sort((a, b) => a - b);
    expect(versions).toEqual(Array.from({ length: writers }, (_, i) => i + 1));
    // Each stored manifest belongs to the one writer that was told it won it.
    for (const r of results) {
      expect((await readManifest(ctx, "main", r.version)).manifest.txnId).toBe(r.txnId);
    }
  });

  it("C8 a commit whose re-issue meets a conflict stays unknown until the manifest is read", async () => {
    const key = manifestKey("main", 1);

    // (a) our first copy landed but its answer was lost; the re-issue meets a conflict:
    // reading the manifest shows our txnId → committed at version 1.
    {
      const ctx = memoryContext(1);
      const fault = new FaultStore(ctx.store).on(
        { operation: "put", key },
        { type: "apply-then-lose" },
      );
      const result = await commitVersion({ ...ctx, store: fault }, { branch: "main", files: [] });
      expect(result.version).toBe(1);
      expect((await readManifest(ctx, "main", 1)).manifest.txnId).toBe(result.txnId);
      expect(await latestVersion(ctx, "main")).toBe(1);
    }

    // (b) our first copy was lost before applying and another writer took version 1: the
    // re-issue's conflict is decided by the stored txnId (someone else's) → we take 2.
    {
      const ctx = memoryContext(2);
      const other = encodeJson({
        schema: 1,
        branch: "main",
        version: 1,
        parent: null,
        files: [],
        txnId: "01ARZ3NDEKTSV4RRFFQ69G5FAV",
      });
      const fault = new FaultStore(ctx.store).on({ operation: "put", key }, [
        { type: "foreign-put", body: other },
        { type: "lose-before-apply" },
      ]);
      const result = await commitVersion({ ...ctx, store: fault }, { branch: "main", files: [] });
      expect(result.version).toBe(2);
      expect((await readManifest(ctx, "main", 1)).manifest.txnId).toBe(
        "01ARZ3NDEKTSV4RRFFQ69G5FAV",
      );
      expect((await readManifest(ctx, "main", 2)).manifest.txnId).toBe(result.txnId);
    }

    // (c) every copy's answer is lost and the manifest is absent on read-back: the
    // outcome is unknown, thrown as unresolved, never as failed and never retried at 2.
    {
      const ctx = memoryContext(3);
      const fault = new FaultStore(ctx.store).on(
        { operation: "put", key, times: Number.POSITIVE_INFINITY },
        { type: "lose-before-apply" },
      );
      const err = await commitVersion(
        { ...ctx, store: fault },
        { branch: "main", files: [] },
      ).catch((e: unknown) => e);
      expect(isHoldfastError(err, "unresolved")).toBe(true);
      expect(err).toMatchObject({ code: "COMMIT_UNRESOLVED", key });
      expect(ctx.store.keys()).toEqual([]);
      expect(err).toBeInstanceOf(UnresolvedCommitError);
      const { branch, version, txnId } = err as UnresolvedCommitError;
      expect([branch, version]).toEqual(["main", 1]);
      expect(await checkCommit(ctx, branch, version, txnId)).toBe("absent");
      // If the lost copy lands later, the same check says it is ours.
      await ctx.store.put(
        key,
        encodeJson({ schema: 1, branch, version, parent: null, files: [], txnId }),
      );
      expect(await checkCommit(ctx, branch, version, txnId)).toBe("committed");
    }

    // (d) a first conflict with no earlier lost answer is read back once (the put may have
    // reached the store twice on the way): another txnId → on to the next version number.
    {
      const ctx = memoryContext(4);
      const other = encodeJson({
        schema: 1,
        branch: "main",
        version: 1,
        parent: null,
        files: [],
        txnId: "01ARZ3NDEKTSV4RRFFQ69G5FAW",
      });
      // Another writer commits version 1 between our listing and our put.
      const fault = new FaultStore(ctx.store).on(
        { operation: "put", key },
        { type: "foreign-put", body: other },
      );
      const result = await commitVersion({ ...ctx, store: fault }, { branch: "main", files: [] });
      expect(result.version).toBe(2);
      // One put at 1 (conflict), its read-back, one put at 2; the other GET is the head hint.
      const manifestRequests = fault
        .requests()
        .filter((r) => r.key.startsWith("_versions/"))
        .map((r) => `${r.operation} ${r.key}`);
      expect(manifestRequests).toEqual([
        "list _versions/main/",
        `put ${key}`,
        `get ${key}`,
        `put ${manifestKey("main", 2)}`,
      ]);
      expect(fault.requestCounts().get).toBe(2);
      expect(fault.pendingRules()).toHaveLength(0);
    }
  });

  it("a repeating client's commit whose earlier copy landed reads back as committed", async () => {
    const ctx = memoryContext(5);
    const key = manifestKey("main", 1);
    const fault = new FaultStore(ctx.store, { requestMode: "repeating" }).on(
      { operation: "put", key },
      { type: "repeat" },
    );
    const result = await commitVersion({ ...ctx, store: fault }, { branch: "main", files: [] });
    expect(result.version).toBe(1);
    expect(await checkCommit(ctx, "main", 1, result.txnId)).toBe("committed");
  });
});

describe("reading and listing", () => {
  it("streams versions page by page and skips foreign keys", async () => {
    const ctx = memoryContext(1, new MemoryStore({ pageSize: 2 }));
    for (let i = 0; i < 5; i += 1) await commitVersion(ctx, { branch: "main", files: [] });
    await ctx.store.put("_versions/main/junk.txt", bytes("x"));
    await ctx.store.put("_versions/README", bytes("x"));
    const fault = new FaultStore(ctx.store);
    const listed = await collect(listVersions({ ...ctx, store: fault }, "main"));
    expect(listed.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
    expect(fault.requestCounts().list).toBe(3);
    expect(listed[0]).toMatchObject({ branch: "main", key: manifestKey("main", 1) });
    expect(listed[0]?.lastModified).toBeInstanceOf(Date);
    expect(await listBranchesWithVersions(ctx)).toEqual(["main"]);
    const after = await collect(listVersions(ctx, "main", { startAfterVersion: 3 }));
    expect(after.map((v) => v.version)).toEqual([4, 5]);
  });

  it("finds the latest version of a long branch with few requests, across gaps and foreign keys", async () => {
    const ctx = memoryContext(1, new MemoryStore({ pageSize: 4 }));
    for (let i = 0; i < 200; i += 1) await commitVersion(ctx, { branch: "main", files: [] });
    await ctx.store.put("_versions/main/.hidden", bytes("x"));
    await ctx.store.put("_versions/main/00000000000000000139.json.bak", bytes("x"));
    await ctx.store.put("_versions/main/zzz", bytes("x"));
    const counting = new FaultStore(ctx.store);
    const probe = { ...ctx, store: counting };
    expect(await latestVersion(probe, "main")).toBe(200);
    // A full listing would take 51 pages of 4.
    expect(counting.requestCounts().list).toBeLessThan(20);
    // Cleanup leaves gaps below the latest; the search stays exact.
    let seed = 7;
    for (let v = 1; v < 200; v += 1) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      if (seed % 3 !== 0) await ctx.store.delete(manifestKey("main", v));
    }
    expect(await latestVersion(ctx, "main")).toBe(200);
    await ctx.store.delete(manifestKey("main", 200));
    const remaining = (await collect(listVersions(ctx, "main"))).map((v) => v.version);
    expect(await latestVersion(ctx, "main")).toBe(remaining.at(-1) ?? null);
    for (const v of remaining) await ctx.store.delete(manifestKey("main", v));
    expect(await latestVersion(ctx, "main")).toBeNull();
  });

  it("finds the latest version exactly over random sparse version sets", async () => {
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 30; round += 1) {
      const ctx = memoryContext(round, new MemoryStore({ pageSize: 1 + random(5) }));
      const versions = new Set<number>();
      const count = random(40);
      for (let i = 0; i < count; i += 1) versions.add(1 + random(i % 3 === 0 ? 5000 : 300));
      for (const v of versions) await ctx.store.put(manifestKey("main", v), bytes("{}"));
      const expected = versions.size === 0 ? null : Math.max(...versions);
      expect(await latestVersion(ctx, "main")).toBe(expected);
    }
  });

  it("lists branches whose names prefix each other", async () => {
    const ctx = memoryContext();
    for (const branch of ["a", "a.b", "a-b", "ab", "b"])
      await commitVersion(ctx, { branch, files: [] });
    await commitVersion(ctx, { branch: "a", files: [] });
    expect((await listBranchesWithVersions(ctx)).sort()).toEqual(["a", "a-b", "a.b", "ab", "b"]);
  });

  it("rejects bad branch names and versions on reads with invalid-input", async () => {
    const ctx = memoryContext();
    await expect(readManifest(ctx, "../x", 1)).rejects.toMatchObject({ kind: "invalid-input" });
    await expect(readManifest(ctx, "main", -1)).rejects.toMatchObject({ kind: "invalid-input" });
    await expect(latestVersion(ctx, "")).rejects.toMatchObject({ kind: "invalid-input" });
    await expect(collect(listVersions(ctx, ".x"))).rejects.toMatchObject({ kind: "invalid-input" });
  });

  it("reports a missing or malformed manifest with typed errors", async () => {
    const ctx = memoryContext();
    await expect(readManifest(ctx, "main", 1)).rejects.toMatchObject({
      kind: "not-found",
      code: "VERSION_NOT_FOUND",
    });
    expect(await tryReadManifest(ctx, "main", 1)).toBeNull();
    await ctx.store.put(manifestKey("main", 1), bytes('{"schema":2}'));
    await expect(readManifest(ctx, "main", 1)).rejects.toMatchObject({
      kind: "invalid-input",
      code: "MALFORMED_OBJECT",
    });
    // A manifest stored under another version's key is not trusted either.
    const { txnId } = await commitVersion(ctx, { branch: "main", files: [] });
    const stored = decodeJson((await ctx.store.get(manifestKey("main", 2)))!.body);
    await ctx.store.put(manifestKey("main", 3), encodeJson(stored));
    await expect(readManifest(ctx, "main", 3)).rejects.toMatchObject({ code: "MALFORMED_OBJECT" });
    expect(txnId).toMatch(/^[0-9A-Z]{26}$/);
  });

  it("the default format reads files and parent, and null for an absent version", async () => {
    const ctx = memoryContext();
    const f = await writeDataFile(ctx, bytes("x"));
    const { etag } = await commitVersion(ctx, { branch: "main", files: [f] });
    expect(await holdfastLayout.readManifest(ctx, "main", 1)).toEqual({
      files: [f],
      parent: null,
      etag,
    });
    expect(await holdfastLayout.readManifest(ctx, "main", 2)).toBeNull();
    expect(await holdfastLayout.listBranches(ctx)).toEqual(["main"]);
    expect(holdfastLayout.isDataKey(f.key)).toBe(true);
    expect(holdfastLayout.parseManifestKey(holdfastLayout.manifestKey("main", 3))).toEqual({
      branch: "main",
      version: 3,
    });
  });
});
