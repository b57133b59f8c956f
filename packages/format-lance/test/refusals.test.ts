import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup, recover } from "@holdfast/cleanup";
import { CountingStore, type ObjectStore } from "@holdfast/conditional-store";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { commit, drain, readRecord, seal } from "@holdfast/retirement";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import {
  isUnsupportedLance,
  type LanceFeature,
  lanceManifestKey,
  openLanceFormat,
} from "../src/index.js";
import { listKeys, localPySite, type PySite, pylance, type Written } from "./pylance.js";

/**
 * A Lance table holdfast does not fully understand is refused before anything is decided
 * (docs/lance.md, "What it refuses"): one version of a pylance 14 table gets one thing
 * pylance 14 never writes (an unimplemented feature-flag bit, a file outside the table's
 * folders, a base id without its base path), appended to its Manifest message as protobuf
 * allows (a later scalar wins, a repeated field gains an entry). Cleanup must stop with the
 * feature named before its first retirement write (docs/protocol.md §6.1: not one
 * `_holdfast/retirement/` object written), delete nothing and keep every version leasable.
 */

/** Forwards every request and logs the key of every write (PUT, DELETE, each key of a batch DELETE). */
class RecordingStore extends CountingStore {
  readonly writes: string[] = [];
  override put(key: string, body: Uint8Array, options?: Parameters<ObjectStore["put"]>[2]) {
    this.writes.push(key);
    return super.put(key, body, options);
  }
  override delete(key: string, options?: Parameters<ObjectStore["delete"]>[1]) {
    this.writes.push(key);
    return super.delete(key, options);
  }
  override deleteMany(keys: readonly string[], options?: Parameters<ObjectStore["deleteMany"]>[1]) {
    this.writes.push(...keys);
    return super.deleteMany(keys, options);
  }
}
const proto = protobuf.parse(
  readFileSync(new URL("../proto/lance-table.proto", import.meta.url), "utf8"),
  { keepCase: true },
).root;
const Fragment = proto.lookupType("holdfast.lance.DataFragment");

function varint(value: bigint): number[] {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}

/** Appends `extra` (encoded fields) to the Manifest message of the file at `path`. */
function appendToManifest(path: string, extra: Uint8Array): void {
  const file = readFileSync(path);
  const footerAt = file.length - 16;
  const start = Number(file.readBigInt64LE(footerAt));
  const length = file.readUInt32LE(start);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(length + extra.length);
  writeFileSync(
    path,
    Buffer.concat([
      file.subarray(0, start),
      prefix,
      file.subarray(start + 4, start + 4 + length),
      extra,
      file.subarray(footerAt),
    ]),
  );
}

const scalar = (field: number, value: bigint) => Uint8Array.from([field << 3, ...varint(value)]);
const fragment = (value: Record<string, unknown>) => {
  const body = Fragment.encode(Fragment.fromObject(value)).finish();
  return Uint8Array.from([(2 << 3) | 2, ...varint(BigInt(body.length)), ...body]);
};

const CASES: readonly {
  name: string;
  feature: LanceFeature;
  flag?: string;
  extra: Uint8Array;
}[] = [
  {
    name: "reader flag 64 (overlay files)",
    feature: "reader-feature-flags",
    flag: "unstable-data-overlay-files",
    extra: Uint8Array.from([...scalar(9, 64n), ...scalar(10, 64n)]),
  },
  {
    name: "reader flag 1024 (tagged fragment reuse index)",
    feature: "reader-feature-flags",
    flag: "fragment-reuse-index",
    extra: scalar(9, 1024n),
  },
  {
    name: "an unknown writer bit (4096)",
    feature: "writer-feature-flags",
    flag: "unknown-bit-12",
    extra: scalar(10, 4096n),
  },
  {
    name: "a row-id file outside the table's folders",
    feature: "external-file",
    extra: fragment({ id: 900, external_row_ids: { path: "../elsewhere/rows.bin", size: 8 } }),
  },
  {
    name: "a data file whose base_id names no base path",
    feature: "base-paths",
    extra: fragment({ id: 901, files: [{ path: "x.lance", file_size_bytes: 1, base_id: 7 }] }),
  },
  {
    name: "reader flag 512 (reserved: fragment reuse with stable row ids)",
    feature: "reader-feature-flags",
    flag: "frag-reuse-with-stable-row-ids",
    extra: scalar(9, 512n),
  },
  {
    name: "a deletion file whose base_id names no base path",
    feature: "base-paths",
    extra: fragment({
      id: 902,
      deletion_file: { file_type: 0, read_version: 1, id: 1, base_id: 9 },
    }),
  },
  {
    name: "a created-versions file under _mem_wal/",
    feature: "external-file",
    extra: fragment({
      id: 903,
      external_created_at_versions: { path: "_mem_wal/shard/created.bin", size: 8 },
    }),
  },
  {
    name: "a last-updated-versions file at an absolute path",
    feature: "external-file",
    extra: fragment({
      id: 904,
      external_last_updated_at_versions: { path: "/var/lance/updated.bin", size: 8 },
    }),
  },
  {
    name: "a row-id file under another branch's folder (tree/)",
    feature: "external-file",
    extra: fragment({ id: 905, external_row_ids: { path: "tree/dev/rows.bin", size: 8 } }),
  },
];

