import {
  type CleanupPolicy,
  type CleanupStats,
  cleanup,
  planCleanup,
  recover,
} from "@holdfast/cleanup";
import { decodeJson, holdfastError, listAll } from "@holdfast/conditional-store";
import {
  latestVersion,
  listBranchesWithVersions,
  openDataset,
  type ProtocolContext,
  storageNow,
} from "@holdfast/dataset";
import {
  INTENTS_PREFIX,
  IntentSchema,
  listTags,
  recoverReferences,
} from "@holdfast/refs-lifecycle";
import {
  activeVersions,
  parseRetirementKey,
  RETIREMENT_ROOT,
  readRecord,
} from "@holdfast/retirement";
import { Command } from "commander";
import { parseCountArg, parseNameArg, parseVersionArg } from "../args.js";
import { formatBytes, formatDuration, parseDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import { parseFormatOption, type ResolvedFormat, resolveFormat } from "../format.js";
import type { Output } from "../output.js";
import { type Registrar, withStoreOptions } from "../program.js";
import { formatRanges, ProgressView } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";
import { describeLeases } from "./lease.js";

/** What each retention reason means, in the words the summary prints. */
export const REASON_TEXT: Record<string, string> = {
  lease: "an active reader lease pins it",
  tag: "a tag names it",
  "branch-lineage": "a branch was forked from it (or descends through it)",
  intent: "a tag or branch operation in flight names it",
  policy: "the policy keeps it (too new, or within --retain)",
  latest: "latest version of its branch (always kept)",
  recent: "younger than --min-age (a lost commit answer could still be re-issued)",
};

/** `cleanup`, `recover`, `status`. */
export function registerCleanup(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("cleanup")
          .description(
            "retire old versions safely: leases, tags, branches and in-flight operations are always respected",
          )
          .argument("<url>", "storage URL")
          .option(
            "--older-than <duration>",
            "retire versions older than this in storage time, e.g. 7d",
          )
          .option("--retain <n>", "keep the newest N versions of every branch")
          .option("--before-version <n>", "retire versions numbered below N")
          .option("-b, --branch <name...>", "retire versions of these branches only")
          .option(
            "--orphan-grace <duration>",
            "delete unreferenced data files older than this",
            "7d",
          )
          .option(
            "--no-writer-active",
            "state that no writer can be committing during this run: allows --orphan-grace below 1h",
          )
          .option(
            "--min-age <duration>",
            "never retire versions younger than this (storage time): a writer whose commit answer was lost may still be re-issuing it",
            "5m",
          )
          .option(
            "--error-if-tagged",
            "fail (writing nothing) if a tag names a version the policy would retire",
          )
          .option("--dry-run", "plan only: show what would be retired and kept, write nothing")
          .option(
            "--format <name>",
            "dataset format: holdfast or lance (default: detected from the dataset)",
          ),
      ),
      "cleanup",
      [
        "holdfast cleanup ./my-dataset --retain 10 --dry-run",
        "holdfast cleanup ./my-dataset --older-than 7d",
        "holdfast cleanup s3://bucket/ds --before-version 100 --retain 5 --json",
        "holdfast cleanup s3://bucket/db/events.lance --retain 10   # a Lance table (LanceDB)",
      ],
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const policy = parsePolicy(opts);
        const forced = parseFormatOption(opts.format);
        const ctx = contextFor(await openTarget(t, cx.io));
        const resolved = await resolveFormat(ctx, forced);
        if (resolved.name === "holdfast") await openDataset(ctx);
        warnLanceAutoCleanup(cx.out, resolved);
        const view = new ProgressView(cx.out);
        let stats: CleanupStats;
        try {
          const run = policy.dryRun ? planCleanup : cleanup;
          stats = await run(ctx, policy, {
            onProgress: (p) => view.update(p),
            format: resolved.format,
            referenceCensus: resolved.referenceCensus,
          });
        } finally {
          view.stop();
        }
        cx.out.result(cx.command, {
          location: t.display,
          format: resolved.name,
          policy,
          stats,
        });
        printStats(cx.out, stats);
        return ExitCode.ok;
      },
    ),
  );

  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("recover")
          .description(
            "finish or undo interrupted work: retirements, tag and branch operations (safe to run any time)",
          )
          .argument("<url>", "storage URL"),
      ),
      "recover",
      ["holdfast recover ./my-dataset", "holdfast recover s3://bucket/ds --json"],
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const ctx = contextFor(await openTarget(t, cx.io));
        await openDataset(ctx);
        // References first: a retirement's recovery censuses them, so settle their intents.
        const refs = await recoverReferences(ctx);
        const view = new ProgressView(cx.out);
        let stats: CleanupStats;
        try {
          stats = await recover(ctx, { onProgress: (p) => view.update(p) });
        } finally {
          view.stop();
        }
        const references = {
          fencedIntents: refs.fencedIntents.length,
          fencedCanonicals: refs.fencedCanonicals.length,
          deletionsCompleted: refs.deletions.filter((d) => d.outcome === "completed").length,
          deletionsAbandoned: refs.deletions.filter((d) => d.outcome === "abandoned").length,
          reclaimedIntents: refs.reclaimedIntents.length,
          removedOrphans: refs.removedOrphans.length,
          removedFences: refs.removedFences.length,
        };
        cx.out.result(cx.command, {
          location: t.display,
          references,
          retirements: stats.recovered,
          retired: stats.retired,
          objectsDeleted: stats.objectsDeleted,
          bytesDeleted: stats.bytesDeleted,
          warnings: stats.warnings,
        });
        cx.out.line(
          `References: ${references.fencedIntents} expired intent(s) fenced, ${references.reclaimedIntents} reclaimed, ` +
            `${references.deletionsCompleted} interrupted deletion(s) finished, ${references.removedOrphans} orphan(s) removed.`,
        );
        cx.out.line(
          `Retirements: ${stats.recovered.committed} committed one(s) finished, ${stats.recovered.cancelled} cancelled, ` +
            `${stats.recovered.retained} version(s) kept; ${stats.objectsDeleted.total} object(s), ${formatBytes(stats.bytesDeleted)} deleted.`,
        );
        for (const warning of stats.warnings)
          cx.out.line(cx.out.paint("yellow", `warning: ${warning}`));
        return ExitCode.ok;
      },
    ),
  );

  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("status")
          .description(
            "show branches, tags, active leases, retirements in flight and pending reference intents",
          )
          .argument("<url>", "storage URL"),
      ),
      "status",
      ["holdfast status ./my-dataset", "holdfast status az://container/ds --json"],
      async ([url], opts, cx) => {
        const t = parseTarget(url!, opts, cx.io);
        const ctx = contextFor(await openTarget(t, cx.io));
        const info = await openDataset(ctx);
        const status = await collectStatus(ctx);
        cx.out.result(cx.command, { location: t.display, datasetId: info.datasetId, ...status });
        printStatus(cx.out, t.display, status);
        return ExitCode.ok;
      },
    ),
  );
}

