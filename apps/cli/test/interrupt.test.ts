import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLocalStore } from "@holdfast/backends-local";
import { commitVersion, initDataset, listVersions } from "@holdfast/dataset";
import { acquireLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { createBranch, holdfastFormat } from "@holdfast/refs-lifecycle";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, requireBuiltCli } from "./e2e-harness.js";

// A real child process of the built CLI receives real signals (docs/operations.md,
// "Interrupts"). The dataset makes the retirement long: its reference census reads every
// manifest of another branch, so the signal lands while the retirement is pre-commit.
const MAIN_VERSIONS = 6;
const OTHER_VERSIONS = 600;

let dir: string;
let template: string;
beforeAll(async () => {
  requireBuiltCli();
  dir = await mkdtemp(join(tmpdir(), "holdfast-interrupt-"));
  template = join(dir, "template");
  const ctx = createContext(createLocalStore({ root: template, createRoot: true }));
  await initDataset(ctx);
  for (let i = 0; i < MAIN_VERSIONS; i += 1)
    await commitVersion(ctx, { branch: "main", files: [] });
  await createBranch(
    ctx,
    { name: "other", parent: { branch: "main", version: MAIN_VERSIONS } },
    { format: holdfastFormat },
  );
  for (let i = 0; i < OTHER_VERSIONS; i += 1) {
    await commitVersion(ctx, {
      branch: "other",
      files: [],
      ...(i === 0 ? { parent: { branch: "main", version: MAIN_VERSIONS } } : {}),
    });
  }
}, 300_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function copyOf(name: string): Promise<string> {
  const { cp } = await import("node:fs/promises");
  const target = join(dir, name);
  await cp(template, target, { recursive: true });
  return target;
}

/** Spawns the CLI; sends `signals` once stderr shows the retire phase; resolves on exit. */
function runInterrupted(
  args: string[],
  signals: NodeJS.Signals[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // --progress: stderr is a pipe, and the retire phase's line is the cue.
    const child = spawn(process.execPath, [BIN, ...args, "--progress"], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    // The first signal once the retire phase began; each further one once the CLI has
    // acknowledged the previous (the kernel merges identical signals still pending).
    let sent = 0;
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      const acknowledged = stderr.split("stopping at the next safe point").length - 1;
      const ready = sent === 0 ? stderr.includes("holdfast: retiring") : acknowledged >= sent;
      if (ready && sent < signals.length) child.kill(signals[sent++]!);
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

async function mainVersions(root: string): Promise<number[]> {
  const ctx = createContext(createLocalStore({ root }));
  const out: number[] = [];
  for await (const entry of listVersions(ctx, "main")) out.push(entry.version);
  return out;
}

describe("interrupting a cleanup (built CLI, real signals)", () => {
  it("first SIGINT: stops at a safe point, gives up its retirement, prints what was done, exits 130", async () => {
    const ds = await copyOf("sigint");
    const r = await runInterrupted(["cleanup", ds, "--retain", "1", "--min-age", "0"], ["SIGINT"]);
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/stopping at the next safe point/);
    expect(r.stdout).toMatch(/Cleanup summary/);
    expect(r.stdout + r.stderr).toMatch(/Interrupted at a safe point/);
    // Nothing blocks leases afterwards: no record, no lock, every version leasable.
    const ctx = createContext(createLocalStore({ root: ds }));
    const left = (await ctx.store.list("_holdfast/")).objects.map((o) => o.key);
    expect(
      left.filter(
        (k) => k.startsWith("_holdfast/retirement/") || k.startsWith("_holdfast/cleanup/"),
      ),
    ).toEqual([]);
    expect(await mainVersions(ds)).toEqual([1, 2, 3, 4, 5, 6]);
    await acquireLease(ctx, { format: holdfastFormat, branch: "main", version: 1, ttlMs: 60_000 });
  }, 120_000);

  it("SIGTERM behaves as the first Ctrl-C", async () => {
    const ds = await copyOf("sigterm");
    const r = await runInterrupted(["cleanup", ds, "--retain", "1", "--min-age", "0"], ["SIGTERM"]);
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/holdfast: error: cleanup interrupted at a safe point/);
    expect(await mainVersions(ds)).toEqual([1, 2, 3, 4, 5, 6]);
  }, 120_000);

  it("a second signal exits at once, without the summary", async () => {
    const ds = await copyOf("twice");
    const r = await runInterrupted(
      ["cleanup", ds, "--retain", "1", "--min-age", "0"],
      ["SIGINT", "SIGINT"],
    );
    expect(r.code).toBe(130);
    expect(r.stdout).not.toMatch(/Interrupted at a safe point/);
    expect(r.stdout).not.toMatch(/Cleanup summary/);
  }, 120_000);
});
