import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createLocalStore,
  LOCAL_BACKEND,
  LOCAL_INTERNAL_PREFIX,
  LOCAL_SELF_NAME,
  LOCAL_UNMAPPABLE_NAME,
  toHoldfastError,
} from "@holdfast/backends-local";
import { isHoldfastError, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { afterAll, describe, expect, it } from "vitest";
import { keyPaths } from "../src/layout.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const getChild = fileURLToPath(new URL("./fixtures/get-child.ts", import.meta.url));
const base = mkdtempSync(join(tmpdir(), "holdfast-local-layout-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const freshRoot = () => {
  n += 1;
  return join(base, `root-${n}`);
};
const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
const INTERNAL = LOCAL_INTERNAL_PREFIX.slice(0, -1);

async function keys(store: ObjectStore, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const meta of listAll(store, prefix)) out.push(meta.key);
  return out;
}

/** Every file under `dir`, relative, sorted (to see exactly what the store left on disk). */
function tree(dir: string, rel = ""): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? tree(join(dir, e.name), `${rel}${e.name}/`) : [`${rel}${e.name}`],
    )
    .sort();
}

/** The tree without the backend's private folder: what a user of the directory sees. */
const userTree = (dir: string) => tree(dir).filter((p) => !p.startsWith(`${INTERNAL}/`));

/** Every directory under `dir` (relative), to check that deletes leave no empty folder. */
function dirs(dir: string, rel = ""): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => [`${rel}${e.name}/`, ...dirs(join(dir, e.name), `${rel}${e.name}/`)])
    .filter((p) => !p.startsWith("_holdfast/"))
    .sort();
}