// --- utils ---

/** Lance's automatic cleanup ignores holdfast's leases: say so before anything runs. */
function warnLanceAutoCleanup(out: Output, resolved: ResolvedFormat): void {
  const auto = resolved.lance?.autoCleanup;
  if (!auto) return;
  const settings = Object.entries(auto)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(", ");
  out.line(
    out.paint(
      "yellow",
      `warning: this Lance table turns on Lance's automatic cleanup (${settings}): writers run a second cleaner that ignores holdfast's leases; turn it off`,
    ),
  );
}

function parsePolicy(opts: Record<string, unknown>): CleanupPolicy {
  const policy: {
    -readonly [K in keyof CleanupPolicy]: CleanupPolicy[K];
  } = {};
  if (opts.olderThan !== undefined)
    policy.olderThanMs = parseDuration(String(opts.olderThan), "--older-than");
  if (opts.retain !== undefined) policy.retainVersions = parseCountArg(opts.retain, "--retain", 1);
  if (opts.beforeVersion !== undefined)
    policy.beforeVersion = parseVersionArg(opts.beforeVersion, "--before-version");
  if (opts.orphanGrace !== undefined)
    policy.orphanGraceMs = parseDuration(String(opts.orphanGrace), "--orphan-grace");
  if (opts.minAge !== undefined) {
    policy.minVersionAgeMs = parseDuration(String(opts.minAge), "--min-age");
  }
  if (Array.isArray(opts.branch))
    policy.branches = opts.branch.map((b) => parseNameArg(b, "branch"));
  if (opts.errorIfTagged === true) policy.errorIfTaggedOldVersions = true;
  if (opts.writerActive === false) policy.noWriterActive = true;
  if (opts.dryRun === true) policy.dryRun = true;
  if (
    policy.olderThanMs === undefined &&
    policy.retainVersions === undefined &&
    policy.beforeVersion === undefined
  ) {
    throw holdfastError("invalid-input", "parse", "cleanup needs a policy", {
      hint: "pass at least one of --older-than 7d, --retain N, --before-version N (add --dry-run to preview)",
    });
  }
  return policy;
}