/**
 * Layouts of the table's folders holdfast refuses, each made on the same pylance 14 table
 * (with Lance's own branch commands where Lance writes it, by copying a manifest where it
 * is what a crashed or foreign writer leaves).
 */
const LAYOUTS: readonly {
  name: string;
  /** The refusal: an UnsupportedLanceDatasetError of this feature, or an error of this code. */
  feature?: LanceFeature;
  code?: string;
  key: string;
  make: (table: string, uri: string) => Promise<void>;
}[] = [
  {
    name: "a detached version (_versions/d{N}.manifest)",
    feature: "detached-version",
    key: "_versions/d9.manifest",
    make: async (table) => {
      copyFileSync(join(table, lanceManifestKey("v1", 3)), join(table, "_versions/d9.manifest"));
    },
  },
  {
    name: "V1 and V2 manifest names in one _versions/",
    feature: "mixed-naming",
    key: lanceManifestKey("v2", 9),
    make: async (table) => {
      copyFileSync(join(table, lanceManifestKey("v1", 3)), join(table, lanceManifestKey("v2", 9)));
    },
  },
  {
    name: "a branch folder with versions but no _refs/branches/ JSON",
    feature: "zombie-branch",
    key: "tree/ghost/",
    make: async (table) => {
      mkdirSync(join(table, "tree/ghost/_versions"), { recursive: true });
      copyFileSync(
        join(table, lanceManifestKey("v1", 3)),
        join(table, "tree/ghost/_versions/3.manifest"),
      );
    },
  },
  {
    name: "a Lance branch inside another branch's data folder (dev/data)",
    feature: "branch-layout",
    key: "_refs/branches/dev%2Fdata.json",
    make: async (_table, uri) => {
      await pylance(["create-branch", uri, "dev", "--from-version", "2"], {});
      await pylance(["create-branch", uri, "dev/data", "--from-version", "3"], {});
    },
  },
  {
    name: "a version hint that does not parse",
    code: "LANCE_MALFORMED_HINT",
    key: "_versions/latest_version_hint.json",
    make: async (table) => {
      writeFileSync(join(table, "_versions/latest_version_hint.json"), "{version");
    },
  },
  {
    name: "an object under _refs/ that is neither a tag nor a branch",
    feature: "foreign-reference",
    key: "_refs/notes.json",
    make: async (table) => {
      mkdirSync(join(table, "_refs"), { recursive: true });
      writeFileSync(join(table, "_refs/notes.json"), "{}");
    },
  },
];

/**
 * Runs cleanup on a recording store and checks the refusal left nothing: the only writes are
 * the cleanup lock, taken and released; no `_holdfast/retirement/` object; every Lance
 * object as it was; versions 1, 3 and 6 leasable at once.
 */
