import { CountingStore, encodeJson, MemoryStore, seededIds } from "@holdfast/conditional-store";
import { FakeTime, recordingSleep } from "@holdfast/conditional-store/testing";
import {
  COMMIT_INTENT_PREFIX,
  COMMIT_RETIREMENT_IN_PROGRESS,
  COMMIT_SOURCES_REQUIRED,
  commitVersion,
  type DataFile,
  initDataset,
  latestVersion,
  MAX_RETIREMENT_WAIT_MS,
  RetirementInProgressError,
  readManifest,
  UNDECLARED_REUSE_MAX_AGE_MS,
  writeDataFile,
} from "@holdfast/dataset";
import { type ProtocolContext, RETIREMENT_ROOT } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";

const bytes = (s: string) => new TextEncoder().encode(s);

function setup(sleep = recordingSleep()) {
  const time = new FakeTime(Date.UTC(2026, 5, 1));
  const memory = new MemoryStore({ clock: time });
  const counting = new CountingStore(memory);
  const ctx: ProtocolContext = { store: counting, clock: time, ids: seededIds(11), sleep };
  return { time, memory, counting, ctx, sleep };
}

/** Five versions on main, each of two fresh files. */
async function history(ctx: ProtocolContext) {
  await initDataset(ctx);
  for (let v = 1; v <= 5; v += 1) {
    const a = await writeDataFile(ctx, bytes(`a${v}`));
    const b = await writeDataFile(ctx, bytes(`b${v}`));
    await commitVersion(ctx, { branch: "main", files: [a, b] });
  }
}

/** A committed retirement record of versions 1..4 of main, as `@holdfast/retirement` writes it. */
async function committedRecord(memory: MemoryStore, versions = [1, 2, 3, 4]) {
  const key = `${RETIREMENT_ROOT}main/${"1".padStart(20, "0")}-${"4".padStart(20, "0")}-op.json`;
  await memory.put(
    key,
    encodeJson({
      schema: 1,
      opId: "op",
      writerId: "w",
      owner: "o",
      branch: "main",
      state: "committed",
      ownershipBoundMs: 60_000,
      versions: versions.map((version) => ({ version, manifestEtag: "e", cancelled: false })),
    }),
  );
  return key;
}

/** An appending writer: the latest version's files (copies: reused) plus one new file, no sources. */
async function append(ctx: ProtocolContext, options: { retirementWaitMs?: number } = {}) {
  const latest = (await latestVersion(ctx, "main"))!;
  const { manifest } = await readManifest(ctx, "main", latest);
  const fresh = await writeDataFile(ctx, bytes(`new after ${latest}`));
  const files: DataFile[] = [...manifest.files.map((f) => ({ ...f })), fresh];
  return commitVersion(ctx, { branch: "main", files, ...options });
}

function delta(counting: CountingStore, before: Record<string, number>) {
  const after = counting.requestCounts();
  const out: Record<string, number> = {};
  for (const op of ["get", "head", "put", "list", "delete"] as const) {
    out[op] = (after[op] ?? 0) - (before[op] ?? 0);
  }
  return out;
}

