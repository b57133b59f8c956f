import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanup } from "@holdfast/cleanup";
import { listAll } from "@holdfast/conditional-store";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { describe, expect, it } from "vitest";
import { isUnsupportedLance, openLanceFormat } from "../src/index.js";
import { TABLE, writeHistory } from "./history.js";
import { lanceVersions, localSite } from "./sites.js";

/**
 * Rewrites a Lance manifest file with one more reader feature flag set: the protobuf field
 * `reader_feature_flags` (9, varint) appended to the Manifest message (the last value of a
 * scalar field wins), its length prefix and the footer kept consistent. Bit 40 is a flag no
 * Lance release defines, so holdfast must refuse the version.
 */
function addUnknownReaderFlag(path: string): void {
  const file = readFileSync(path);
  const footerAt = file.length - 16;
  const start = Number(file.readBigInt64LE(footerAt));
  const length = file.readUInt32LE(start);
  const message = file.subarray(start + 4, start + 4 + length);
  const flag = varint(2n ** 40n);
  const extra = Buffer.concat([Buffer.from([(9 << 3) | 0]), flag]);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(length + extra.length);
  writeFileSync(
    path,
    Buffer.concat([file.subarray(0, start), prefix, message, extra, file.subarray(footerAt)]),
  );
}

function varint(value: bigint): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80n) {
    bytes.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  bytes.push(Number(v));
  return Buffer.from(bytes);
}

function sizes(dir: string, rel = ""): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const path = `${rel}${entry.name}`;
    if (entry.isDirectory()) for (const [k, v] of sizes(dir, `${path}/`)) out.set(k, v);
    else out.set(path, statSync(join(dir, path)).size);
  }
  return out;
}

// docs/protocol.md §6.1: a Lance version holdfast refuses is
// found before any retirement commit, so the refusal leaves no record and blocks no lease.
describe("a Lance table holding a version holdfast refuses", () => {
  it.each([
    ["an old version (a candidate)", 4, true],
    // LanceDB itself refuses to open a table whose latest version has the flag.
    ["the latest version", 10, false],
  ])(
    "invariant 5: an unknown reader feature flag on %s stops cleanup before the commit; no record, every version leasable, no file deleted",
    { timeout: 120_000 },
    async (_what, flagged, lanceOpens) => {
      const site = localSite();
      const history = await writeHistory(site);
      const root = join(site.dir!, `${TABLE}.lance`);
      const manifests = readdirSync(join(root, "_versions")).filter((n) => n.endsWith(".manifest"));
      const ctx = createContext(await site.store(TABLE));
      const format = await openLanceFormat(ctx);
      const name = manifests.find(
        (n) => format.parseManifestKey(`_versions/${n}`)?.version === flagged,
      )!;
      addUnknownReaderFlag(join(root, "_versions", name));
      const before = sizes(root);

      const error = await cleanup(ctx, { retainVersions: 3, minVersionAgeMs: 0 }, { format }).catch(
        (e: unknown) => e,
      );
      expect(isUnsupportedLance(error, "reader-feature-flags")).toBe(true);

      const left: string[] = [];
      for await (const meta of listAll(ctx.store, "_holdfast/retirement/")) left.push(meta.key);
      expect(left).toEqual([]);
      for (const version of history.versions) {
        const lease = await acquireLease(ctx, { branch: "main", version, ttlMs: 60_000, format });
        await releaseLease(ctx, lease);
      }
      const after = sizes(root);
      for (const [path, size] of before) {
        if (!path.startsWith("_holdfast/"))
          expect({ path, size: after.get(path) }).toEqual({ path, size });
      }
      if (lanceOpens) expect(await lanceVersions(site, TABLE)).toEqual(history.versions);
    },
  );
});