async function expectRefusedBeforeAnyRecord(
  site: PySite,
  expected: {
    feature?: LanceFeature | undefined;
    code?: string | undefined;
    flag?: string | undefined;
    key: string;
  },
): Promise<void> {
  const store = new RecordingStore(await site.store("v1names"));
  const lanceBefore = (await listKeys(store)).filter((k) => !k.startsWith("_holdfast/"));
  const ctx = createContext(store);
  const format = await openLanceFormat(ctx);
  let error: unknown;
  try {
    await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
  } catch (e) {
    error = e;
  }
  if (expected.feature) expect(isUnsupportedLance(error, expected.feature)).toBe(true);
  else expect(error).toMatchObject({ code: expected.code });
  if (expected.flag) expect(error).toMatchObject({ flag: expected.flag });
  expect(error).toMatchObject({ key: expected.key });
  expect(store.writes).toEqual(["_holdfast/cleanup/lock.json", "_holdfast/cleanup/lock.json"]);
  const keys = await listKeys(store);
  expect(keys.filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([]);
  expect(keys.filter((k) => !k.startsWith("_holdfast/"))).toEqual(lanceBefore);
  for (const version of [1, 3, 6]) {
    const lease = await acquireLease(ctx, { branch: "main", version, ttlMs: 10_000, format });
    await releaseLease(ctx, lease);
  }
}

describe("what holdfast refuses on a pylance 14 table (local disk)", () => {
  it.each(CASES)(
    "$name in an old version: refused by name before any retirement write, nothing deleted",
    {
      timeout: 120_000,
    },
    async ({ feature, flag, extra }) => {
      const site = localPySite();
      await pylance<Written>(["write", "v1-naming", site.root], site.storageOptions);
      const table = join(site.dir!, "v1names.lance");
      appendToManifest(join(table, lanceManifestKey("v1", 3)), extra);
      const before = readdirSync(join(table, "_versions")).sort();
      const store = new RecordingStore(await site.store("v1names"));
      const ctx = createContext(store);
      const format = await openLanceFormat(ctx);
      let error: unknown;
      try {
        await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
      } catch (e) {
        error = e;
      }
      expect(isUnsupportedLance(error, feature)).toBe(true);
      if (flag) expect(error).toMatchObject({ flag });
      expect(error).toMatchObject({ key: lanceManifestKey("v1", 3) });
      expect(readdirSync(join(table, "_versions")).sort()).toEqual(before);
      // Not one write under _holdfast/retirement/ (no drain, seal or abandon), nothing
      // deleted; the only writes are the cleanup lock, taken and released.
      expect(store.writes.filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([]);
      expect(store.writes).toEqual(["_holdfast/cleanup/lock.json", "_holdfast/cleanup/lock.json"]);
      expect((await listKeys(store)).filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual(
        [],
      );
      // Nothing stays blocked: every version can be leased at once.
      for (const version of [1, 3, 6]) {
        const lease = await acquireLease(ctx, { branch: "main", version, ttlMs: 10_000, format });
        await releaseLease(ctx, lease);
      }
    },
  );

  it.each(LAYOUTS)(
    "$name: refused by name before any retirement write, nothing deleted",
    {
      timeout: 120_000,
    },
    async ({ feature, code, key, make }) => {
      const site = localPySite();
      await pylance<Written>(["write", "v1-naming", site.root], site.storageOptions);
      const table = join(site.dir!, "v1names.lance");
      await make(table, table);
      await expectRefusedBeforeAnyRecord(site, { feature, code, key });
    },
  );
});

// docs/protocol.md §5.5: a committed record
// whose version's manifest was replaced by one holdfast refuses (here after a crashed
// cleaner's commit) has that version cancelled before the manifest is read.
describe("a committed record on a pylance 14 table whose manifest is replaced by a refused one", () => {
  it("invariant 5: recover cancels the version in the record (acquirable at once), stops with the refusal by name and deletes nothing", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "v1-naming", site.root], site.storageOptions);
    const table = join(site.dir!, "v1names.lance");
    const store = new RecordingStore(await site.store("v1names"));
    const ctx = createContext(store);
    const format = await openLanceFormat(ctx);
    const etags = new Map<number, string>();
    for await (const entry of format.listVersions(ctx, "main"))
      etags.set(entry.version, entry.etag);
    // A cleaner committed versions 2..4 and crashed before deleting anything.
    const committed = await commit(
      ctx,
      await seal(
        ctx,
        await drain(ctx, {
          branch: "main",
          versions: [2, 3, 4].map((version) => ({ version, manifestEtag: etags.get(version)! })),
          owner: "01CRASHEDCLEANER",
        }),
      ),
    );
    // Version 3's manifest is replaced by one with reader flag 64 (another ETag).
    appendToManifest(join(table, lanceManifestKey("v1", 3)), CASES[0]!.extra);
    const before = readdirSync(join(table, "_versions")).sort();
    store.writes.length = 0;
    let error: unknown;
    try {
      await recover(ctx, { format });
    } catch (e) {
      error = e;
    }
    expect(isUnsupportedLance(error, "reader-feature-flags")).toBe(true);
    expect(error).toMatchObject({
      flag: "unstable-data-overlay-files",
      key: lanceManifestKey("v1", 3),
    });
    // One retirement write (the record's if-match rewrite), nothing deleted.
    expect(store.writes.filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([
      committed.key,
    ]);
    expect(store.writes.filter((k) => !k.startsWith("_holdfast/"))).toEqual([]);
    expect(readdirSync(join(table, "_versions")).sort()).toEqual(before);
    const record = (await readRecord(ctx, committed.key))!.record;
    expect(record.state).toBe("committed");
    expect(record.versions.map((v) => [v.version, v.cancelled, v.reason])).toEqual([
      [2, false, undefined],
      [3, true, "changed"],
      [4, false, undefined],
    ]);
    // Version 3 is acquirable at once; 2 and 4 are being retired and stay refused.
    const lease = await acquireLease(ctx, { branch: "main", version: 3, ttlMs: 10_000, format });
    await releaseLease(ctx, lease);
    for (const version of [2, 4]) {
      await expect(
        acquireLease(ctx, { branch: "main", version, ttlMs: 10_000, format }),
      ).rejects.toMatchObject({ code: "COMMITTED" });
    }
  });
});

// docs/protocol.md §5.3: on a Lance table the reference census
// reads Lance's references and the version hint, not manifests, so its refusals are of those;
// a crashed cleaner's sealed record whose recovery census meets one is given up before its
// commit, and the refusal is thrown by name.
describe("a crashed cleaner's sealed record on a pylance 14 table whose recovery census is refused", () => {
  it("invariant 5: recover gives the record up (every version leasable), deletes nothing and throws the refusal by name; once the object is removed, recover and cleanup settle everything", {
    timeout: 120_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "v1-naming", site.root], site.storageOptions);
    const table = join(site.dir!, "v1names.lance");
    const store = new RecordingStore(await site.store("v1names"));
    const ctx = createContext(store);
    const format = await openLanceFormat(ctx);
    const etags = new Map<number, string>();
    for await (const entry of format.listVersions(ctx, "main"))
      etags.set(entry.version, entry.etag);
    // A cleaner sealed versions 2..4 and crashed before its reference census.
    const sealed = await seal(
      ctx,
      await drain(ctx, {
        branch: "main",
        versions: [2, 3, 4].map((version) => ({ version, manifestEtag: etags.get(version)! })),
        owner: "01CRASHEDCLEANER",
      }),
    );
    mkdirSync(join(table, "_refs"), { recursive: true });
    writeFileSync(join(table, "_refs/notes.json"), "{}");
    const before = readdirSync(join(table, "_versions")).sort();
    store.writes.length = 0;
    let error: unknown;
    try {
      await recover(ctx, { format });
    } catch (e) {
      error = e;
    }
    expect(isUnsupportedLance(error, "foreign-reference")).toBe(true);
    expect(error).toMatchObject({ key: "_refs/notes.json" });
    // The give-up (if-match rewrite to cancelled, then DELETE) and the cleanup lock; nothing
    // of the table written or deleted.
    expect(store.writes.filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([
      sealed.key,
      sealed.key,
    ]);
    expect(store.writes.filter((k) => !k.startsWith("_holdfast/"))).toEqual([]);
    expect(readdirSync(join(table, "_versions")).sort()).toEqual(before);
    expect(await readRecord(ctx, sealed.key)).toBeNull();
    for (const version of [2, 3, 4]) {
      const lease = await acquireLease(ctx, { branch: "main", version, ttlMs: 10_000, format });
      await releaseLease(ctx, lease);
    }
    // Removed: recover finds nothing left, and a cleanup retires as usual and leaves no record.
    rmSync(join(table, "_refs/notes.json"));
    const settled = await recover(ctx, { format });
    expect(settled.recovered).toEqual({ committed: 0, cancelled: 0, retained: 0 });
    const stats = await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format });
    expect(stats.retiredRanges).toEqual([{ branch: "main", from: 1, to: 6 }]);
    expect((await listKeys(store)).filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual(
      [],
    );
    const lease = await acquireLease(ctx, { branch: "main", version: 7, ttlMs: 10_000, format });
    await releaseLease(ctx, lease);
  });
});
