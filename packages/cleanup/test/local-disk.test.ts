import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore, LOCAL_INTERNAL_PREFIX, type LocalSync } from "@holdfast/backends-local";
import {
  type DeleteManyOptions,
  type DeleteOptions,
  type ListOptions,
  listAll,
  type ObjectStore,
  type PutOptions,
} from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { createContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterEach, describe, expect, it } from "vitest";
import { cleanup } from "../src/index.js";

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

describe("cleanup on the local filesystem backend", () => {
  it("deletes data files and manifests as create-only batches: no key lock file per deleted key (docs/protocol.md §1)", async () => {
    const root = await mkdtemp(join(tmpdir(), "holdfast-cleanup-local-"));
    roots.push(root);
    const store = createLocalStore({ root, fsync: false });
    const ctx = createContext(store);
    await initDataset(ctx);
    for (let v = 1; v <= 40; v += 1) {
      const files = [
        await writeDataFile(ctx, new TextEncoder().encode(`a${v}`)),
        await writeDataFile(ctx, new TextEncoder().encode(`b${v}`)),
      ];
      await commitVersion(ctx, { branch: "main", files });
    }
    const locks = join(root, LOCAL_INTERNAL_PREFIX, "locks");
    const lockFiles = () => (existsSync(locks) ? readdirSync(locks).length : 0);
    const before = lockFiles();
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0 },
      { format: holdfastFormat },
    );
    expect(stats.objectsDeleted).toMatchObject({ manifests: 39, dataFiles: 78 });
    const left: string[] = [];
    for await (const meta of listAll(store, "data/")) left.push(meta.key);
    expect(left).toHaveLength(2);
    // 117 deleted keys would spread over ~95 of the 256 lock stripes; only the keys the run
    // compare-and-swaps (cleanup lock, retirement record, head hint) may add lock files.
    expect(lockFiles() - before).toBeLessThanOrEqual(4);
  });

  it("the commit and the deletion mark are durable before the first file is deleted; drain, seal and lock are not (docs/protocol.md §5.10)", async () => {
    const root = await mkdtemp(join(tmpdir(), "holdfast-cleanup-durable-"));
    roots.push(root);
    const log: LogEntry[] = [];
    const local = createLocalStore({
      root,
      onSync: (sync) => log.push({ type: "sync", sync }),
    });
    const ctx = createContext(local);
    await initDataset(ctx);
    for (let v = 1; v <= 6; v += 1) {
      const files = [await writeDataFile(ctx, new TextEncoder().encode(`a${v}`))];
      await commitVersion(ctx, { branch: "main", files });
    }
    log.length = 0;
    const stats = await cleanup(
      createContext(new LoggingStore(local, log)),
      { retainVersions: 1, minVersionAgeMs: 0 },
      { format: holdfastFormat },
    );
    expect(stats.objectsDeleted).toMatchObject({ manifests: 5, dataFiles: 5 });

    // What each record or lock write synced: the syncs of its key between its start and end.
    const writes = log.flatMap((entry, at) => {
      if (entry.type !== "put") return [];
      const end = log.findIndex((e, i) => i > at && e.type === "put-done" && e.id === entry.id);
      // `folder`: the key's own folder (its name made durable); a folder the write had to
      // make is synced in its parent whatever the durability, and is not counted here.
      const own = entry.key.slice(0, entry.key.lastIndexOf("/"));
      const synced = log
        .slice(at, end)
        .flatMap((e) =>
          e.type === "sync" &&
          e.sync.key === entry.key &&
          (e.sync.target === "file" || e.sync.path === own)
            ? [e.sync.target]
            : [],
        );
      return [{ what: entry.what, at, end, synced }];
    });
    const firstDelete = log.findIndex((e) => e.type === "deleteMany");
    expect(firstDelete).toBeGreaterThan(0);
    const whats = writes.map((w) => w.what);
    expect(whats).toEqual(["lock", "draining", "sealed", "committed", "marked"]);
    for (const w of writes) {
      if (w.what === "committed" || w.what === "marked") {
        // Invariant 7: nothing is deleted unless the commit and the mark survive a power loss.
        expect(w.synced, w.what).toEqual(["file", "folder"]);
        expect(w.end, w.what).toBeLessThan(firstDelete);
      } else {
        // Their loss looks like a crash before them; still never torn (the file is synced).
        expect(w.synced, w.what).toEqual(["file"]);
      }
    }
  });
});

type LogEntry =
  | { type: "sync"; sync: LocalSync }
  | { type: "put"; id: number; key: string; what: string }
  | { type: "put-done"; id: number }
  | { type: "deleteMany"; keys: readonly string[] };

/** Logs record and lock writes (by the state they write) and batch deletes, in order. */
class LoggingStore implements ObjectStore {
  readonly backend: string;
  readonly location: string;
  readonly capabilities: ObjectStore["capabilities"];
  #next = 0;

  constructor(
    private readonly inner: ObjectStore,
    private readonly log: LogEntry[],
  ) {
    this.backend = inner.backend;
    this.location = inner.location;
    this.capabilities = inner.capabilities;
  }

  get(key: string, options?: { signal?: AbortSignal | undefined }) {
    return this.inner.get(key, options);
  }
  head(key: string, options?: { signal?: AbortSignal | undefined }) {
    return this.inner.head(key, options);
  }
  async put(key: string, body: Uint8Array, options?: PutOptions) {
    const what = key.startsWith("_holdfast/retirement/")
      ? recordWhat(body)
      : key === "_holdfast/cleanup/lock.json"
        ? "lock"
        : null;
    if (what === null) return this.inner.put(key, body, options);
    const id = this.#next++;
    this.log.push({ type: "put", id, key, what });
    try {
      return await this.inner.put(key, body, options);
    } finally {
      this.log.push({ type: "put-done", id });
    }
  }
  delete(key: string, options?: DeleteOptions) {
    return this.inner.delete(key, options);
  }
  deleteMany(keys: readonly string[], options?: DeleteManyOptions) {
    this.log.push({ type: "deleteMany", keys });
    return this.inner.deleteMany(keys, options);
  }
  list(prefix: string, options?: ListOptions) {
    return this.inner.list(prefix, options);
  }
}

function recordWhat(body: Uint8Array): string {
  const record = JSON.parse(new TextDecoder().decode(body)) as {
    state: string;
    deletionStartedAt?: string;
  };
  return record.deletionStartedAt === undefined ? record.state : "marked";
}
