import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isHoldfastError } from "@holdfast/conditional-store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  classifyVersionsKey,
  isUnsupportedLance,
  LANCE_MALFORMED_MANIFEST,
  lanceManifestKey,
  type ManifestFile,
  readManifestFile,
  versionNeeds,
} from "../src/index.js";
import { type History, TABLE, writeHistory } from "./history.js";
import { type LanceSite, localDir } from "./sites.js";

/**
 * The parser on manifests LanceDB 0.31.0 wrote to local disk, read with node:fs: every
 * fact of docs/lance.md ("The manifest file") is checked against the files LanceDB left.
 */
let dir: { dir: string; remove: () => void };
let table: string;
let history: History;

beforeAll(async () => {
  dir = localDir();
  const site: LanceSite = {
    name: "local",
    uri: dir.dir,
    storageOptions: {},
    store: () => Promise.reject(new Error("parser tests read with node:fs")),
  };
  history = await writeHistory(site);
  table = join(dir.dir, `${TABLE}.lance`);
}, 60_000);
afterAll(() => dir.remove());

const read = (version: number, root = table): { file: ManifestFile; key: string } => {
  const key = lanceManifestKey("v2", version);
  return { file: readManifestFile(readFileSync(join(root, key)), key), key };
};

describe("Lance manifest files written by LanceDB", () => {
  it("every manifest decodes: LANC footer, message ending at the footer, version equal to its V2 name", () => {
    const names = readdirSync(join(table, "_versions")).filter((n) => n.endsWith(".manifest"));
    expect(names).toHaveLength(history.versions.length);
    for (const name of names) {
      const entry = classifyVersionsKey(`_versions/${name}`);
      if (entry.kind !== "manifest") throw new Error(`not a manifest name: ${name}`);
      expect(entry.naming).toBe("v2");
      const { file } = read(entry.version);
      expect(Number(file.manifest.version)).toBe(entry.version);
      expect(file.formatMajor).toBeGreaterThanOrEqual(0);
    }
  });

  it("a version needs data, deletion, index and transaction files that all exist on disk", () => {
    const seen = { data: 0, deletions: 0, transactions: 0, indices: 0 };
    for (const version of history.versions) {
      const { file, key } = read(version);
      const needs = versionNeeds(file, key);
      expect(needs.version).toBe(version);
      for (const object of needs.objects) {
        expect({ key: object.key, exists: existsSync(join(table, object.key)) }).toEqual({
          key: object.key,
          exists: true,
        });
        if (object.key.startsWith("data/")) seen.data += 1;
        if (object.key.startsWith("_deletions/")) seen.deletions += 1;
        if (object.key.startsWith("_transactions/")) seen.transactions += 1;
      }
      for (const uuid of needs.indexUuids) {
        expect(existsSync(join(table, "_indices", uuid))).toBe(true);
        seen.indices += 1;
      }
    }
    // The history has deletes and two indexes, so every kind of object shows up.
    expect(Object.values(seen).every((n) => n > 0)).toBe(true);
  });

  it("index uuids are formatted exactly as Lance names the _indices/ folders", () => {
    const fromManifests = new Set<string>();
    for (const version of history.versions) {
      const { file, key } = read(version);
      for (const uuid of versionNeeds(file, key).indexUuids) fromManifests.add(uuid);
    }
    const folders = new Set(readdirSync(join(table, "_indices")));
    expect(fromManifests).toEqual(folders);
    expect(folders.size).toBe(2);
  });

  it("deletion files are named {fragment}-{read_version}-{id}.{arrow|bin} as on disk", () => {
    const named = new Set<string>();
    for (const version of history.versions) {
      const { file, key } = read(version);
      for (const o of versionNeeds(file, key).objects) {
        if (o.key.startsWith("_deletions/")) named.add(o.key.slice("_deletions/".length));
      }
    }
    expect(named).toEqual(new Set(readdirSync(join(table, "_deletions"))));
  });

  it("a branch's manifests name main's files through base_paths: counted elsewhere, never named", () => {
    const branchRoot = join(table, "tree", history.branch.name);
    const names = readdirSync(join(branchRoot, "_versions")).filter((n) => n.endsWith(".manifest"));
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      const key = `_versions/${name}`;
      const file = readManifestFile(readFileSync(join(branchRoot, key)), key);
      const needs = versionNeeds(file, key, `tree/${history.branch.name}/`);
      expect(needs.elsewhere).toBeGreaterThan(0);
      for (const object of needs.objects) {
        expect(object.key.startsWith(`tree/${history.branch.name}/`)).toBe(true);
        expect(existsSync(join(table, object.key))).toBe(true);
      }
    }
  });

  it("feature-flag bits holdfast does not implement are refused by name, reader and writer", () => {
    const { file, key } = read(10);
    const flagged = (reader: string, writer = "0") => ({
      ...file,
      manifest: { ...file.manifest, reader_feature_flags: reader, writer_feature_flags: writer },
    });
    const refusal = (reader: string, writer = "0") => {
      try {
        versionNeeds(flagged(reader, writer), key);
      } catch (e) {
        return e;
      }
      return undefined;
    };
    for (const [reader, writer, feature, name] of [
      ["64", "64", "reader-feature-flags", "unstable-data-overlay-files"],
      ["512", "0", "reader-feature-flags", "frag-reuse-with-stable-row-ids"],
      ["1024", "1024", "reader-feature-flags", "fragment-reuse-index"],
      ["4096", "0", "reader-feature-flags", "unknown-bit-12"],
      ["0", "8192", "writer-feature-flags", "unknown-bit-13"],
    ] as const) {
      const error = refusal(reader, writer);
      expect(isUnsupportedLance(error, feature)).toBe(true);
      expect(error).toMatchObject({ flag: name, key });
    }
    // Implemented bits pass: 1, 2, 4, 8, 16, 32, 128, 256 (paired), 2048 (paired).
    expect(refusal("2495", "2495")).toBeUndefined();
    // A paired capability set in one word only is malformed, as Lance reads it.
    expect(refusal("256", "0")).toMatchObject({ code: LANCE_MALFORMED_MANIFEST });
  });

  it("files under another base are counted, not named; a base_id without its base path is refused", () => {
    const { file, key } = read(10);
    const [first, ...rest] = file.manifest.fragments;
    if (!first) throw new Error("version 10 has fragments");
    const [data] = first.files;
    if (!data) throw new Error("a fragment has a data file");
    const withBase = (basePaths: typeof file.manifest.base_paths) => ({
      ...file,
      manifest: {
        ...file.manifest,
        base_paths: basePaths,
        fragments: [{ ...first, files: [{ ...data, base_id: 3 }] }, ...rest],
      },
    });
    expect(() => versionNeeds(withBase([]), key)).toThrow(
      expect.objectContaining({ feature: "base-paths" }),
    );
    const other = versionNeeds(
      withBase([{ id: 3, is_dataset_root: true, path: "s3://elsewhere/t.lance" }]),
      key,
    );
    expect(other.elsewhere).toBe(1);
    expect(other.objects.map((o) => o.key)).not.toContain(`data/${data.path}`);
  });

  it("row-id and version-sequence files are needed; one outside the table's own folders is refused", () => {
    const { file, key } = read(10);
    const [first, ...rest] = file.manifest.fragments;
    if (!first) throw new Error("version 10 has fragments");
    const withExternal = (path: string) => ({
      ...file,
      manifest: {
        ...file.manifest,
        fragments: [{ ...first, external_row_ids: { path, size: "12" } }, ...rest],
      },
    });
    expect(versionNeeds(withExternal("data/rows.bin"), key).objects).toContainEqual({
      key: "data/rows.bin",
      size: 12,
    });
    for (const bad of [
      "../rows.bin",
      "/abs/rows.bin",
      "_versions/x",
      "_mem_wal/x",
      "tree/b/x",
      "",
    ]) {
      expect(() => versionNeeds(withExternal(bad), key)).toThrow(
        expect.objectContaining({ feature: "external-file" }),
      );
    }
  });

  it("a damaged manifest is invalid-input LANCE_MALFORMED_MANIFEST, never read as naming nothing", () => {
    const key = lanceManifestKey("v2", 10);
    const bytes = new Uint8Array(readFileSync(join(table, key)));
    const cases: Uint8Array[] = [
      bytes.subarray(0, bytes.length - 1), // footer cut
      bytes.subarray(1), // position now off by one
      bytes.subarray(0, 10),
    ];
    const lengthBroken = bytes.slice();
    const view = new DataView(lengthBroken.buffer);
    const at = Number(view.getBigInt64(bytes.length - 16, true));
    view.setUint32(at, view.getUint32(at, true) - 1, true); // message no longer ends at the footer
    cases.push(lengthBroken);
    for (const damaged of cases) {
      let error: unknown;
      try {
        readManifestFile(damaged, key);
      } catch (e) {
        error = e;
      }
      expect(isHoldfastError(error, "invalid-input")).toBe(true);
      expect((error as { code?: string }).code).toBe(LANCE_MALFORMED_MANIFEST);
    }
    // Any one byte of the LANC magic changed: refused for its magic.
    for (let back = 1; back <= 4; back += 1) {
      const damaged = bytes.slice();
      damaged[damaged.length - back] = "x".charCodeAt(0);
      expect(() => readManifestFile(damaged, key)).toThrow(/magic is "[A-Zx]{4}", not "LANC"/);
    }
  });
});

