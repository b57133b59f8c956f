import { spawn } from "node:child_process";
import { cpSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cleanup, recover } from "@holdfast/cleanup";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { holdfastPython, PYLANCE_TABLES } from "@holdfast/test-support";
import { describe, expect, it } from "vitest";
import { openLanceFormat } from "../src/index.js";
import {
  leftovers,
  listKeys,
  localPySite,
  pylance,
  type Verified,
  type Written,
} from "./pylance.js";

/**
 * Lance's own cleanup failures, side by side (docs/lance.md, "Lance's cleanup and holdfast's,
 * side by side"): pylance 14 writes one table, it is copied, and Lance's
 * `cleanup_old_versions` runs on one copy while holdfast's cleanup runs on the other with
 * the same policy. Each test asserts both outcomes.
 */

/** A pylance reader mid-scan: resolves once it has opened the version and read one fragment. */
function startSlowReader(uri: string, version: number, signal: string) {
  const child = spawn(
    holdfastPython(),
    [PYLANCE_TABLES, "read-slowly", uri, "--version", String(version), "--signal", signal],
    { env: { ...process.env, RUST_LOG: "error" } },
  );
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk) => {
    err += String(chunk);
  });
  const opened = new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
      if (out.includes('"opened"')) resolve();
    });
    child.once("exit", () => reject(new Error(`reader exited before opening: ${out}\n${err}`)));
  });
  const outcome = new Promise<{ ok: boolean; rows?: number; error?: string }>((resolve, reject) => {
    child.once("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0) reject(new Error(`reader failed (${code}): ${out}\n${err}`));
      else resolve(JSON.parse(last));
    });
  });
  return { opened, outcome };
}

/**
 * A pylance writer that opened the latest version and appends three rows, held inside
 * Lance's commit lock (after Lance's conflict check picked the version number, before the
 * manifest is written): `locked` resolves with that number; `committed` once the signal
 * file exists and the manifest is written.
 */
function startStaleWriter(uri: string, signal: string) {
  const child = spawn(holdfastPython(), [PYLANCE_TABLES, "stale-writer", uri, "--signal", signal], {
    env: { ...process.env, RUST_LOG: "error" },
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (chunk) => {
    err += String(chunk);
  });
  const locked = new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk) => {
      out += String(chunk);
      const match = /\{"locked": (\d+)\}/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once("exit", () => reject(new Error(`writer exited before its commit: ${out}\n${err}`)));
  });
  const committed = new Promise<{ committed: number; readVersion: number }>((resolve, reject) => {
    child.once("exit", (code) => {
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0) reject(new Error(`writer failed (${code}): ${out}\n${err}`));
      else resolve(JSON.parse(last));
    });
  });
  return { locked, committed };
}

/** Folders directly under `folder` that hold no file (emptied index folders). */
function emptyFolders(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((e) => e.isDirectory() && readdirSync(join(folder, e.name)).length === 0)
    .map((e) => `${folder}/${e.name}/`);
}

/** `verify --tolerant`: a version that fails to read is `{ error }`. */
type TolerantVerified = Omit<Verified, "main"> & {
  readonly main: Record<string, { rows: number; checksum: string } | { error: string }>;
};

