import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore, type LocalSync } from "@holdfast/backends-local";
import { isHoldfastError } from "@holdfast/conditional-store";
import { afterAll, describe, expect, it } from "vitest";

// docs/protocol.md §1 "On a local file system" (Durability): a write's temp file is always
// synced before it becomes the object (never torn); the folder sync that makes its name
// durable is skipped only for `durable: false`.

const base = mkdtempSync(join(tmpdir(), "holdfast-local-durability-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const bytes = (s: string) => new TextEncoder().encode(s);

function observedStore(options: { fsync?: boolean } = {}) {
  n += 1;
  const root = join(base, `root-${n}`);
  const syncs: LocalSync[] = [];
  const store = createLocalStore({ root, ...options, onSync: (s) => syncs.push(s) });
  const of = (key: string) => syncs.filter((s) => s.key === key).map((s) => s.target);
  return { root, store, syncs, of };
}

describe("local store durability", () => {
  it("a durable put (the default) syncs its file, then its folder, for every precondition", async () => {
    const { store, syncs, of } = observedStore();
    await store.put("d/one", bytes("first")); // makes d/ and syncs the root
    syncs.length = 0;
    const created = await store.put("d/two", bytes("a"), { precondition: { ifNoneMatch: "*" } });
    expect(of("d/two")).toEqual(["file", "folder"]);
    expect(syncs.find((s) => s.target === "folder")?.path).toBe("d");
    syncs.length = 0;
    await store.put("d/two", bytes("b"), { precondition: { ifMatch: created.etag } });
    expect(of("d/two")).toEqual(["file", "folder"]);
    syncs.length = 0;
    await store.put("d/two", bytes("c"), { durable: true });
    expect(of("d/two")).toEqual(["file", "folder"]);
  });

  it("durable: false syncs the object's bytes (never torn) but not its folder", async () => {
    const { root, store, syncs, of } = observedStore();
    await store.put("d/one", bytes("first"));
    syncs.length = 0;
    const created = await store.put("d/two", bytes("a"), {
      precondition: { ifNoneMatch: "*" },
      durable: false,
    });
    expect(of("d/two")).toEqual(["file"]);
    const swapped = await store.put("d/two", bytes("bb"), {
      precondition: { ifMatch: created.etag },
      durable: false,
    });
    await store.put("d/three", bytes("c"), { durable: false });
    expect(of("d/two")).toEqual(["file", "file"]);
    expect(of("d/three")).toEqual(["file"]);
    // Visible at once, complete, and a compare-and-swap like any other.
    expect(readFileSync(join(root, "d/two"), "utf8")).toBe("bb");
    expect((await store.head("d/two"))?.etag).toBe(swapped.etag);
  });

  it("folders a non-durable put makes are still synced (later durable writes in them rely on it)", async () => {
    const { store, syncs } = observedStore();
    await store.put("top", bytes("x")); // the root exists
    syncs.length = 0;
    await store.put("a/b/c", bytes("y"), { precondition: { ifNoneMatch: "*" }, durable: false });
    // The root's entry for a/ and a/'s entry for b/; not the new object's own entry in a/b/.
    expect(syncs.map((s) => [s.target, s.path])).toEqual([
      ["file", `_holdfast/.local/tmp/${syncs[0]!.path.split("/").at(-1)}`],
      ["folder", ""],
      ["folder", "a"],
    ]);
  });

  it("a delete syncs its folder unless durable: false; a batch syncs each folder once for all its keys", async () => {
    const { store, syncs, of } = observedStore();
    for (const key of ["d/a", "d/b", "d/c", "e/a", "d/keep"]) await store.put(key, bytes(key));
    syncs.length = 0;
    await store.delete("d/a");
    expect(of("d/a")).toEqual(["folder"]);
    await store.delete("d/b", { durable: false });
    expect(of("d/b")).toEqual([]);
    expect(await store.head("d/b")).toBeNull();
    syncs.length = 0;
    await store.deleteMany(["d/c", "e/a"], { createOnly: true });
    expect(syncs.map((s) => [s.key, s.path]).sort()).toEqual([
      ["d/c", "d"],
      ["e/a", "e"],
    ]);
  });

  it("with fsync off nothing is synced, durable or not", async () => {
    const { store, syncs } = observedStore({ fsync: false });
    await store.put("a/b", bytes("x"), { precondition: { ifNoneMatch: "*" } });
    await store.delete("a/b");
    expect(syncs).toEqual([]);
  });

  it("a durable option that is not a boolean is refused before anything is written", async () => {
    const { store, syncs } = observedStore();
    const bad = { durable: "no" } as unknown as { durable: boolean };
    const put = await store.put("k", bytes("x"), bad).catch((e: unknown) => e);
    expect(isHoldfastError(put, "invalid-input")).toBe(true);
    expect(await store.head("k")).toBeNull();
    await store.put("k", bytes("x"));
    const del = await store.delete("k", bad).catch((e: unknown) => e);
    expect(isHoldfastError(del, "invalid-input")).toBe(true);
    expect(await store.head("k")).not.toBeNull();
    expect(syncs.every((s) => s.key === "k")).toBe(true);
  });
});
