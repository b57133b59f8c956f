import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { delimiter, join, relative } from "node:path";
import { type CleanupStats, cleanup, planCleanup } from "@holdfast/cleanup";
import { holdfastError } from "@holdfast/conditional-store";
import {
  commitVersion,
  type DataFile,
  initDataset,
  listVersions,
  readManifest,
  tryReadManifest,
  writeDataFile,
} from "@holdfast/dataset";
import type { ProtocolContext } from "@holdfast/protocol";
import { createBranch, createTag, holdfastFormat, listTags } from "@holdfast/refs-lifecycle";
import { Command } from "commander";
import { parseCountArg } from "../args.js";
import { formatBytes, formatDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import type { Output } from "../output.js";
import type { CommandContext, Registrar } from "../program.js";
import { ProgressView } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";
import { printStats, REASON_TEXT } from "./cleanup-run.js";
import { BIN, type Reader, ReadPacedStore, startReader } from "./demo-reader.js";

const TAGS = [
  { name: "v1.0", at: 0.15 },
  { name: "stable", at: 0.4 },
] as const;
const BRANCH = "experiment";
const RETAIN = 20;

/** `demo [dir]`: the README's first command. */
export function registerDemo(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      new Command("demo")
        .description(
          "build a demo dataset (versions, tags, a branch, a live reader holding a lease), clean it up safely and verify it",
        )
        .argument(
          "[dir]",
          "local directory to create (must not exist or be empty)",
          "./holdfast-demo",
        )
        .option("--versions <n>", "versions to commit on main", "300"),
      "demo",
      ["holdfast demo", "holdfast demo /tmp/hf-demo --versions 500", "holdfast demo ./d --json"],
      async ([dirArg], opts, cx) =>
        runDemo(cx, dirArg ?? "./holdfast-demo", parseCountArg(opts.versions, "--versions", 50)),
    ),
  );
}

async function runDemo(cx: CommandContext, dirArg: string, versionCount: number): Promise<number> {
  const started = Date.now();
  const out = cx.out;
  const dir = await emptyLocalDir(cx, dirArg);
  const step = (n: number, text: string) => out.line(`\n${out.paint("bold", `${n}. ${text}`)}`);
  const ctx = contextFor(await openTarget(parseTarget(dirArg, {}, cx.io), cx.io, { create: true }));

  step(1, `Create a dataset in ${dir} and commit ${versionCount} versions on main`);
  const shared = await commitHistory(ctx, out, versionCount);
  step(2, "Pin versions with two tags and a branch");
  const pins = await pinVersions(ctx, out, versionCount, shared);

  const readVersion = Math.max(2, Math.round(versionCount * 0.1));
  step(3, `Start a reader process that leases main@${readVersion} and keeps reading it`);
  const reader = await startReader(cx, dirArg, readVersion);
  try {
    describeReader(cx, reader, dirArg, readVersion);
    const run = await cleanupWhileReading(cx, ctx, reader, dirArg, step);
    step(7, "Verify");
    const checked = await verifyAll(cx, ctx, reader, run, readVersion);
    const elapsedMs = Date.now() - started;
    out.result(cx.command, {
      dir,
      versions: versionCount,
      tags: pins.tagged,
      branch: { name: BRANCH, forkedFrom: { branch: "main", version: pins.forkAt }, versions: 5 },
      reader: {
        pid: reader.child.pid,
        version: readVersion,
        leaseId: reader.lease.leaseId,
        reads: reader.reads(),
        readsDuringCleanup: run.readsDuring,
        readsAfterCleanup: checked.readsAfter,
        exitCode: checked.readerCode,
      },
      plan: { retired: run.plan.retired.length, retained: run.plan.retained.length },
      stats: run.stats,
      verification: { ...checked.verification, readerOk: checked.readerOk, ok: checked.ok },
      elapsedMs,
    });
    printEnding(cx, dirArg, run.stats, checked.ok, elapsedMs);
    return checked.ok ? ExitCode.ok : ExitCode.failure;
  } finally {
    await reader.stop();
  }
}

