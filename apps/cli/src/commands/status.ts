import { decodeJson, listAll } from "@holdfast/conditional-store";
import {
  latestVersion,
  listBranchesWithVersions,
  openDataset,
  type ProtocolContext,
  storageNow,
} from "@holdfast/dataset";
import { INTENTS_PREFIX, IntentSchema, listTags } from "@holdfast/refs-lifecycle";
import {
  activeVersions,
  parseRetirementKey,
  RETIREMENT_ROOT,
  readCleanupLock,
  readRecord,
} from "@holdfast/retirement";
import { Command } from "commander";
import { ExitCode } from "../exit-codes.js";
import type { Output } from "../output.js";
import { type Registrar, withStoreOptions } from "../program.js";
import { formatRanges } from "../progress.js";
import { contextFor, openTarget, parseTarget } from "../target.js";
import { describeLeases } from "./lease.js";

/** `status`: what a person checking on a dataset (or on something stuck) wants to know. */
export function registerStatus(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("status")
          .description(
            "show branches, tags, active leases, retirements in flight, the cleanup lock and pending reference intents (how to read it: docs/operations.md)",
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
  /** The cleanup holding the dataset's lock, if any. */
  cleanupLock: { owner: string; since: string | null; lastModified: string; stale: boolean } | null;
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
  const lock = await readCleanupLock(ctx).catch(() => null);
  const cleanupLock = lock
    ? {
        owner: lock.owner,
        since: lock.since ?? null,
        lastModified: lock.lastModified.toISOString(),
        stale: lock.lastModified.getTime() + lock.boundMs + 1000 < now.getTime(),
      }
    : null;
  return { branches, tags, leases, retirements, intents, cleanupLock };
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
      ["ID", "BRANCH", "STATE", "VERSIONS", "SINCE (storage time)"],
      s.retirements.map((r) => [
        r.opId,
        r.branch,
        r.abandoned
          ? `${r.state} (stale: its owner stopped renewing; holdfast recover, or recover --abandon ${r.opId})`
          : r.state,
        formatRanges(r.versions),
        r.lastModified,
      ]),
    );
  }
  out.line();
  out.line(out.paint("bold", "Cleanup lock"));
  out.line(
    s.cleanupLock
      ? `held by cleanup ${s.cleanupLock.owner} since ${s.cleanupLock.since ?? s.cleanupLock.lastModified}` +
          (s.cleanupLock.stale
            ? " (stale: its owner stopped renewing; the next cleanup takes it over)"
            : "")
      : "free",
  );
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
