// Runs `cost-probe.ts` under `strace -f` and prints, per cleanup phase, the store requests
// and the system calls (by name; fsync-like calls, opens, renames, stat calls and unlinks
// summed), so the fixed cost of a small cleanup can be compared before and after a change
// on a loaded machine (tooling/bench/README.md, "Cost per phase"). Usage:
//   node --import tsx --conditions=@holdfast/source src/cost-trace.ts [versions=200]
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const versions = process.argv[2] ?? "200";
const here = fileURLToPath(new URL(".", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "holdfast-cost-trace-"));
const trace = join(dir, "trace");
try {
  const out = execFileSync(
    "strace",
    [
      "-f",
      "-qq",
      "-o",
      trace,
      process.execPath,
      "--import",
      "tsx",
      "--conditions=@holdfast/source",
      join(here, "cost-probe.ts"),
      versions,
    ],
    { cwd: join(here, ".."), encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
  );
  const probe = JSON.parse(out.trim().split("\n").at(-1)!) as {
    versions: number;
    deleted: number;
    requests: number;
    phases: Record<string, Record<string, number>>;
  };
  const calls = new Map<string, Map<string, number>>();
  let phase = "load";
  for (const line of readFileSync(trace, "utf8").split("\n")) {
    const m = /^\d+\s+(?:<\.\.\. )?([a-z0-9_]+)[( ]/.exec(line);
    if (!m || line.includes("resumed>")) continue;
    const marker = /"\/nonexistent\/holdfast-phase\/([a-z]+)"/.exec(line);
    if (marker) {
      phase = marker[1]!;
      continue;
    }
    const byName = calls.get(phase) ?? new Map<string, number>();
    calls.set(phase, byName);
    byName.set(m[1]!, (byName.get(m[1]!) ?? 0) + 1);
    // Inode creations (a file opened with O_CREAT that did not exist, a folder made): on
    // ext4 each costs far more CPU than any other call here.
    const created =
      (/^(open|openat)$/.test(m[1]!) && line.includes("O_CREAT") && !/= -1/.test(line)) ||
      (/^(mkdir|mkdirat)$/.test(m[1]!) && !/= -1/.test(line));
    if (created) byName.set("(created)", (byName.get("(created)") ?? 0) + 1);
  }
  const groups: Record<string, RegExp> = {
    created: /^\(created\)$/,
    fsync: /^(fsync|fdatasync|sync_file_range|syncfs)$/,
    open: /^(open|openat|openat2)$/,
    rename: /^(rename|renameat|renameat2)$/,
    stat: /^(stat|lstat|fstat|newfstatat|statx)$/,
    unlink: /^(unlink|unlinkat|rmdir)$/,
    link: /^(link|linkat)$/,
    getdents: /^getdents64$/,
    read: /^(read|pread64|readv|preadv|preadv2)$/,
    write: /^(write|pwrite64|writev|pwritev|pwritev2)$/,
    fcntl: /^fcntl$/,
    mmap: /^(mmap|munmap|mprotect|madvise|brk)$/,
    futex: /^futex$/,
  };
  const rows: string[][] = [];
  const header = ["phase", "requests", "syscalls", ...Object.keys(groups), "top other"];
  for (const [name, byName] of calls) {
    const total = [...byName]
      .filter(([c]) => c !== "(created)")
      .map(([, n]) => n)
      .reduce((a, b) => a + b, 0);
    const cells = Object.values(groups).map((re) =>
      String([...byName].filter(([c]) => re.test(c)).reduce((a, [, n]) => a + n, 0)),
    );
    const other = [...byName]
      .filter(([c]) => !Object.values(groups).some((re) => re.test(c)))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 3)
      .map(([c, n]) => `${c} ${n}`)
      .join(", ");
    const req = probe.phases[name];
    const requests = req
      ? Object.entries(req)
          .filter(([k]) => !k.includes(" "))
          .reduce((a, [, n]) => a + n, 0)
      : 0;
    rows.push([name, String(requests), String(total), ...cells, other]);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  process.stdout.write(
    `# cost per phase: ${probe.versions} versions, ${probe.deleted} objects deleted, ${probe.requests} requests\n`,
  );
  process.stdout.write(`${fmt(header)}\n${rows.map(fmt).join("\n")}\n`);
  process.stdout.write(`requests by phase: ${JSON.stringify(probe.phases)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