describe("Lance manifest naming", () => {
  it("V2 and V1 names map to versions and back; detached, staging and hint files are not versions", () => {
    for (const version of [1, 2, 10, 1234567]) {
      for (const naming of ["v1", "v2"] as const) {
        expect(classifyVersionsKey(lanceManifestKey(naming, version))).toEqual({
          kind: "manifest",
          naming,
          version,
        });
      }
    }
    expect(lanceManifestKey("v2", 1)).toBe("_versions/18446744073709551614.manifest");
    expect(lanceManifestKey("v1", 7)).toBe("_versions/7.manifest");
    expect(classifyVersionsKey("_versions/d9223372036854775809.manifest")).toEqual({
      kind: "detached",
    });
    expect(
      classifyVersionsKey("_versions/.tmp_7.manifest_9c100374-3298-4537-afc6-f5ee7913666d"),
    ).toEqual({ kind: "staging" });
    expect(classifyVersionsKey("_versions/latest_version_hint.json")).toEqual({ kind: "other" });
    // A rename commit's staging manifest ({final}-{uuid}) is not a version.
    expect(
      classifyVersionsKey(
        "_versions/18446744073709551610.manifest-9c100374-3298-4537-afc6-f5ee7913666d",
      ),
    ).toEqual({ kind: "other" });
    expect(classifyVersionsKey("_versions/_latest.manifest")).toEqual({ kind: "other" });
    expect(classifyVersionsKey("_versions/007.manifest")).toEqual({ kind: "other" });
  });
});
