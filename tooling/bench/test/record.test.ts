import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// CI runs the quick performance record (tooling/bench/README.md) on every backend and
// checks what does not depend on the machine's speed: every table is printed, request
// counts of protected cleanup stay within a bound of the unprotected one, and a commit
// costs the same number of requests at every branch length. Times are printed, never asserted.

const ROOT = fileURLToPath(new URL("..", import.meta.url));

function requireServiceEnv(): Record<string, string> {
  const dir = process.env.HOLDFAST_SERVICES_DIR ?? "/tmp/holdfast-services";
  const env: Record<string, string> = {};
  for (const name of ["rgw", "azurite", "gcs"]) {
    const file = `${dir}/${name}.env`;
    if (!existsSync(file)) {
      throw new Error(`${file} is missing: start it with bash tooling/services/${name}-start.sh`);
    }
  }
  for (const key of Object.keys(process.env)) env[key] = process.env[key] ?? "";
  return env;
}

function runQuickRecord(): Promise<string> {
  const env = requireServiceEnv();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "--conditions=@holdfast/source", "src/record.ts", "--quick"],
      { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024, timeout: 590_000 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`record --quick failed: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** Rows of the table whose title starts with `title`, split into cells. */
function rowsOf(out: string, title: string): string[][] {
  const start = out.indexOf(`## ${title}`);
  expect(start, `table "${title}" printed`).toBeGreaterThanOrEqual(0);
  const lines = out.slice(start).split("\n");
  const rows: string[][] = [];
  for (const line of lines.slice(3)) {
    if (line === "" || line.startsWith("  ")) break;
    rows.push(line.trim().split(/\s{2,}/));
  }
  return rows;
}

describe("performance record --quick", () => {
  it("prints every table on every backend with request counts in bounds", async () => {
    const out = await runQuickRecord();
    process.stdout.write(out);
    expect(out).toContain("backends: local, rgw, azurite, gcs\n");

    // holdfast, pylance and LanceDB JS on copies of one table: the section itself fails
    // unless every cleaner deleted the same objects and left one manifest.
    const cleaners = rowsOf(out, "Cleaners side by side");
    expect(cleaners.map((r) => `${r[0]} ${r[1]} ${r[2]}`)).toEqual([
      "local 200 holdfast",
      "local 200 pylance",
      "local 200 lancedb",
      "rgw 30 holdfast",
      "rgw 30 pylance",
      "rgw 30 lancedb",
    ]);
    const cell = (target: string, cleaner: string, column: number) =>
      Number(cleaners.find((r) => r[0] === target && r[2] === cleaner)?.[column]);
    // 3 objects per old version (manifest, data file, transaction file).
    expect(cell("local", "holdfast", 7)).toBe(597);
    expect(cell("rgw", "holdfast", 7)).toBe(87);
    // One GET per manifest plus a fixed ~56 (format detection and the table-root check,
    // lock, records, the Lance reference census before the first drain and again after the
    // seal, last look, the kept versions' reason reads, batch deletes, finalize, sweep
    // listings, the run's history summary): 256 at 200 versions (246 before reasons,
    // table-root checks and history).
    expect(cell("local", "holdfast", 8)).toBeLessThanOrEqual(200 + 60);
    // On RGW holdfast sends fewer HTTP requests than either Lance cleaner.
    expect(cell("rgw", "holdfast", 8)).toBeLessThan(cell("rgw", "pylance", 8));
    expect(cell("rgw", "holdfast", 8)).toBeLessThan(cell("rgw", "lancedb", 8));
    expect(out).toMatch(/load: local 200: 1-min load [\d.]+ before/);

    const cleanup = rowsOf(out, "Cleanup, protected vs unprotected");
    expect(cleanup.map((r) => r[0])).toEqual(["local", "rgw", "azurite", "gcs"]);
    for (const [, protectedReq, unprotectedReq] of cleanup) {
      // Fixed overhead (lock, records, censuses, finalize, and the retired floor: GET the
      // head hint, LIST when it has no floor, PUT) is ~28 requests: at the quick size that
      // is a large share; the full record shows the ratio at 1,000 versions. The kept
      // versions' reason reads (one lease and one reference read per branch) add ~4.
      expect(Number(protectedReq)).toBeLessThanOrEqual(Number(unprotectedReq) + 40);
    }
    const prices = rowsOf(out, "S3 price estimate per cleanup");
    expect(prices.map((r) => r[0])).toEqual(["protected", "unprotected"]);
    expect(out).toContain("S3 Standard us-east-1 list prices");

    const scaling = rowsOf(out, "Scaling, local disk");
    expect(scaling).toHaveLength(2);

    const commits = rowsOf(out, "Commit cost by branch length");
    expect(commits.map((r) => r[0])).toEqual(["local", "local", "rgw", "rgw"]);
    // Constant cost: the same requests per commit at every branch length (3: GET hint,
    // PUT manifest, PUT hint; docs/protocol.md §2).
    expect(new Set(commits.map((r) => r[3]))).toEqual(new Set(["3.00"]));

    const ops = rowsOf(out, "Single operations");
    const requests = (backend: string, op: string) =>
      ops.find((r) => r[0] === backend && r[1] === op)?.[2];
    for (const backend of ["local", "rgw", "azurite", "gcs"]) {
      expect(requests(backend, "lease acquire")).toBe("3");
      expect(requests(backend, "lease renew")).toBe("2");
      expect(requests(backend, "commitVersion")).toBe("3");
    }
  });
});