function writeForeign(root: string, key: string, content: string | Buffer): string {
  const path = join(root, key);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return path;
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe("local store file layout: plain files", () => {
  it("describes itself", () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    expect(store.backend).toBe(LOCAL_BACKEND);
    expect(store.location).toBe(`file://${root}`);
    expect(store.capabilities.requestMode).toBe("completes-before-answer");
    expect(store.capabilities.etagIsContentHash).toBe(false);
  });

  it("a holdfast-written object is the byte-identical plain file <root>/<key>", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const body = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7) % 256));
    await store.put("data/x.lance", body, { precondition: { ifNoneMatch: "*" } });
    await store.put("_versions/1.manifest", bytes("manifest one"));
    expect(readFileSync(join(root, "data/x.lance")).equals(body)).toBe(true);
    expect(readFileSync(join(root, "_versions/1.manifest"), "utf8")).toBe("manifest one");
    // `cat` reads it like any file: no header, no suffix.
    expect(execFileSync("cat", [join(root, "data/x.lance")]).equals(body)).toBe(true);
    expect(userTree(root)).toEqual(["_versions/1.manifest", "data/x.lance"]);
  });

  it("files written by other programs (cat, fs.writeFile) are listed, read and conditionally replaced", async () => {
    const root = freshRoot();
    mkdirSync(join(root, "_versions"), { recursive: true });
    execFileSync("sh", ["-c", 'cat > "$1"', "sh", join(root, "_versions", "1.manifest")], {
      input: "written by cat",
    });
    writeForeign(root, "data/x.lance", "written by fs.writeFile");
    writeForeign(root, "_versions/.tmp_abc", "a Lance temp file is a plain key too");
    const store = createLocalStore({ root });
    expect(await keys(store)).toEqual([
      "_versions/.tmp_abc",
      "_versions/1.manifest",
      "data/x.lance",
    ]);
    const got = await store.get("_versions/1.manifest");
    expect(text(got!.body)).toBe("written by cat");
    expect(got!.size).toBe(14);
    const listed = (await store.list("data/")).objects[0]!;
    const head = await store.head("data/x.lance");
    expect(head).toEqual(listed);
    expect((await store.get("data/x.lance"))?.etag).toBe(listed.etag);
    await expect(
      store.put("data/x.lance", bytes("other"), { precondition: { ifNoneMatch: "*" } }),
    ).rejects.toMatchObject({ kind: "conflict" });
    const swapped = await store.put("data/x.lance", bytes("replaced by holdfast"), {
      precondition: { ifMatch: listed.etag },
    });
    expect(readFileSync(join(root, "data/x.lance"), "utf8")).toBe("replaced by holdfast");
    expect((await store.head("data/x.lance"))?.etag).toBe(swapped.etag);
  });

  it("a first batch delete of files no holdfast process wrote creates their lock files and deletes every key", async () => {
    const root = freshRoot();
    // A table holdfast never touched: no locks folder, so the batch's concurrent lockers
    // create it and most of the lock files at once.
    const written = Array.from({ length: 600 }, (_, i) => `data/v${i % 40}/f${i}.lance`);
    for (const key of written) writeForeign(root, key, key);
    const store = createLocalStore({ root });
    const result = await store.deleteMany(written);
    expect({ deleted: [...result.deleted].sort(), failed: result.failed }).toEqual({
      deleted: [...written].sort(),
      failed: [],
    });
    expect(userTree(root)).toEqual([]);
    // Each key was unlinked holding its stripe's lock file (the first 8 bits of its SHA-256).
    const stripes = new Set(
      written.map((key) => `${createHash("sha256").update(key).digest("hex").slice(0, 2)}.lock`),
    );
    expect(readdirSync(join(root, INTERNAL, "locks")).sort()).toEqual([...stripes].sort());
  });

  it("reads files on both sides of the direct-read limit byte-exactly, ETag equal to head's", async () => {
    const root = freshRoot();
    mkdirSync(root, { recursive: true });
    const store = createLocalStore({ root });
    const sizes = [0, 1, 65_535, 65_536, 65_537, 1_048_576];
    for (const size of sizes) {
      const body = Uint8Array.from({ length: size }, (_, i) => (i * 31 + size) & 0xff);
      writeFileSync(join(root, `f-${size}`), body);
      const got = await store.get(`f-${size}`);
      expect(got?.size, `${size}`).toBe(size);
      expect(Buffer.from(got!.body).equals(Buffer.from(body)), `${size}`).toBe(true);
      expect(got?.etag).toBe((await store.head(`f-${size}`))?.etag);
    }
  });

  it("a FIFO another program put at a key's path is no object: get and head answer null at once", () => {
    // The open of a get is a direct call (packages/backends-local/README.md, "Reads"): a blocking
    // open of a FIFO would hold the event loop until a writer came, here forever.
    const root = freshRoot();
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, "plain"), "x");
    execFileSync("mkfifo", [join(root, "pipe")]);
    const run = (key: string) =>
      spawnSync(
        process.execPath,
        ["--import", "tsx", "--conditions=@holdfast/source", getChild, root, key],
        { cwd: packageDir, encoding: "utf8", timeout: 20_000, killSignal: "SIGKILL" },
      );
    const pipe = run("pipe");
    expect(pipe.signal, pipe.stderr).toBeNull();
    expect(JSON.parse(pipe.stdout)).toEqual({ got: null, head: null });
    // The same child reads a plain file (so a null above is the FIFO's, not a broken child).
    expect(JSON.parse(run("plain").stdout)).toEqual({ got: 1, head: 1 });
  });

  it("an in-place rewrite by another program that changes the size changes the ETag", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    await store.put("k", bytes("v1"));
    const before = (await store.head("k"))!.etag;
    writeFileSync(join(root, "k"), "v2 and longer"); // same inode, new size and mtime
    const after = (await store.head("k"))!.etag;
    expect(after).not.toBe(before);
    await expect(
      store.put("k", bytes("v3"), { precondition: { ifMatch: before } }),
    ).rejects.toMatchObject({ kind: "conflict" });
  });

  it("R9 rewriting identical bytes in the same clock millisecond still changes the ETag (fencing)", async () => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 0, 456);
    const store = createLocalStore({ root: freshRoot(), clock: { now: () => now } });
    const first = await store.put("fence", bytes("identical"));
    const etags = new Set([first.etag]);
    let current = first.etag;
    for (let i = 0; i < 20; i += 1) {
      current = (
        await store.put("fence", bytes("identical"), { precondition: { ifMatch: current } })
      ).etag;
      etags.add(current);
    }
    expect(etags.size).toBe(21);
    await expect(
      store.put("fence", bytes("identical"), { precondition: { ifMatch: first.etag } }),
    ).rejects.toMatchObject({ kind: "conflict" });
    // Each rewrite is stamped a few µs after the one before: 21 of them stay within 2 ms.
    const stamped = (await store.head("fence"))?.lastModified.getTime() ?? 0;
    expect(stamped).toBeGreaterThanOrEqual(now);
    expect(stamped).toBeLessThan(now + 2);
  });

  it("`a/b` and `a/b/c` coexist: `a/b` becomes a folder holding its self file, ETag unchanged", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const { etag } = await store.put("a/b", bytes("outer"));
    await store.put("a/b.txt", bytes("sibling between a/b and a/b/"));
    await store.put("a/b/c", bytes("inner"), { precondition: { ifNoneMatch: "*" } });
    expect(userTree(root)).toEqual([`a/b.txt`, `a/b/${LOCAL_SELF_NAME}`, "a/b/c"]);
    expect((await store.head("a/b"))?.etag).toBe(etag);
    expect(text((await store.get("a/b"))!.body)).toBe("outer");
    expect(await keys(store)).toEqual(["a/b", "a/b.txt", "a/b/c"]);
    expect(await keys(store, "a/b")).toEqual(["a/b", "a/b.txt", "a/b/c"]);
    expect(await keys(store, "a/b/")).toEqual(["a/b/c"]);
    expect((await store.list("a/", { startAfter: "a/b" })).objects.map((o) => o.key)).toEqual([
      "a/b.txt",
      "a/b/c",
    ]);
    // The self file is the object: create-only conflicts, compare-and-swap replaces it.
    await expect(
      store.put("a/b", bytes("again"), { precondition: { ifNoneMatch: "*" } }),
    ).rejects.toMatchObject({ kind: "conflict" });
    const swapped = await store.put("a/b", bytes("outer v2"), { precondition: { ifMatch: etag } });
    expect(readFileSync(join(root, "a/b", LOCAL_SELF_NAME), "utf8")).toBe("outer v2");
    await store.put("a/b", bytes("outer v3"));
    expect(text((await store.get("a/b"))!.body)).toBe("outer v3");
    expect((await store.head("a/b"))?.etag).not.toBe(swapped.etag);
    // Deleting the inner key keeps the folder (it holds a/b); deleting a/b removes it.
    await store.delete("a/b/c");
    expect(await keys(store, "a/")).toEqual(["a/b", "a/b.txt"]);
    await store.delete("a/b");
    expect(userTree(root)).toEqual(["a/b.txt"]);
    // Now a/b is a plain file again.
    await store.put("a/b", bytes("plain again"), { precondition: { ifNoneMatch: "*" } });
    expect(readFileSync(join(root, "a/b"), "utf8")).toBe("plain again");
  });

  it("while a file becomes a folder, readers always find it and a create-only of it conflicts (40 rounds)", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root, fsync: false });
    const reader = createLocalStore({ root, fsync: false });
    for (let round = 0; round < 40; round += 1) {
      const key = `swap/${round}`;
      const { etag } = await store.put(key, bytes(`outer ${round}`));
      const seen: (string | null)[] = [];
      let converting = true;
      const readers = Array.from({ length: 4 }, async () => {
        while (converting) {
          seen.push((await reader.head(key))?.etag ?? null);
          seen.push((await reader.get(key))?.etag ?? null);
        }
      });
      const creates = Array.from({ length: 4 }, () =>
        reader.put(key, bytes("intruder"), { precondition: { ifNoneMatch: "*" } }).then(
          () => "applied",
          (e: unknown) => (e as { kind?: string }).kind,
        ),
      );
      await store.put(`${key}/inner`, bytes("inner"), { precondition: { ifNoneMatch: "*" } });
      converting = false;
      await Promise.all(readers);
      expect(await Promise.all(creates)).toEqual(["conflict", "conflict", "conflict", "conflict"]);
      expect({ round, seen: [...new Set(seen)] }).toEqual({ round, seen: [etag] });
      expect(text((await store.get(key))!.body)).toBe(`outer ${round}`);
    }
  });

  it("a key created after keys below it goes to the folder's self file; listing looks it up between siblings", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    await store.put("t/x/y", bytes("inner"));
    await store.put("t/x-1", bytes("sorts between t/x and t/x/"));
    const { etag } = await store.put("t/x", bytes("outer"), { precondition: { ifNoneMatch: "*" } });
    expect(userTree(root)).toEqual(["t/x-1", `t/x/${LOCAL_SELF_NAME}`, "t/x/y"]);
    expect(await keys(store)).toEqual(["t/x", "t/x-1", "t/x/y"]);
    const page = await store.list("t/", { pageSize: 1 });
    expect(page.objects.map((o) => [o.key, o.etag])).toEqual([["t/x", etag]]);
    const second = await store.list("t/", { pageSize: 1, pageToken: page.nextPageToken });
    expect(second.objects.map((o) => o.key)).toEqual(["t/x-1"]);
  });

  it("deletes remove the folders they empty, and never a folder that still holds something", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    await store.put("x/y/z/k", bytes("1"));
    await store.put("x/y/other", bytes("2"));
    await store.put("x/w/k", bytes("3"));
    await store.delete("x/y/z/k");
    expect(dirs(root)).toEqual(["x/", "x/w/", "x/y/"]);
    await store.deleteMany(["x/y/other", "x/w/k"]);
    expect(dirs(root)).toEqual([]);
    expect(userTree(root)).toEqual([]);
  });

  it("a create-only batch delete takes no key lock: no lock file is created, folders synced and removed", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const written = Array.from({ length: 300 }, (_, i) => `data/${i}.lance`).concat(["m/1", "m/2"]);
    for (const key of written) {
      await store.put(key, bytes(key), { precondition: { ifNoneMatch: "*" } });
    }
    const locks = join(root, INTERNAL, "locks");
    const lockFiles = () => (existsSync(locks) ? readdirSync(locks).length : 0);
    expect(lockFiles()).toBe(0); // create-only puts take no lock either
    const result = await store.deleteMany([...written, "data/missing"], { createOnly: true });
    expect(result.failed).toEqual([]);
    expect(result.deleted.sort()).toEqual([...written, "data/missing"].sort());
    expect(lockFiles()).toBe(0);
    expect(dirs(root)).toEqual([]);
    // Without the statement the same batch takes the key locks (R3), creating their files.
    for (const key of written) await store.put(key, bytes(key));
    const locked = await store.deleteMany(written);
    expect(locked.failed).toEqual([]);
    expect(lockFiles()).toBeGreaterThan(100);
  });

  it("concurrent deletes that empty and remove a folder all succeed with fsync on (20 rounds)", async () => {
    const store = createLocalStore({ root: freshRoot() });
    for (let round = 0; round < 20; round += 1) {
      const batch = Array.from({ length: 12 }, (_, i) => `gone/${round}/f/${i}`);
      for (const key of batch) await store.put(key, bytes(key));
      const result = await store.deleteMany(batch);
      expect({ round, failed: result.failed.map((f) => [f.key, f.error.code]) }).toEqual({
        round,
        failed: [],
      });
      expect(await keys(store, `gone/${round}/`)).toEqual([]);
    }
  });

  it("creates whose folders are being emptied and removed meanwhile still land (100 rounds)", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root, fsync: false });
    const other = createLocalStore({ root, fsync: false });
    for (let round = 0; round < 100; round += 1) {
      // The delete removes race/<round>/d/e, then d, then race/<round> while they are empty;
      // each create makes the folders it needs, some of them at the same moment.
      await store.put(`race/${round}/d/e/old`, bytes("old"));
      const fresh = [`race/${round}/d/e/new`, `race/${round}/d/f/new`, `race/${round}/g/new`];
      const [, ...created] = await Promise.all([
        store.delete(`race/${round}/d/e/old`),
        ...fresh.map((key) => other.put(key, bytes("new"), { precondition: { ifNoneMatch: "*" } })),
      ]);
      expect(created.every((c) => typeof c.etag === "string")).toBe(true);
      expect({ round, keys: await keys(store, `race/${round}/`) }).toEqual({
        round,
        keys: fresh.sort(),
      });
    }
  });

  it("temp and lock files live under _holdfast/.local/, which is never listed and refuses keys", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const { etag } = await store.put("k/1", bytes("v1"));
    await store.put("k/1", bytes("v2"), { precondition: { ifMatch: `${etag}x` } }).catch(() => {});
    await store.put("k/1", bytes("v3"), { precondition: { ifNoneMatch: "*" } }).catch(() => {});
    await store.put("k/1", bytes("v4"), { precondition: { ifMatch: etag } });
    await store.put("_holdfast/leases/main/1.json", bytes("a holdfast key under _holdfast/"));
    expect(userTree(root)).toEqual(["_holdfast/leases/main/1.json", "k/1"]);
    expect(await keys(store)).toEqual(["_holdfast/leases/main/1.json", "k/1"]);
    expect(tree(join(root, INTERNAL, "tmp"))).toEqual([]);
    await store.delete("k/1");
    await store.deleteMany(["_holdfast/leases/main/1.json", "k/2", "k/3"]);
    // Lock files are permanent, empty, and spread over at most 256 names by key hash.
    const locks = tree(join(root, INTERNAL)).filter((p) => !p.startsWith("tmp/"));
    expect(locks.length).toBeGreaterThan(0);
    for (const lock of locks) expect(lock).toMatch(/^locks\/[0-9a-f]{2}\.lock$/);
    for (const key of [`${INTERNAL}/tmp/x`, INTERNAL, `a/${LOCAL_SELF_NAME}`, "old/x.hfobj"]) {
      const error = await errorOf(store.put(key, bytes("x")));
      expect({ key, kind: (error as { kind?: string }).kind }).toEqual({
        key,
        kind: "invalid-input",
      });
    }
  });

  it("invariant 8: a listing stops at a name it cannot map, naming the file; other folders still list", async () => {
    const foreign: [string, (root: string) => void][] = [
      ["dir/back\\slash", (root) => writeForeign(root, "dir/back\\slash", "x")],
      ["dir/ctl\u0001", (root) => writeForeign(root, "dir/ctl\u0001", "x")],
      ["dir/v1.json.hfobj", (root) => writeForeign(root, "dir/v1.json.hfobj", "x")],
      [
        "dir/old.hfobj",
        (root) => mkdirSync(join(root, "dir", "old.hfobj", "in"), { recursive: true }),
      ],
      [
        `dir/${LOCAL_SELF_NAME}`,
        (root) => mkdirSync(join(root, "dir", LOCAL_SELF_NAME, "x"), { recursive: true }),
      ],
      ["dir/link", (root) => symlinkSync("/etc/hostname", join(root, "dir", "link"))],
    ];
    for (const [path, make] of foreign) {
      const root = freshRoot();
      const store = createLocalStore({ root });
      await store.put("dir/real", bytes("real"));
      await store.put("other/k", bytes("k"));
      make(root);
      for (const prefix of ["", "dir/", "dir"]) {
        const error = await errorOf(keys(store, prefix));
        expect({ path, prefix, kind: (error as { kind?: string }).kind }).toEqual({
          path,
          prefix,
          kind: "invalid-input",
        });
        expect(error).toMatchObject({ code: LOCAL_UNMAPPABLE_NAME, key: path });
      }
      // A listing whose range cannot hold the file is unaffected, and nothing outside the
      // root was read (the symlink's target is never followed).
      expect(await keys(store, "other/")).toEqual(["other/k"]);
    }
  });

  it("invariant 8: a self-file name at the root stops the listing (no key can own it)", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    await store.put("k", bytes("k"));
    writeForeign(root, LOCAL_SELF_NAME, "x");
    await expect(keys(store)).rejects.toMatchObject({
      kind: "invalid-input",
      code: LOCAL_UNMAPPABLE_NAME,
      key: LOCAL_SELF_NAME,
    });
  });

  it("refuses a root in the old wrapped layout with a typed error that says so", async () => {
    const layouts: [string, () => void][] = [
      ["dataset", () => writeForeign(currentRoot, "_holdfast/dataset.json.hfobj", "HFO1...")],
      ["root object", () => writeForeign(currentRoot, "k.hfobj", "HFO1...")],
      [
        "old lock folder",
        () => mkdirSync(join(currentRoot, ".holdfast-locks"), { recursive: true }),
      ],
    ];
    let currentRoot = "";
    for (const [what, make] of layouts) {
      currentRoot = freshRoot();
      make();
      const store = createLocalStore({ root: currentRoot });
      for (const attempt of [store.list(""), store.get("k"), store.put("k", bytes("x"))]) {
        const error = await errorOf(attempt);
        expect(isHoldfastError(error, "unsupported")).toBe(true);
        expect({ what, code: (error as { code?: string }).code }).toEqual({
          what,
          code: "LOCAL_OLD_LAYOUT",
        });
      }
      expect(existsSync(join(currentRoot, "k"))).toBe(false);
    }
  });

  it("R3 compare-and-swap cannot resurrect a concurrent delete (one process, two store instances)", async () => {
    const root = freshRoot();
    const writer = createLocalStore({ root });
    const deleter = createLocalStore({ root });
    for (let round = 0; round < 40; round += 1) {
      const { etag } = await writer.put("r3/key", bytes(`base ${round}`));
      const results = await Promise.allSettled([
        writer.put("r3/key", bytes(`cas ${round}`), { precondition: { ifMatch: etag } }),
        deleter.delete("r3/key"),
        writer.put("r3/key", bytes(`cas2 ${round}`), { precondition: { ifMatch: etag } }),
      ]);
      expect(results[1].status).toBe("fulfilled");
      for (const r of [results[0], results[2]]) {
        if (r.status === "rejected") expect(isHoldfastError(r.reason, "conflict")).toBe(true);
      }
      expect({ round, after: await writer.head("r3/key") }).toEqual({ round, after: null });
    }
  });

  it("R3 a batch delete racing compare-and-swaps never leaves the key behind (40 rounds)", async () => {
    const root = freshRoot();
    const writer = createLocalStore({ root });
    const deleter = createLocalStore({ root });
    for (let round = 0; round < 40; round += 1) {
      const batch = Array.from({ length: 6 }, (_, i) => `r3/batch/${round}/${i}`);
      const etags = await Promise.all(batch.map((key) => writer.put(key, bytes(`base ${key}`))));
      const swaps = batch.flatMap((key, i) =>
        [1, 2].map((n) =>
          writer.put(key, bytes(`cas ${n} ${key}`), { precondition: { ifMatch: etags[i]!.etag } }),
        ),
      );
      const [result, ...swapped] = await Promise.allSettled([deleter.deleteMany(batch), ...swaps]);
      expect(result.status === "fulfilled" && result.value.failed).toEqual([]);
      for (const r of swapped) {
        if (r.status === "rejected") expect(isHoldfastError(r.reason, "conflict")).toBe(true);
      }
      // Every delete answered success, so no swap may have recreated a key after it.
      expect({ round, left: await keys(writer, `r3/batch/${round}/`) }).toEqual({
        round,
        left: [],
      });
    }
  });

  it("rejects a segment too long for a file name before writing anything", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const error = await errorOf(store.put(`long/${"s".repeat(256)}`, bytes("x")));
    expect(isHoldfastError(error, "invalid-input")).toBe(true);
    expect(tree(root)).toEqual([]);
    // The limit is in UTF-8 bytes, not characters: 86 × "€" is 258 bytes in 86 units, 64
    // emoji are 256 bytes in 128 units; 85 × "€" and 63 emoji + "abc" are 255 bytes.
    for (const segment of ["\u20ac".repeat(86), "\u{1f600}".repeat(64)]) {
      const refused = await errorOf(store.put(`long/${segment}`, bytes("x")));
      expect(isHoldfastError(refused, "invalid-input")).toBe(true);
    }
    expect(tree(root)).toEqual([]);
    for (const segment of ["\u20ac".repeat(85), `${"\u{1f600}".repeat(63)}abc`]) {
      await store.put(`fits/${segment}`, bytes("x"));
      expect((await store.get(`fits/${segment}`))?.size).toBe(1);
    }
  });

  it("refuses a missing root when createRoot is false, and a root that is a file", async () => {
    const missing = createLocalStore({ root: join(freshRoot(), "missing"), createRoot: false });
    expect(isHoldfastError(await errorOf(missing.put("k", bytes("x"))), "refused")).toBe(true);
    n += 1;
    const file = join(base, `file-${n}`);
    writeFileSync(file, "x");
    const notDir = createLocalStore({ root: file });
    expect(isHoldfastError(await errorOf(notDir.list("")), "refused")).toBe(true);
  });

  it("stamps Last-Modified from the injected clock at the declared precision", async () => {
    const now = Date.UTC(2026, 10, 29, 8, 0, 0, 123);
    const fine = createLocalStore({ root: freshRoot(), clock: { now: () => now } });
    await fine.put("t", bytes("x"));
    expect((await fine.head("t"))?.lastModified.getTime()).toBe(now);
    expect((await fine.get("t"))?.lastModified.getTime()).toBe(now);
    const coarse = createLocalStore({
      root: freshRoot(),
      clock: { now: () => now },
      timestampPrecisionMs: 1000,
    });
    expect(coarse.capabilities.timestampPrecisionMs).toBe(1000);
    await coarse.put("t", bytes("x"));
    const listed = await coarse.list("");
    expect(listed.objects[0]?.lastModified.getTime()).toBe(now - 123);
  });

  it("rejects malformed page tokens and options, and honours an aborted signal", async () => {
    const store = createLocalStore({ root: freshRoot() });
    expect(
      isHoldfastError(await errorOf(store.list("", { pageToken: "!!" })), "invalid-input"),
    ).toBe(true);
    expect(() => createLocalStore({ root: "" })).toThrow(
      expect.objectContaining({ kind: "invalid-input" }),
    );
    expect(() => createLocalStore({ root: "/tmp/x", maxBatchDelete: 0 })).toThrow(
      expect.objectContaining({ kind: "invalid-input" }),
    );
    for (const precondition of [{ ifMatch: "" }, { ifNoneMatch: "x" }, {}] as never[]) {
      const error = await errorOf(store.put("k", bytes("x"), { precondition }));
      expect(isHoldfastError(error, "invalid-input")).toBe(true);
    }
    const aborted = AbortSignal.abort();
    expect(
      isHoldfastError(await errorOf(store.put("k", bytes("x"), { signal: aborted })), "aborted"),
    ).toBe(true);
    expect(await store.head("k")).toBeNull();
  });

  it("maps node:fs errors into the taxonomy in one place", () => {
    const errno = (code: string) => Object.assign(new Error(code), { code });
    const create = { ifNoneMatch: "*" } as const;
    const cas = { ifMatch: "e" };
    expect(toHoldfastError(errno("EEXIST"), "put", "k", create).kind).toBe("conflict");
    expect(toHoldfastError(errno("ENOENT"), "put", "k", cas).kind).toBe("conflict");
    expect(toHoldfastError(errno("ENOENT"), "put", "k").kind).toBe("refused");
    expect(toHoldfastError(errno("EACCES"), "put", "k").kind).toBe("auth");
    expect(toHoldfastError(errno("EPERM"), "get", "k").kind).toBe("auth");
    expect(toHoldfastError(errno("ENOSPC"), "put", "k").kind).toBe("refused");
    expect(toHoldfastError(errno("EXDEV"), "put", "k").kind).toBe("unsupported");
    expect(toHoldfastError(errno("ENAMETOOLONG"), "put", "k").kind).toBe("invalid-input");
    const mapped = toHoldfastError(errno("EIO"), "put", "k", cas);
    expect(mapped).toMatchObject({ kind: "refused", code: "EIO", key: "k", precondition: cas });
  });

  it("lists a folder in UTF-8 byte order where UTF-16 order differs (a surrogate pair beside U+E000-U+FFFF)", async () => {
    // UTF-16 puts 😀 (D83D DE00) before ～ (FF5E); UTF-8 puts it after (F0... > EF...).
    const store = createLocalStore({ root: freshRoot(), fsync: false, pageSize: 2 });
    const names = ["o/😀", "o/～", "o/a", "o/\uE000", "o/z/😀", "o/～/x"];
    for (const key of names) await store.put(key, bytes(key));
    const expected = ["o/a", "o/z/😀", "o/\uE000", "o/～", "o/～/x", "o/😀"];
    expect(await keys(store, "o/")).toEqual(expected);
    expect(await keys(store, "")).toEqual(expected);
    // A folder without such names is ordered the same way by the engine's comparison.
    for (const key of ["p/b", "p/a/c", "p/a", "p/ä", "p/B"]) await store.put(key, bytes(key));
    expect(await keys(store, "p/")).toEqual(["p/B", "p/a", "p/a/c", "p/b", "p/ä"]);
  });

  it("creates nested directories on demand and lists an empty or missing prefix as empty", async () => {
    const root = freshRoot();
    mkdirSync(root);
    const store = createLocalStore({ root, fsync: false });
    expect(await keys(store, "nothing/")).toEqual([]);
    await store.put("deep/er/and/deeper/key", bytes("x"));
    expect(await keys(store, "deep/er/")).toEqual(["deep/er/and/deeper/key"]);
    expect(readFileSync(join(root, "deep/er/and/deeper/key"), "utf8")).toBe("x");
  });

  it("maps a key to <root>/<key> from a root given unnormalized (trailing slash, ./ and ../ parts)", async () => {
    const root = freshRoot();
    mkdirSync(join(root, "sub"), { recursive: true });
    const store = createLocalStore({ root: `${root}/./sub/../`, fsync: false });
    await store.put("a/b", bytes("ab"));
    await store.put("a/b/c", bytes("abc")); // a/b becomes a folder holding its self file
    expect(readFileSync(join(root, "a/b", LOCAL_SELF_NAME), "utf8")).toBe("ab");
    expect(readFileSync(join(root, "a/b/c"), "utf8")).toBe("abc");
    expect(await keys(store, "a/")).toEqual(["a/b", "a/b/c"]);
    expect(new TextDecoder().decode((await store.get("a/b"))?.body)).toBe("ab");
    expect((await store.deleteMany(["a/b/c", "a/b"], { createOnly: true })).failed).toEqual([]);
    expect(existsSync(join(root, "a"))).toBe(false);
  });

  it("keyPaths concatenates what path.join would normalize, the filesystem root included", () => {
    for (const root of ["/", "/srv/data", "/srv/data/t.lance"]) {
      for (const key of ["k", "a/b", "data/x.lance", "_versions/1.manifest", "o/😀/～"]) {
        const paths = keyPaths(root, key, "get");
        expect(paths.path).toBe(join(root, key));
        expect(paths.self).toBe(join(root, key, LOCAL_SELF_NAME));
      }
    }
  });
});
