import { spawn } from "node:child_process";
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { describe, expect, it } from "vitest";
import { censusLanceReferences, openLanceFormat } from "../src/index.js";
import {
  holdfastPython,
  leftovers,
  listKeys,
  localPySite,
  PYLANCE_TABLES,
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
      { format, referenceCensus: censusLanceReferences(ctx) },
    );
    expect(stats.retained).toContainEqual({ branch: "main", version, reason: "lease" });
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
      { format, referenceCensus: censusLanceReferences(ctx) },
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
      { format, referenceCensus: censusLanceReferences(ctx) },
    );
    expect(stats.objectsDeleted.orphans).toBe(3);
    const after = await pylance<Verified>(["verify", join(site.dir!, "copy.lance")], {});
    expect(after.main).toEqual(lanceAfter.main);
    expect(leftovers(await listKeys(ctx.store), after)).toEqual([]);
  });
});
