import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contextFor, openTarget, parseTarget } from "../src/target.js";
import { BIN, requireBuiltCli } from "./e2e-harness.js";

// The terminal bar as a person sees it: the built CLI under a real pseudo-terminal
// (util-linux `script`), its raw bytes parsed frame by frame (docs/operations.md, Reading
// progress).

const VERSIONS = 3_000;
let dir: string;
let ds: string;

beforeAll(async () => {
  requireBuiltCli();
  dir = await mkdtemp(join(tmpdir(), "holdfast-cli-pty-"));
  ds = join(dir, "ds");
  const io = { stdout: { write: () => {} }, stderr: { write: () => {} }, env: {}, cwd: dir };
  const ctx = contextFor(await openTarget(parseTarget(ds, {}, io), io, { create: true }));
  await initDataset(ctx);
  // Every version names one shared file and one of its own (as the demo's): the run
  // deletes 2,990 manifests and their 2,990 own files, the shared one stays.
  const shared = await writeDataFile(ctx, new Uint8Array(64));
  for (let v = 1; v <= VERSIONS; v += 1) {
    const own = await writeDataFile(ctx, new TextEncoder().encode(`version ${v}`));
    await commitVersion(ctx, { branch: "main", files: [shared, own] });
  }
}, 600_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Runs the built CLI under `script -qfc` (a pty on stdin, stdout and stderr); answers its raw bytes. */
function underPty(args: readonly string[]): Promise<{ code: number; raw: string }> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`);
  return new Promise((resolve, reject) => {
    execFile(
      "script",
      ["-qfec", `stty cols 160 2>/dev/null; ${quoted.join(" ")}`, "/dev/null"],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: "1", TERM: "xterm" },
        timeout: 300_000,
        maxBuffer: 64 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout) => {
        if (error && typeof error.code !== "number") return reject(error);
        resolve({ code: error ? (error.code as number) : 0, raw: stdout });
      },
    );
  });
}

interface Frame {
  readonly text: string;
  readonly label: string;
  readonly done: number;
  readonly total: number | undefined;
  readonly unit: string;
  readonly rate: number | undefined;
  readonly etaSeconds: number | undefined;
}

const FRAME =
  /^(?<label>[a-z ]+?) (?:\[[#-]{24}\] )?(?<done>[\d,]+)(?:\/(?<total>[\d,]+))? (?<unit>versions|objects|records)(?: {2}(?<rate>[\d.,]+) \k<unit>\/s)?(?: {2}(?:ETA (?<eta>(?:\d+h )?(?:\d+m )?\d+s)|done))?$/;

function seconds(eta: string): number {
  let s = 0;
  for (const [, n, unit] of eta.matchAll(/(\d+)([hms])/g)) {
    s += Number(n) * (unit === "h" ? 3600 : unit === "m" ? 60 : 1);
  }
  return s;
}

const num = (s: string) => Number(s.replaceAll(",", ""));

/** Every redraw (`\r` + erase line) of the raw bytes, parsed. */
function frames(raw: string): Frame[] {
  return raw
    .split("\r\u001b[2K")
    .slice(1)
    .map((chunk) => chunk.split(/\r?\n/)[0]!)
    .map((text) => {
      const m = FRAME.exec(text);
      if (!m?.groups) throw new Error(`not a progress frame: ${JSON.stringify(text)}`);
      const g = m.groups;
      return {
        text,
        label: g.label!,
        done: num(g.done!),
        total: g.total === undefined ? undefined : num(g.total),
        unit: g.unit!,
        rate: g.rate === undefined ? undefined : num(g.rate),
        etaSeconds: g.eta === undefined ? undefined : seconds(g.eta),
      };
    });
}

describe("the cleanup bar under a real pseudo-terminal (3,000 versions)", () => {
  it("every phase in order; totals true from their first frame; rate in items/s; ETA = left / rate", async () => {
    const r = await underPty(["cleanup", ds, "--retain", "10", "--min-age", "0"]);
    expect(r.code, r.raw).toBe(0);
    const all = frames(r.raw);
    const byLabel = (label: string) => all.filter((f) => f.label === label);
    // The fresh dataset has nothing to recover: no "finishing interrupted cleanups" line.
    expect(r.raw).not.toMatch(/interrupted|recovering/i);
    // Phases appear in order, each once (one line each).
    const order = all.map((f) => f.label).filter((l, i, a) => a.indexOf(l) === i);
    expect(order).toEqual(["planning", "retiring", "deleting", "removing orphan files"]);
    // plan: the total, once the listing ended, is every version, and never moves
    const plan = byLabel("planning");
    expect(new Set(plan.flatMap((f) => (f.total === undefined ? [] : [f.total])))).toEqual(
      new Set([VERSIONS]),
    );
    expect(plan.at(-1)).toMatchObject({ done: VERSIONS, total: VERSIONS });
    // retire: the 2,990 candidates from its first frame
    const retire = byLabel("retiring");
    expect(retire[0]).toMatchObject({ done: 0, total: VERSIONS - 10 });
    expect(retire.at(-1)).toMatchObject({ done: VERSIONS - 10, total: VERSIONS - 10 });
    // delete: 2,990 manifests + 2,990 own files, the true total from the first frame on
    const deletes = byLabel("deleting");
    expect(deletes[0]).toMatchObject({ done: 0, total: 5_980, unit: "objects" });
    for (const f of deletes) expect(f.total).toBe(5_980);
    expect(deletes.at(-1)!.text).toMatch(
      /^deleting \[#{24}\] 5,980\/5,980 objects {2}[\d,.]+ objects\/s {2}done$/,
    );
    // Rate and ETA agree in every frame that shows both: ETA = left / rate (rounded up to a
    // second, the rate as printed: within one second and one rate step).
    for (const f of all) {
      if (f.etaSeconds === undefined || f.rate === undefined || f.total === undefined) continue;
      const left = f.total - f.done;
      const fast = left / (f.rate + (f.rate >= 10 ? 0.5 : 0.05));
      const slow = left / Math.max(0.01, f.rate - (f.rate >= 10 ? 0.5 : 0.05));
      expect(f.etaSeconds, f.text).toBeGreaterThanOrEqual(Math.floor(fast));
      expect(f.etaSeconds, f.text).toBeLessThanOrEqual(Math.ceil(slow) + 1);
    }
    expect(all.some((f) => f.etaSeconds !== undefined)).toBe(true);
    // Nothing glued: the placeholder words of a bar library never show.
    expect(r.raw).not.toMatch(/INF|NULL|\{|\}/);
    // The summary agrees with the bar.
    expect(r.raw).toMatch(/Retired 2,990 version\(s\)|Retired 2990 version\(s\)/);
    expect(r.raw).toMatch(/Deleted 5,980 object/);
  }, 600_000);

  it("no bar when stdout is not a terminal (the answer redirected), nor on a non-terminal", async () => {
    const copy = join(dir, "small");
    const io = { stdout: { write: () => {} }, stderr: { write: () => {} }, env: {}, cwd: dir };
    const ctx = contextFor(await openTarget(parseTarget(copy, {}, io), io, { create: true }));
    await initDataset(ctx);
    for (let v = 1; v <= 3; v += 1) {
      await commitVersion(ctx, {
        branch: "main",
        files: [await writeDataFile(ctx, new Uint8Array(3))],
      });
    }
    const out = join(dir, "answer.txt");
    const r = await underPty(["cleanup", copy, "--retain", "1", "--min-age", "0", "--json"]);
    expect(r.code).toBe(0);
    expect(r.raw).not.toContain("\u001b[2K");
    const redirected = await underPty([
      "cleanup",
      copy,
      "--retain",
      "1",
      "--min-age",
      "0",
      "--dry-run",
    ]).then(async () => {
      // the same, with the answer going to a file
      return new Promise<{ raw: string }>((resolve, reject) =>
        execFile(
          "script",
          [
            "-qfec",
            `'${process.execPath}' '${BIN}' cleanup '${copy}' --retain 1 --min-age 0 --dry-run > '${out}'`,
            "/dev/null",
          ],
          { env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm" } },
          (error, stdout) => (error ? reject(error) : resolve({ raw: stdout })),
        ),
      );
    });
    expect(redirected.raw).not.toContain("\u001b[2K");
    expect((await stat(out)).size).toBeGreaterThan(0);
    expect(await readdir(copy)).toContain("_versions");
  }, 120_000);
});
