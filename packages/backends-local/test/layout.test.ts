import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createLocalStore,
  decodeSegment,
  encodeSegment,
  LOCAL_BACKEND,
  LOCAL_LOCK_DIR,
  toHoldfastError,
} from "@holdfast/backends-local";
import { isHoldfastError, listAll, type ObjectStore } from "@holdfast/conditional-store";
import { afterAll, describe, expect, it } from "vitest";

const base = mkdtempSync(join(tmpdir(), "holdfast-local-layout-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const freshRoot = () => {
  n += 1;
  return join(base, `root-${n}`);
};
const bytes = (s: string) => new TextEncoder().encode(s);

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

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (error: unknown) => error,
  );
}

describe("local store file layout", () => {
  it("describes itself", () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    expect(store.backend).toBe(LOCAL_BACKEND);
    expect(store.location).toBe(`file://${root}`);
    expect(store.capabilities.requestMode).toBe("completes-before-answer");
  });

  it("stores `a/b` and `a/b/c` side by side as a/b.hfobj and a/b/c.hfobj", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    await store.put("a/b", bytes("outer"));
    await store.put("a/b/c", bytes("inner"));
    expect(tree(root).filter((p) => !p.startsWith(LOCAL_LOCK_DIR))).toEqual([
      "a/b.hfobj",
      "a/b/c.hfobj",
    ]);
    expect(await keys(store)).toEqual(["a/b", "a/b/c"]);
    await store.delete("a/b");
    expect(await keys(store)).toEqual(["a/b/c"]);
  });

  it("encodes segments reversibly, never hidden and never looking like an object file", () => {
    const samples = [
      "plain",
      "%",
      "%25",
      "%2E",
      ".hidden",
      "...",
      "x.hfobj",
      ".hfobj",
      "a.hfobj.hfobj",
      "ünï %2e",
      LOCAL_LOCK_DIR,
    ];
    const encoded = samples.map(encodeSegment);
    expect(new Set(encoded).size).toBe(samples.length);
    for (const [i, name] of encoded.entries()) {
      expect(decodeSegment(name)).toBe(samples[i]);
      expect(name.startsWith(".")).toBe(false);
      expect(name.endsWith(".hfobj")).toBe(false);
    }
  });

  it("segment encoding is injective and reversible on 5,000 seeded random segments", () => {
    // Alphabet biased towards the characters the encoding treats specially.
    const alphabet = [..."%.25Eehfobj", "ü", "日", "😀", " ", "-", "_"];
    let state = 0x9e3779b9;
    const next = () => {
      state ^= state << 13;
      state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5;
      state >>>= 0;
      return state;
    };
    const seen = new Map<string, string>();
    for (let i = 0; i < 5000; i += 1) {
      const length = 1 + (next() % 12);
      let segment = "";
      for (let j = 0; j < length; j += 1) segment += alphabet[next() % alphabet.length];
      if (segment === "." || segment === "..") continue;
      const name = encodeSegment(segment);
      expect(decodeSegment(name)).toBe(segment);
      expect(name.startsWith(".")).toBe(false);
      expect(name.endsWith(".hfobj")).toBe(false);
      const previous = seen.get(name);
      if (previous !== undefined) expect(previous).toBe(segment);
      seen.set(name, segment);
    }
    expect(seen.size).toBeGreaterThan(3000);
  });

  it("keeps keys that look like the store's own names apart from them", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const awkward = ["x", "x.hfobj/y", `${LOCAL_LOCK_DIR}/z`, ".tmp.hftmp", "p%2Eq"];
    for (const key of awkward) await store.put(key, bytes(key));
    for (const key of awkward) {
      expect(new TextDecoder().decode((await store.get(key))!.body)).toBe(key);
    }
    expect(await keys(store)).toEqual([...awkward].sort());
  });

  it("leaves no lock file behind a deleted key and no temp file behind a conflict", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const { etag } = await store.put("k/1", bytes("v1"));
    await store
      .put("k/1", bytes("v2"), { precondition: { ifMatch: "0".repeat(32) } })
      .catch(() => {});
    await store.put("k/1", bytes("v3"), { precondition: { ifNoneMatch: "*" } }).catch(() => {});
    await store.put("k/1", bytes("v4"), { precondition: { ifMatch: etag } });
    await store.delete("k/1");
    await store.deleteMany(["k/2", "k/3"]);
    expect(tree(root).filter((p) => p.endsWith(".lock") || p.endsWith(".hftmp"))).toEqual([]);
    expect(await keys(store)).toEqual([]);
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

  it("ignores foreign files and refuses a foreign .hfobj file with a typed error", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    await store.put("dir/real", bytes("real"));
    writeFileSync(join(root, "README.txt"), "not an object");
    writeFileSync(join(root, "dir", ".partial.hftmp"), "leftover temp");
    writeFileSync(join(root, "dir", "fake.hfobj"), "no header here");
    expect(await keys(store, "dir/real")).toEqual(["dir/real"]);
    const error = await errorOf(store.get("dir/fake"));
    expect(isHoldfastError(error, "refused")).toBe(true);
    expect(error).toMatchObject({ code: "EBADOBJ", key: "dir/fake" });
  });

  it("rejects a segment too long for a file name before writing anything", async () => {
    const root = freshRoot();
    const store = createLocalStore({ root });
    const error = await errorOf(store.put(`long/${"s".repeat(250)}`, bytes("x")));
    expect(isHoldfastError(error, "invalid-input")).toBe(true);
    expect(tree(root)).toEqual([]);
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
    const [listed] = await Promise.all([coarse.list("")]);
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

  it("creates nested directories on demand and lists an empty or missing prefix as empty", async () => {
    const root = freshRoot();
    mkdirSync(root);
    const store = createLocalStore({ root, fsync: false });
    expect(await keys(store, "nothing/")).toEqual([]);
    await store.put("deep/er/and/deeper/key", bytes("x"));
    expect(await keys(store, "deep/er/")).toEqual(["deep/er/and/deeper/key"]);
  });
});