/** The demo's directory as a local path; it must not exist or be empty. */
async function emptyLocalDir(cx: CommandContext, dirArg: string): Promise<string> {
  const target = parseTarget(dirArg, {}, cx.io);
  if (target.url.scheme !== "file") {
    throw holdfastError("invalid-input", "demo", "the demo runs on a local directory", {
      hint: "give a path, e.g. holdfast demo ./holdfast-demo",
    });
  }
  const dir = target.url.root;
  const existing = await stat(dir).catch(() => null);
  if (existing && (!existing.isDirectory() || (await readdir(dir)).length > 0)) {
    throw holdfastError("conflict", "demo", `${dir} already exists and is not empty`, {
      hint: `explore it with: holdfast status ${dirArg}   or start over: rm -rf ${dirArg} && holdfast demo ${dirArg}`,
    });
  }
  return dir;
}

/** Demo part 1: the dataset and its history; returns the file every version names. */
async function commitHistory(
  ctx: ProtocolContext,
  out: Output,
  versionCount: number,
): Promise<DataFile> {
  await initDataset(ctx);
  const shared = await writeDataFile(
    ctx,
    payload("shared base file, named by every version", 2048),
  );
  const view = new ProgressView(out, { clock: ctx.clock, plain: true });
  for (let v = 1; v <= versionCount; v += 1) {
    const delta = await writeDataFile(ctx, payload(`main version ${v}`, 256));
    await commitVersion(ctx, { branch: "main", files: [shared, delta] });
    if (v % 10 === 0 || v === versionCount)
      view.update({ phase: "commit", done: v, total: versionCount });
  }
  view.stop();
  out.line(`   ${versionCount} versions, each naming one shared file and one file of its own.`);
  return shared;
}

/** Demo part 2: tags and a branch, references that pin versions for good. */
async function pinVersions(
  ctx: ProtocolContext,
  out: Output,
  versionCount: number,
  shared: DataFile,
): Promise<{ tagged: { name: string; version: number }[]; forkAt: number }> {
  const tagged = TAGS.map((t) => ({
    name: t.name,
    version: Math.max(1, Math.round(versionCount * t.at)),
  }));
  const forkAt = Math.round(versionCount * 0.6);
  for (const t of tagged) {
    await createTag(
      ctx,
      { name: t.name, target: { branch: "main", version: t.version } },
      { format: holdfastFormat },
    );
    out.line(`   tag ${t.name} -> main@${t.version}`);
  }
  await createBranch(
    ctx,
    { name: BRANCH, parent: { branch: "main", version: forkAt } },
    { format: holdfastFormat },
  );
  for (let v = 1; v <= 5; v += 1) {
    const delta = await writeDataFile(ctx, payload(`${BRANCH} version ${v}`, 256));
    await commitVersion(ctx, {
      branch: BRANCH,
      files: [shared, delta],
      ...(v === 1 ? { parent: { branch: "main", version: forkAt } } : {}),
    });
  }
  out.line(`   branch ${BRANCH} forked from main@${forkAt}, with 5 versions of its own`);
  return { tagged, forkAt };
}

function describeReader(
  cx: CommandContext,
  reader: Reader,
  dirArg: string,
  readVersion: number,
): void {
  const out = cx.out;
  out.line(
    `   reader pid ${reader.child.pid}: lease ${reader.lease.leaseId} (TTL 5s, renewed every 1.5s, expires ${reader.lease.expiresAt ?? "?"} storage time)`,
  );
  out.line(
    out.paint(
      "dim",
      `   (it runs: ${selfCommand(cx)} lease acquire ${dirArg} ${readVersion} --ttl 5s --hold --read-every 200ms)`,
    ),
  );
}

interface CleanupRun {
  plan: Awaited<ReturnType<typeof planCleanup>>;
  stats: CleanupStats;
  readsDuring: number;
}