/** Prints the cleanup summary: retired, retained with reasons, objects, bytes, requests, time. */
export function printStats(out: Output, stats: CleanupStats): void {
  if (out.json) return;
  const verb = stats.dryRun ? "Would retire" : "Retired";
  const byBranch = groupBy(stats.retired, (v) => v.branch);
  out.line();
  out.line(
    out.paint(
      "bold",
      stats.dryRun ? "Cleanup plan (dry run: nothing was written)" : "Cleanup summary",
    ),
  );
  if (stats.retired.length === 0) {
    out.line(`${verb}: nothing.`);
  } else {
    out.line(`${verb} ${stats.retired.length} version(s):`);
    for (const [branch, list] of byBranch) {
      out.line(`  ${branch}: ${formatRanges(list.map((v) => v.version))}`);
    }
  }
  out.line(`Kept ${stats.retained.length} version(s):`);
  const groups = groupBy(stats.retained, (v) => `${v.branch}\u0000${v.reason}`);
  out.table(
    ["BRANCH", "VERSIONS", "REASON"],
    [...groups.values()]
      .sort((a, b) => a[0]!.branch.localeCompare(b[0]!.branch) || minVersion(a) - minVersion(b))
      .map((list) => [
        list[0]!.branch,
        formatRanges(list.map((v) => v.version)),
        `${list[0]!.reason}: ${REASON_TEXT[list[0]!.reason] ?? list[0]!.reason}`,
      ]),
  );
  const o = stats.objectsDeleted as Record<string, number> & typeof stats.objectsDeleted;
  // Any other kind of object cleanup reports (expired leases, clock probes) when non-zero.
  const extra = Object.entries(o)
    .filter(([k, v]) => !["total", "manifests", "dataFiles", "orphans"].includes(k) && v > 0)
    .map(([k, v]) => `, ${v} ${k.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`)}`)
    .join("");
  out.line(
    `${stats.dryRun ? "Would delete" : "Deleted"} ${o.total} object(s) (${o.manifests} manifests, ${o.dataFiles} data files, ${o.orphans} orphans${extra}), ${formatBytes(stats.bytesDeleted)}.`,
  );
  const r = stats.requests;
  out.line(
    `Requests: ${r.total} (${(["list", "get", "head", "put", "delete", "deleteMany"] as const).map((k) => `${k} ${r[k]}`).join(", ")}).`,
  );
  out.line(`Elapsed: ${formatDuration(stats.elapsedMs)}.`);
  for (const warning of stats.warnings) out.line(out.paint("yellow", `warning: ${warning}`));
}

interface StatusShape {
  branches: { name: string; latestVersion: number | null }[];
  tags: { name: string; target: { branch: string; version: number } }[];
  leases: Awaited<ReturnType<typeof describeLeases>>;
  retirements: {
    key: string;
    branch: string;
    opId: string;
    state: string;
    versions: number[];
    cancelledVersions: number[];
    lastModified: string;
    ownershipBoundMs: number;
    abandoned: boolean;
  }[];
  intents: {
    key: string;
    kind: string;
    name: string;
    op: string;
    state: string;
    lastModified: string;
    expired: boolean;
  }[];
}

/** Reads what a person checking on a dataset wants to know; read-only except one clock probe. */
async function collectStatus(ctx: ProtocolContext): Promise<StatusShape> {
  const branchNames = await listBranchesWithVersions(ctx);
  const branches = await Promise.all(
    branchNames.map(async (name) => ({ name, latestVersion: await latestVersion(ctx, name) })),
  );
  const tags = (await listTags(ctx)).map((t) => ({ name: t.name, target: t.target }));
  const leases = (await describeLeases(ctx)).filter((l) => l.active);
  const now = await storageNow(ctx);
  const retirements: StatusShape["retirements"] = [];
  for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
    if (!parseRetirementKey(meta.key)) continue;
    const handle = await readRecord(ctx, meta.key);
    if (!handle) continue;
    const record = handle.record;
    const stamp = handle.lastModified ?? meta.lastModified;
    const bound = stamp.getTime() + record.ownershipBoundMs + 1000;
    retirements.push({
      key: meta.key,
      branch: record.branch,
      opId: record.opId,
      state: record.state,
      versions: activeVersions(record),
      cancelledVersions: record.versions.filter((v) => v.cancelled).map((v) => v.version),
      lastModified: stamp.toISOString(),
      ownershipBoundMs: record.ownershipBoundMs,
      abandoned: record.state === "draining" && bound < now.getTime(),
    });
  }
  const intents: StatusShape["intents"] = [];
  for await (const meta of listAll(ctx.store, INTENTS_PREFIX)) {
    if (!meta.key.endsWith(".json")) continue;
    const got = await ctx.store.get(meta.key);
    if (!got) continue;
    let parsed: ReturnType<typeof IntentSchema.safeParse>;
    try {
      parsed = IntentSchema.safeParse(decodeJson(got.body));
    } catch {
      continue;
    }
    if (!parsed.success) continue;
    const intent = parsed.data;
    intents.push({
      key: meta.key,
      kind: intent.kind,
      name: intent.name,
      op: intent.op,
      state: intent.state,
      lastModified: got.lastModified.toISOString(),
      expired: got.lastModified.getTime() + intent.ownershipBoundMs + 1000 < now.getTime(),
    });
  }
  return { branches, tags, leases, retirements, intents };
}

function printStatus(out: Output, location: string, s: StatusShape): void {
  out.line(out.paint("bold", `holdfast status ${location}`));
  out.line();
  out.line(out.paint("bold", "Branches"));
  out.table(
    ["BRANCH", "LATEST VERSION"],
    s.branches.map((b) => [b.name, String(b.latestVersion ?? "-")]),
  );
  out.line();
  out.line(out.paint("bold", `Tags (${s.tags.length})`));
  if (s.tags.length > 0)
    out.table(
      ["TAG", "VERSION"],
      s.tags.map((t) => [t.name, `${t.target.branch}@${t.target.version}`]),
    );
  out.line();
  out.line(out.paint("bold", `Active leases (${s.leases.length})`));
  if (s.leases.length > 0) {
    out.table(
      ["LEASE", "VERSION", "EXPIRES (storage time)"],
      s.leases.map((l) => [l.leaseId, `${l.branch}@${l.version}`, l.expiresAt ?? "?"]),
    );
  }
  out.line();
  out.line(out.paint("bold", `Retirements in flight (${s.retirements.length})`));
  if (s.retirements.length > 0) {
    out.table(
      ["BRANCH", "STATE", "VERSIONS", "SINCE (storage time)"],
      s.retirements.map((r) => [
        r.branch,
        r.abandoned ? `${r.state} (abandoned: run holdfast recover)` : r.state,
        formatRanges(r.versions),
        r.lastModified,
      ]),
    );
  }
  out.line();
  out.line(out.paint("bold", `Pending reference intents (${s.intents.length})`));
  if (s.intents.length > 0) {
    out.table(
      ["KIND", "NAME", "OP", "STATE", "SINCE (storage time)"],
      s.intents.map((i) => [
        i.kind,
        i.name,
        i.op,
        i.expired ? `${i.state} (expired: run holdfast recover)` : i.state,
        i.lastModified,
      ]),
    );
  }
}

function minVersion(list: readonly { version: number }[]): number {
  return Math.min(...list.map((v) => v.version));
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}
