import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { seededIds } from "@holdfast/conditional-store";
import { FaultStore, recordingSleep } from "@holdfast/conditional-store/testing";
import {
  COMMIT_INTENT_PREFIX,
  COMMIT_RETIREMENT_IN_PROGRESS,
  commitVersion,
  initDataset,
  readManifest,
  writeDataFile,
} from "@holdfast/dataset";
import { createContext, RETIREMENT_ROOT } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";
import { append, missingFiles } from "./append-support.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

/** A dataset of five versions on a real local directory (real mtimes, real clock). */
async function localDataset() {
  const root = await mkdtemp(join(tmpdir(), "holdfast-append-"));
  roots.push(root);
  const local = createLocalStore({ root, fsync: false });
  const ctx = createContext(local, { ids: seededIds(5), sleep: recordingSleep() });
  await initDataset(ctx);
  for (let v = 1; v <= 5; v += 1) {
    const files = [
      await writeDataFile(ctx, new TextEncoder().encode(`a${v}`)),
      await writeDataFile(ctx, new TextEncoder().encode(`b${v}`)),
    ];
    await commitVersion(ctx, { branch: "main", files });
  }
  return { local, ctx };
}

async function keysUnder(store: ReturnType<typeof createLocalStore>, prefix: string) {
  return (await store.list(prefix)).objects.map((o) => o.key);
}

// Versions are seconds old here: the policy retires them at once (minVersionAgeMs 0).
const policy = { retainVersions: 1, minVersionAgeMs: 0 };

describe("appends without sources on the local filesystem backend (docs/protocol.md §2.5, rule H)", () => {
  it("invariant 7: an append committed inside the delete phase lands with every file it names; a restore of a retired version is refused", async () => {
    const { local, ctx } = await localDataset();
    const { manifest: retired } = await readManifest(ctx, "main", 2);
    const cleaner = new FaultStore(local);
    let appended: unknown;
    let restored: unknown;
    cleaner.on(
      { operation: "deleteMany", nth: 1 },
      {
        type: "before",
        run: async () => {
          expect(await keysUnder(local, RETIREMENT_ROOT)).toHaveLength(1);
          appended = await append(ctx).catch((e: unknown) => e);
          restored = await commitVersion(ctx, {
            branch: "main",
            files: retired.files.map((f) => ({ ...f })),
          }).catch((e: unknown) => e);
        },
      },
    );
    const stats = await cleanup({ ...ctx, store: cleaner }, policy, {
      format: holdfastFormat,
    });
    expect(stats.retired).toHaveLength(4);
    expect(appended).toMatchObject({ version: 6 });
    expect(restored).toMatchObject({ kind: "refused", code: COMMIT_RETIREMENT_IN_PROGRESS });
    expect(await missingFiles(ctx, local, 6)).toEqual([]);
    expect(await keysUnder(local, "_versions/main/")).toHaveLength(2);
    expect(await keysUnder(local, COMMIT_INTENT_PREFIX)).toEqual([]);
    expect(await keysUnder(local, RETIREMENT_ROOT)).toEqual([]);
  });
});