/** Demo parts 4-6: plan (dry run), clean up while the reader reads, explain what was kept. */
async function cleanupWhileReading(
  cx: CommandContext,
  ctx: ProtocolContext,
  reader: Reader,
  dirArg: string,
  step: (n: number, text: string) => void,
): Promise<CleanupRun> {
  const out = cx.out;
  // Every commit has returned, and nothing else writes here, so no lost commit answer can
  // still be re-issued: the minimum version age that guards against that (5 min by
  // default) can be 0 for the demo.
  const policy = { retainVersions: RETAIN, minVersionAgeMs: 0 };
  step(
    4,
    `Plan a cleanup that keeps the newest ${RETAIN} versions of every branch (dry run, writes nothing)`,
  );
  out.line(
    out.paint(
      "dim",
      `   (as: ${selfCommand(cx)} cleanup ${dirArg} --retain ${RETAIN} --min-age 0 --dry-run; --min-age 0 is safe here because every commit has returned)`,
    ),
  );
  const plan = await planCleanup(ctx, policy, { format: holdfastFormat });
  out.line(
    `   plan: retire ${plan.retired.length} version(s), keep ${plan.retained.length}; ${plan.objectsDeleted.total} object(s) would be deleted`,
  );

  step(5, "Run the cleanup while the reader keeps reading");
  out.line(
    out.paint(
      "dim",
      "   (on a local disk the cleanup takes less time than the reader's pause between reads, so before each batch of deletions it waits for one more read: the reads visibly interleave with the deletions)",
    ),
  );
  const readsBefore = reader.reads();
  const view = new ProgressView(out, { clock: ctx.clock, plain: true });
  let stats: CleanupStats;
  try {
    const paced = { ...ctx, store: new ReadPacedStore(ctx.store, () => reader.nextRead(2_000)) };
    stats = await cleanup(paced, policy, {
      format: holdfastFormat,
      onProgress: (p) => view.update(p),
      // As `holdfast cleanup` does: the run's summary stays on the store for the dashboard.
      history: { trigger: "cli" },
    });
  } finally {
    view.stop();
  }
  const readsDuring = reader.reads() - readsBefore;
  out.line(
    `   the reader read main@${reader.lease.version} ${readsDuring} time(s) during the cleanup`,
  );

  step(6, "What was retired, what was kept, and why");
  printStats(out, stats);
  await explainReferences(ctx, out, stats, reader.lease.leaseId, reader.child.pid ?? 0);
  return { plan, stats, readsDuring };
}

/**
 * Demo part 7: every kept version still reads, every retired one is gone, the plan matched, and
 * the reader (in its own process) read its version after the cleanup and never failed.
 */
async function verifyAll(
  cx: CommandContext,
  ctx: ProtocolContext,
  reader: Reader,
  run: CleanupRun,
  readVersion: number,
) {
  const out = cx.out;
  const { plan, stats } = run;
  const verification = await verify(ctx, stats);
  const readsAfterCleanup = reader.reads();
  const deadline = Date.now() + 10_000;
  while (
    reader.reads() < readsAfterCleanup + 1 &&
    Date.now() < deadline &&
    reader.failure() === undefined
  ) {
    await ctx.sleep(50);
  }
  const readsAfter = reader.reads() - readsAfterCleanup;
  const readerCode = await reader.stop();
  const readerOk =
    readerCode === 0 && reader.failure() === undefined && readsAfter > 0 && run.readsDuring > 0;
  const planMatched = plan.retired.length === stats.retired.length;
  const ok = verification.failures.length === 0 && readerOk && planMatched;
  out.line(
    `   ${mark(out, verification.failures.length === 0)} ${verification.readable} kept version(s) read back in full (${formatBytes(verification.bytes)}); ${verification.gone} retired manifest(s) are gone`,
  );
  for (const failure of verification.failures.slice(0, 10))
    out.line(`     ${out.paint("red", failure)}`);
  out.line(
    `   ${mark(out, readerOk)} the reader read main@${readVersion} ${reader.reads()} time(s) (${run.readsDuring} during the cleanup, ${readsAfter} after it) without an error, then released its lease (exit ${readerCode})`,
  );
  if (reader.failure()) out.line(`     ${out.paint("red", reader.failure()!)}`);
  out.line(
    `   ${mark(out, planMatched)} the dry-run plan matched the cleanup (${plan.retired.length} vs ${stats.retired.length})`,
  );
  return { verification, readsAfter, readerCode, readerOk, ok };
}