describe("Lance's cleanup and holdfast's on copies of one pylance 14 table (local disk)", () => {
  it("reader mid-scan: Lance deletes the files under it, holdfast keeps the leased version", {
    timeout: 180_000,
  }, async () => {
    const site = localPySite();
    const written = await pylance<Written>(["write", "tagged-compaction", site.root], {});
    cpSync(join(site.dir!, "tagged.lance"), join(site.dir!, "copy.lance"), { recursive: true });
    const version = 6; // six fragments, rewritten by the compactions that follow
    expect(written.tables.tagged!.versions.at(-1)).toBeGreaterThan(version);
    const before = await pylance<Verified>(["verify", join(site.dir!, "tagged.lance")], {});

    // Lance: the reader opened version 6 and read one fragment; cleanup runs; it reads on.
    const lanceSignal = join(site.dir!, "lance.go");
    const lanceReader = startSlowReader(join(site.dir!, "tagged.lance"), version, lanceSignal);
    await lanceReader.opened;
    await pylance(["lance-cleanup", join(site.dir!, "tagged.lance"), "--retain", "1"], {});
    writeFileSync(lanceSignal, "");
    const lanceOutcome = await lanceReader.outcome;
    expect(lanceOutcome.ok).toBe(false);
    expect(lanceOutcome.error).toMatch(/not found/i);

    // holdfast: the reader holds a lease from before it opens until its last read.
    const ctx = createContext(await site.store("copy"));
    const format = await openLanceFormat(ctx);
    const lease = await acquireLease(ctx, { branch: "main", version, ttlMs: 120_000, format });
    const signal = join(site.dir!, "holdfast.go");
    const reader = startSlowReader(join(site.dir!, "copy.lance"), version, signal);
    await reader.opened;
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
      { format },
    );
    expect(stats.retained).toContainEqual(
      expect.objectContaining({ branch: "main", version, reason: "lease" }),
    );
    writeFileSync(signal, "");
    expect(await reader.outcome).toEqual({ ok: true, rows: before.main[String(version)]!.rows });
    await releaseLease(ctx, lease);
  });

  it("a tag on an old version of a compacted table: both remove every file no kept version needs", {
    timeout: 180_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "tagged-compaction", site.root], {});
    cpSync(join(site.dir!, "tagged.lance"), join(site.dir!, "copy.lance"), { recursive: true });
    await sleep(1_100); // the sweep (grace 0) takes files older than the run's second

    await pylance(["lance-cleanup", join(site.dir!, "tagged.lance"), "--retain", "1"], {});
    const lanceAfter = await pylance<Verified>(["verify", join(site.dir!, "tagged.lance")], {});
    const lanceLeft = leftovers(await listKeys(await site.store("tagged")), lanceAfter);

    const ctx = createContext(await site.store("copy"));
    const format = await openLanceFormat(ctx);
    await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
      { format },
    );
    const holdfastAfter = await pylance<Verified>(["verify", join(site.dir!, "copy.lance")], {});
    // Both keep the same versions (the tagged one and the latest) and read them alike.
    expect(Object.keys(holdfastAfter.main)).toEqual(Object.keys(lanceAfter.main));
    expect(holdfastAfter.main).toEqual(lanceAfter.main);
    expect(leftovers(await listKeys(ctx.store), holdfastAfter)).toEqual([]);
    // What Lance 14.0.2 leaves that no kept version needs (docs/lance.md records the count).
    expect(lanceLeft.length).toBeGreaterThanOrEqual(0);
    console.info(
      `Lance's cleanup left ${lanceLeft.length} unneeded file(s): ${lanceLeft.join(", ")}`,
    );
  });

  it("indices built, rebuilt and optimized between cleanups with a short window: neither cleaner strands an index file, every kept version queries through its indices", {
    timeout: 400_000,
  }, async () => {
    const site = localPySite();
    const dir = site.dir!;
    await pylance<Written>(["write", "index-window", site.root], {});
    const table = (name: string) => join(dir, `${name}.lance`);
    cpSync(table("index-window"), table("holdfast"), { recursive: true });
    const ctx = createContext(await site.store("holdfast"));
    const format = await openLanceFormat(ctx);
    // The short window: the newest two versions. Neither cleaner takes files named by no
    // manifest that are younger than a week (Lance: delete_unverified off; holdfast: the
    // default orphan grace), so an index file either goes with the last manifest naming
    // it or is stranded.
    const clean = {
      "index-window": () =>
        pylance(["lance-cleanup", table("index-window"), "--retain", "2", "--keep-unverified"], {}),
      holdfast: () => cleanup(ctx, { retainVersions: 2, minVersionAgeMs: 0 }, { format }),
    };
    type Queried = Verified & {
      main: Record<string, { queries: Record<string, { indexed: boolean; ids: number[] }> }>;
    };
    const left: Record<string, string[]> = {};
    for (const name of ["index-window", "holdfast"] as const) {
      const uri = table(name);
      for (const step of [0, 1, 2]) {
        if (step > 0) await pylance(["index-step", uri, String(step)], {});
        const before = await pylance<Queried>(["verify", uri, "--queries"], {});
        await clean[name]();
        const after = await pylance<Queried>(["verify", uri, "--queries"], {});
        const versions = Object.keys(before.main);
        expect({ name, step, kept: Object.keys(after.main) }).toEqual({
          name,
          step,
          kept: versions.slice(-2),
        });
        for (const version of versions.slice(-2)) {
          // Read in full and queried through every index it has, as before the cleanup.
          expect({ name, step, version, read: after.main[version] }).toEqual({
            name,
            step,
            version,
            read: before.main[version],
          });
          const queries = Object.values(after.main[version]!.queries);
          expect(queries.length).toBe(3);
          for (const query of queries) expect(query.indexed).toBe(true);
        }
        left[name] = [
          ...leftovers(await listKeys(await site.store(name)), after),
          ...emptyFolders(join(uri, "_indices")),
        ];
      }
    }
    // What each left behind that no kept version needs (files, or emptied index folders).
    expect(left).toEqual({ "index-window": [], holdfast: [] });
  });

  it("a stale writer recreates a deleted version: Lance's recreated version names deleted files; holdfast keeps what the writer's lease and the grace protect", {
    timeout: 300_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "stale-writer", site.root], {});
    const dir = site.dir!;
    const table = (name: string) => join(dir, `${name}.lance`);
    for (const name of ["keep-unverified", "holdfast", "no-lease", "reference"]) {
      cpSync(table("stale-writer"), table(name), { recursive: true });
    }
    // What the writer's commit holds: version 1 and its three rows, committed undisturbed.
    writeFileSync(join(dir, "reference.go"), "");
    await startStaleWriter(table("reference"), join(dir, "reference.go")).committed;
    const reference = await pylance<Verified>(["verify", table("reference")], {});
    const written = reference.main["2"]!;
    expect(written.rows).toBe(13);

    /**
     * On one copy: the writer reads version 1 and holds its commit of version 2; others
     * commit 2 (an append) and 3 (an overwrite); `clean` runs; the writer's manifest lands.
     */
    const race = async (name: string, clean: () => Promise<void>) => {
      const signal = join(dir, `${name}.go`);
      const writer = startStaleWriter(table(name), signal);
      expect(await writer.locked).toBe(2);
      expect(await pylance(["commit-others", table(name)], {})).toEqual({ versions: [1, 2, 3] });
      const before = await pylance<Verified>(["verify", table(name)], {});
      await clean();
      const between = await pylance<Verified>(["verify", table(name)], {});
      const betweenKeys = await listKeys(await site.store(name));
      writeFileSync(signal, "");
      expect(await writer.committed).toEqual({ committed: 2, readVersion: 1 });
      return { before, between, betweenKeys };
    };

    // Lance (delete_unverified on, and off): it retires 1 and 2; the writer then writes
    // version 2 again, below the latest 3, naming version 1's data file, which is gone.
    for (const [name, flags] of [
      ["stale-writer", []],
      ["keep-unverified", ["--keep-unverified"]],
    ] as const) {
      const { before } = await race(name, async () => {
        await pylance(["lance-cleanup", table(name), "--retain", "1", ...flags], {});
      });
      const after = await pylance<TolerantVerified>(["verify", table(name), "--tolerant"], {});
      expect(after.latest).toBe(3);
      expect(Object.keys(after.main)).toEqual(["2", "3"]);
      expect(after.main["3"]).toEqual(before.main["3"]);
      expect(after.main["2"]).toMatchObject({ error: expect.stringMatching(/not found/i) });
    }

    // holdfast: the writer holds a lease on the version it read (docs/lance.md, "Limits"),
    // from before it opens until its commit lands; no writer-inactive claim, so the sweep's
    // grace is the one-hour floor.
    const policy = { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 3_600_000 };
    const ctx = createContext(await site.store("holdfast"));
    const format = await openLanceFormat(ctx);
    const lease = await acquireLease(ctx, { branch: "main", version: 1, ttlMs: 240_000, format });
    let stats: Awaited<ReturnType<typeof cleanup>> | undefined;
    const { before, between, betweenKeys } = await race("holdfast", async () => {
      stats = await cleanup(ctx, policy, { format });
    });
    await releaseLease(ctx, lease);
    expect(stats!.retained).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ branch: "main", version: 1, reason: "lease" }),
        expect.objectContaining({ branch: "main", version: 3, reason: "latest" }),
      ]),
    );
    expect(stats!.retired.map((r) => r.version)).toEqual([2]);
    // Between the cleanup and the writer's manifest, the only files no kept version needs
    // are the writer's own (its data file and transaction, named by no manifest yet and
    // younger than the grace).
    // (The writer's lease under _holdfast/ aside.)
    const inFlight = leftovers(betweenKeys, between).filter((k) => !k.startsWith("_holdfast/"));
    expect(inFlight.map((k) => k.split("/")[0]).sort()).toEqual(["_transactions", "data"]);
    const after = await pylance<Verified>(["verify", table("holdfast")], {});
    expect(Object.keys(after.main)).toEqual(["1", "2", "3"]);
    expect(after.latest).toBe(3);
    expect(after.main["1"]).toEqual(before.main["1"]);
    expect(after.main["3"]).toEqual(before.main["3"]);
    expect(after.main["2"]).toEqual(written);
    expect(leftovers(await listKeys(ctx.store), after)).toEqual([]);
    for (const key of inFlight) expect(after.tracked.keys).toContain(key);

    // The recreated version is a version like any other: leasable, and the next cleanup
    // keeps it, as Lance's hint the writer rewrote says 2 (reason version-hint), and
    // retires 1, whose data file the recreated 2 still names.
    const onTwo = await acquireLease(ctx, { branch: "main", version: 2, ttlMs: 60_000, format });
    await releaseLease(ctx, onTwo);
    const next = await cleanup(ctx, policy, {
      format,
    });
    expect(next.retained).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ branch: "main", version: 2, reason: "version-hint" }),
        expect.objectContaining({ branch: "main", version: 3, reason: "latest" }),
      ]),
    );
    expect(next.retired.map((r) => r.version)).toEqual([1]);
    const last = await pylance<Verified>(["verify", table("holdfast")], {});
    expect(last.main).toEqual({ "2": written, "3": before.main["3"] });
    expect(leftovers(await listKeys(ctx.store), last)).toEqual([]);

    // Without the writer's lease, holdfast's outcome is Lance's: it retires 1 and 2 and
    // deletes version 1's data file; the writer's own files survive the grace.
    const bare = createContext(await site.store("no-lease"));
    const bareFormat = await openLanceFormat(bare);
    await race("no-lease", async () => {
      await cleanup(bare, policy, { format: bareFormat });
    });
    const unprotected = await pylance<TolerantVerified>(
      ["verify", table("no-lease"), "--tolerant"],
      {},
    );
    expect(Object.keys(unprotected.main)).toEqual(["2", "3"]);
    expect(unprotected.main["2"]).toMatchObject({ error: expect.stringMatching(/not found/i) });
  });

  it("a stale writer whose manifest lands between holdfast's deletion of that number and the record's finalize: holdfast stops by name (RETIRED_MANIFEST_REWRITTEN), keeps the record and refuses leases on it until the operator removes that manifest", {
    timeout: 240_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "stale-writer", site.root], {});
    const uri = join(site.dir!, "stale-writer.lance");
    const signal = join(site.dir!, "go");
    const base = await site.store("stale-writer");
    const ctx0 = createContext(base);
    const format = await openLanceFormat(ctx0);
    const lease = await acquireLease(ctx0, { branch: "main", version: 1, ttlMs: 240_000, format });
    const writer = startStaleWriter(uri, signal);
    expect(await writer.locked).toBe(2);
    await pylance(["commit-others", uri], {});
    const before = await pylance<Verified>(["verify", uri], {});
    // The writer's manifest lands right after the cleanup's delete of version 2's manifest
    // returns, before the record is finalized.
    const manifestTwo = format.manifestKey("main", 2);
    let landed = false;
    const store = new Proxy(base, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== "deleteMany")
          return typeof value === "function" ? value.bind(target) : value;
        return async (keys: readonly string[], options?: unknown) => {
          const result = await value.call(target, keys, options);
          if (!landed && keys.includes(manifestTwo)) {
            landed = true;
            writeFileSync(signal, "");
            expect(await writer.committed).toEqual({ committed: 2, readVersion: 1 });
          }
          return result;
        };
      },
    });
    const ctx = createContext(store);
    const error = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 3_600_000 },
      { format },
    ).catch((e) => e);
    await releaseLease(ctx0, lease);
    expect(landed).toBe(true);
    // The record's deletion began (it is marked) and another object is at version 2's key:
    // holdfast refuses to admit a version whose files it may have deleted, and names it
    // (docs/protocol.md §5.5).
    const records = (await listKeys(base)).filter((k) => k.startsWith("_holdfast/retirement/"));
    expect(records).toHaveLength(1);
    expect(error).toMatchObject({
      kind: "refused",
      code: "RETIRED_MANIFEST_REWRITTEN",
      key: manifestTwo,
      recordKey: records[0],
    });
    await expect(
      acquireLease(ctx0, { branch: "main", version: 2, ttlMs: 60_000, format }),
    ).rejects.toMatchObject({ code: "COMMITTED" });
    // Nothing more was deleted: pylance reads 1, 3 and the recreated 2 in full.
    const after = await pylance<Verified>(["verify", uri], {});
    expect(Object.keys(after.main)).toEqual(["1", "2", "3"]);
    expect(after.main["1"]).toEqual(before.main["1"]);
    expect(after.main["3"]).toEqual(before.main["3"]);
    expect(after.main["2"]!.rows).toBe(13);
    // The operator removes that manifest (docs/operations.md, "Stuck states"): the next
    // recover finishes the record; 1 and 3 read as before.
    await base.delete(manifestTwo);
    await recover(ctx0, { format });
    expect((await listKeys(base)).filter((k) => k.startsWith("_holdfast/retirement/"))).toEqual([]);
    const last = await pylance<Verified>(["verify", uri], {});
    expect(Object.keys(last.main)).toEqual(["1", "3"]);
    expect(last.main["1"]).toEqual(before.main["1"]);
    expect(last.main["3"]).toEqual(before.main["3"]);
  });

  it("abandoned write_fragments output newer than every manifest: both remove it once told no writer is active", {
    timeout: 180_000,
  }, async () => {
    const site = localPySite();
    await pylance<Written>(["write", "abandoned-fragments", site.root], {});
    cpSync(join(site.dir!, "abandoned.lance"), join(site.dir!, "copy.lance"), { recursive: true });
    await sleep(1_100);
    const abandoned = (await listKeys(await site.store("abandoned"))).filter((k) =>
      k.startsWith("data/"),
    );

    expect(abandoned.length).toBeGreaterThanOrEqual(3);
    // Lance with delete_unverified lists the whole folder (an older listing cutoff skipped
    // files newer than the oldest kept manifest): the abandoned output goes.
    await pylance(["lance-cleanup", join(site.dir!, "abandoned.lance"), "--retain", "1"], {});
    const lanceAfter = await pylance<Verified>(["verify", join(site.dir!, "abandoned.lance")], {});
    expect(leftovers(await listKeys(await site.store("abandoned")), lanceAfter)).toEqual([]);

    // holdfast's sweep lists every data file (grace 0, no writer active): none is left.
    const ctx = createContext(await site.store("copy"));
    const format = await openLanceFormat(ctx);
    const stats = await cleanup(
      ctx,
      { retainVersions: 1, minVersionAgeMs: 0, orphanGraceMs: 0, noWriterActive: true },
      { format },
    );
    expect(stats.objectsDeleted.orphans).toBe(3);
    const after = await pylance<Verified>(["verify", join(site.dir!, "copy.lance")], {});
    expect(after.main).toEqual(lanceAfter.main);
    expect(leftovers(await listKeys(ctx.store), after)).toEqual([]);
  });
});