// docs/protocol.md §2.5, rule H (reuse through the head).
describe("appends that reuse the head's files without naming sources", () => {
  it("invariant 7: an append while a retirement is committed lands: its reused files are named by the head, which no record retires", async () => {
    const { ctx, memory, counting } = setup();
    await history(ctx);
    await committedRecord(memory);
    const before = { ...counting.requestCounts() };
    const result = await append(ctx);
    expect(result.version).toBe(6);
    // The append's own reads (GET hint, LIST, GET manifest, PUT file) and then the commit:
    // PUT intent, LIST + GET record, HEAD 2 files, GET hint + LIST + GET head manifest
    // (the head the files are checked against), GET hint, PUT manifest, PUT hint, DELETE.
    expect(delta(counting, before)).toEqual({ get: 6, head: 2, put: 4, list: 3, delete: 1 });
    expect(memory.keys().filter((k) => k.startsWith(COMMIT_INTENT_PREFIX))).toEqual([]);
  });

  it("with no retirement committed an append costs what it cost before (no head manifest read)", async () => {
    const { ctx, counting } = setup();
    await history(ctx);
    const before = { ...counting.requestCounts() };
    await append(ctx);
    // Append reads: GET hint, LIST, GET manifest, PUT file. Commit: PUT intent, LIST records,
    // HEAD 2 files + HEAD intent, GET hint, PUT manifest, PUT hint, DELETE intent.
    expect(delta(counting, before)).toEqual({ get: 3, head: 3, put: 4, list: 2, delete: 1 });
  });

  it("an append of files older than the undeclared-reuse bound lands: the head names them (formerly COMMIT_SOURCES_REQUIRED)", async () => {
    const { ctx, time } = setup();
    await history(ctx);
    await time.advance(UNDECLARED_REUSE_MAX_AGE_MS + 60 * 60_000);
    expect((await append(ctx)).version).toBe(6);
  });

  it("old reused files named by a version of the head's lineage land; named by none of the lineage's first 16 versions, they are refused COMMIT_SOURCES_REQUIRED", async () => {
    const { ctx, time } = setup();
    await history(ctx);
    for (let v = 6; v <= 20; v += 1) {
      await commitVersion(ctx, {
        branch: "main",
        files: [await writeDataFile(ctx, bytes(`${v}`))],
      });
    }
    await time.advance(UNDECLARED_REUSE_MAX_AGE_MS + 60 * 60_000);
    const copies = (files: readonly DataFile[]) => files.map((f) => ({ ...f }));
    // Version 5: the 16th manifest from the head (20, 19, ..., 5).
    const { manifest: fifth } = await readManifest(ctx, "main", 5);
    expect((await commitVersion(ctx, { branch: "main", files: copies(fifth.files) })).version).toBe(
      21,
    );
    // Version 4 is now 18 manifests from the head (21, 20, ..., 4): past the walk.
    const { manifest: fourth } = await readManifest(ctx, "main", 4);
    await expect(
      commitVersion(ctx, { branch: "main", files: copies(fourth.files) }),
    ).rejects.toMatchObject({ kind: "refused", code: COMMIT_SOURCES_REQUIRED });
  });

  it("invariant 7: a reused file no checked version names is refused while a retirement is committed, naming the record and the file", async () => {
    const { ctx, memory } = setup();
    await history(ctx);
    const record = await committedRecord(memory);
    // A file of another branch, not in main's lineage.
    const other = await writeDataFile(ctx, bytes("other"));
    await commitVersion(ctx, { branch: "other", files: [other] });
    const error = await commitVersion(ctx, {
      branch: "main",
      files: [{ key: other.key, size: other.size }],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetirementInProgressError);
    expect(error).toMatchObject({
      kind: "refused",
      code: COMMIT_RETIREMENT_IN_PROGRESS,
      record,
      key: record,
      file: other.key,
      source: undefined,
    });
    expect(await latestVersion(ctx, "main")).toBe(5);
  });

  it("invariant 7: a restore of a version being retired (no sources) is refused naming that version and the record", async () => {
    const { ctx, memory } = setup();
    await history(ctx);
    const record = await committedRecord(memory);
    const { manifest } = await readManifest(ctx, "main", 2);
    const error = await commitVersion(ctx, {
      branch: "main",
      files: manifest.files.map((f) => ({ ...f })),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetirementInProgressError);
    expect(error).toMatchObject({
      kind: "refused",
      code: COMMIT_RETIREMENT_IN_PROGRESS,
      record,
      key: record,
      source: { branch: "main", version: 2 },
      file: undefined,
    });
    expect(await latestVersion(ctx, "main")).toBe(5);
    expect(memory.keys().filter((k) => k.startsWith(COMMIT_INTENT_PREFIX))).toEqual([]);
  });

  it("invariant 7: a commit that builds on a version being retired (explicit parent, no sources) is refused naming that version and the record", async () => {
    const { ctx, memory } = setup();
    await history(ctx);
    const record = await committedRecord(memory);
    const { manifest } = await readManifest(ctx, "main", 2);
    const error = await commitVersion(ctx, {
      branch: "fork",
      parent: { branch: "main", version: 2 },
      files: manifest.files.map((f) => ({ ...f })),
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: COMMIT_RETIREMENT_IN_PROGRESS,
      record,
      source: { branch: "main", version: 2 },
    });
    expect(await latestVersion(ctx, "fork")).toBeNull();
  });

  it("a declared source being retired is refused naming it and the record", async () => {
    const { ctx, memory } = setup();
    await history(ctx);
    const record = await committedRecord(memory);
    const { manifest } = await readManifest(ctx, "main", 3);
    await expect(
      commitVersion(ctx, {
        branch: "main",
        files: manifest.files,
        sources: [{ branch: "main", version: 3 }],
      }),
    ).rejects.toMatchObject({ record, source: { branch: "main", version: 3 } });
  });

  it("a blocked commit waits (injected sleep, bounded by retirementWaitMs) and refuses when the record stays", async () => {
    const { ctx, memory, sleep } = setup();
    await history(ctx);
    const record = await committedRecord(memory);
    const { manifest } = await readManifest(ctx, "main", 2);
    await expect(
      commitVersion(ctx, {
        branch: "main",
        files: manifest.files.map((f) => ({ ...f })),
        retirementWaitMs: 20_000,
      }),
    ).rejects.toMatchObject({ record, code: COMMIT_RETIREMENT_IN_PROGRESS });
    // 1 + 2 + 4 + 8 s; the next pause (15 s) would pass the 20 s asked for.
    expect(sleep.pauses).toEqual([1000, 2000, 4000, 8000]);
    expect(memory.keys().filter((k) => k.startsWith(COMMIT_INTENT_PREFIX))).toEqual([]);
  });

  it("a blocked commit that waits lands once the record is gone (every check runs again after the wait)", async () => {
    let memoryRef!: MemoryStore;
    let record = "";
    const sleep = recordingSleep((_ms, index) => {
      // The cleanup finishes during the second pause: its record is finalized.
      if (index === 1) void memoryRef.delete(record);
    });
    const { ctx, memory } = setup(sleep);
    memoryRef = memory;
    await history(ctx);
    record = await committedRecord(memory);
    const { manifest } = await readManifest(ctx, "main", 2);
    const result = await commitVersion(ctx, {
      branch: "main",
      files: manifest.files.map((f) => ({ ...f })),
      retirementWaitMs: 60_000,
    });
    expect(result.version).toBe(6);
    expect(sleep.pauses).toEqual([1000, 2000]);
  });

  it("the wait is also bounded by the local timer, and refuses a bad retirementWaitMs before any request", async () => {
    const { ctx, memory, counting, time } = setup();
    await history(ctx);
    const slowSleep = recordingSleep((ms) => time.set(time.now() + ms * 3));
    const record = await committedRecord(memory);
    const { manifest } = await readManifest(ctx, "main", 2);
    await expect(
      commitVersion(
        { ...ctx, sleep: slowSleep },
        {
          branch: "main",
          files: manifest.files.map((f) => ({ ...f })),
          retirementWaitMs: 20_000,
        },
      ),
    ).rejects.toMatchObject({ record });
    // Pauses of 1, 2, 4 s that took 3, 6, 12 s on the clock: 21 s passed, so no 8 s pause
    // (the pauses alone, 15 s, would still be within the 20 s asked for).
    expect(slowSleep.pauses).toEqual([1000, 2000, 4000]);
    const before = counting.totalRequests();
    for (const bad of [-1, 1.5, MAX_RETIREMENT_WAIT_MS + 1, "5"]) {
      await expect(
        commitVersion(ctx, {
          branch: "main",
          files: [],
          retirementWaitMs: bad as number,
        }),
      ).rejects.toMatchObject({ kind: "invalid-input", code: "INVALID_WAIT" });
    }
    expect(counting.totalRequests()).toBe(before);
  });

  it("a record that retires versions of another branch, or only cancelled ones, does not block an append", async () => {
    const { ctx, memory } = setup();
    await history(ctx);
    // Version 5 (the head) cancelled in a committed record, and retired on another branch.
    for (const [branch, cancelled] of [
      ["main", true],
      ["other", false],
    ] as const) {
      await memory.put(
        `${RETIREMENT_ROOT}${branch}/x.json`,
        encodeJson({
          state: "committed",
          branch,
          versions: [{ version: 5, manifestEtag: "e", cancelled }],
        }),
      );
    }
    expect((await append(ctx)).version).toBe(6);
  });

  it("a handle from writeDataFile is fresh for its first commit only: a second commit naming it covers it with an intent", async () => {
    const { ctx, memory, counting } = setup();
    await history(ctx);
    const file = await writeDataFile(ctx, bytes("twice"));
    let before = { ...counting.requestCounts() };
    await commitVersion(ctx, { branch: "main", files: [file] });
    expect(delta(counting, before)).toMatchObject({ put: 2, head: 0, list: 0 });
    before = { ...counting.requestCounts() };
    await commitVersion(ctx, {
      branch: "other",
      parent: { branch: "main", version: 6 },
      files: [file],
    });
    // PUT intent, LIST records, HEAD file, HEAD intent, ..., DELETE intent.
    expect(delta(counting, before)).toMatchObject({ head: 2, list: 2, delete: 1 });
    expect(memory.keys().filter((k) => k.startsWith(COMMIT_INTENT_PREFIX))).toEqual([]);
  });
});