function printEnding(
  cx: CommandContext,
  dirArg: string,
  stats: CleanupStats,
  ok: boolean,
  elapsedMs: number,
): void {
  const out = cx.out;
  const hf = selfCommand(cx);
  out.line();
  out.line(
    ok
      ? out.paint(
          "green",
          `Demo finished in ${formatDuration(elapsedMs)}: every protected version is intact.`,
        )
      : out.paint("red", `Demo FAILED verification after ${formatDuration(elapsedMs)}.`),
  );
  out.line("Explore it:");
  for (const command of [
    `${hf} versions ${dirArg}`,
    `${hf} versions ${dirArg} --branch ${BRANCH}`,
    `${hf} tag list ${dirArg}`,
    `${hf} status ${dirArg}`,
    `${hf} lease acquire ${dirArg} ${stats.retained.find((v) => v.branch === "main")?.version ?? 1} --ttl 30s --hold`,
    `${hf} cleanup ${dirArg} --retain 5 --dry-run`,
  ]) {
    out.line(`   ${command}`);
  }
}

// --- utils ---

/** `holdfast` when it is on PATH, else the way this process was started (a repository checkout). */
function selfCommand(cx: CommandContext): string {
  const dirs = (cx.io.env.PATH ?? "").split(delimiter).filter((d) => d !== "");
  if (dirs.some((d) => existsSync(join(d, "holdfast")))) return "holdfast";
  const rel = relative(cx.io.cwd, BIN);
  return `node ${rel.startsWith("..") ? BIN : rel}`;
}

function payload(label: string, size: number): Uint8Array {
  const text = `${label}\n`;
  return new TextEncoder().encode(text.padEnd(size, "."));
}

function mark(out: Output, ok: boolean): string {
  return ok ? out.paint("green", "ok  ") : out.paint("red", "FAIL");
}

/** Names the references behind "tag", "lease" and "branch-lineage" retentions. */
async function explainReferences(
  ctx: ProtocolContext,
  out: Output,
  stats: CleanupStats,
  leaseId: string,
  pid: number,
): Promise<void> {
  const tags = await listTags(ctx, { format: holdfastFormat });
  out.line("   Protected versions, by name:");
  const sorted = [...stats.retained].sort(
    (a, b) => a.branch.localeCompare(b.branch) || a.version - b.version,
  );
  for (const kept of sorted) {
    if (kept.reason === "policy" || kept.reason === "latest") continue;
    let why = REASON_TEXT[kept.reason] ?? kept.reason;
    if (kept.reason === "tag") {
      const names = tags
        .filter((t) => t.target.branch === kept.branch && t.target.version === kept.version)
        .map((t) => t.name);
      why = `tag ${names.join(", ")}`;
    } else if (kept.reason === "lease") {
      why = `lease ${leaseId}, held by reader process ${pid}`;
    } else if (kept.reason === "branch-lineage") {
      why = `branch ${BRANCH} was forked from it`;
    }
    out.line(`     ${kept.branch}@${kept.version}: ${why}`);
  }
}

/** Reads every kept version in full and checks every retired manifest is gone. */
async function verify(
  ctx: ProtocolContext,
  stats: CleanupStats,
): Promise<{ readable: number; bytes: number; gone: number; failures: string[] }> {
  const failures: string[] = [];
  let readable = 0;
  let bytes = 0;
  let gone = 0;
  for (const kept of stats.retained) {
    try {
      const { manifest } = await readManifest(ctx, kept.branch, kept.version);
      for (const file of manifest.files) {
        const got = await ctx.store.get(file.key);
        if (!got) throw new Error(`file ${file.key} is missing`);
        if (got.body.byteLength !== file.size)
          throw new Error(
            `file ${file.key} has ${got.body.byteLength} bytes, expected ${file.size}`,
          );
        bytes += got.body.byteLength;
      }
      readable += 1;
    } catch (error) {
      failures.push(
        `${kept.branch}@${kept.version} (${kept.reason}): ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  for (const retired of stats.retired) {
    if ((await tryReadManifest(ctx, retired.branch, retired.version)) === null) gone += 1;
    else
      failures.push(
        `${retired.branch}@${retired.version} was reported retired but its manifest is still there`,
      );
  }
  // Every version still listed must be one cleanup reported as kept.
  const kept = new Set(stats.retained.map((v) => `${v.branch}@${v.version}`));
  for (const branch of ["main", BRANCH]) {
    for await (const entry of listVersions(ctx, branch)) {
      if (!kept.has(`${branch}@${entry.version}`))
        failures.push(`${branch}@${entry.version} is listed but was not reported as kept`);
    }
  }
  return { readable, bytes, gone, failures };
}
