import { decodeJson, listAll } from "@holdfast/conditional-store";
import { type DatasetFormat, requireHoldfastDataset } from "@holdfast/dataset";
import { holdfastMarkerUnchecked, requireFormat } from "@holdfast/dataset/internal";
import { describeLeases, type LeaseView } from "@holdfast/leases";
import { type ProtocolContext, RETIREMENT_ROOT, storageNow } from "@holdfast/protocol";
import { INTENTS_PREFIX, IntentSchema, listTags } from "@holdfast/refs-lifecycle";
import {
  activeVersions,
  parseRetirementKey,
  readCleanupLock,
  readRecord,
} from "@holdfast/retirement";

/**
 * What a person checking on a dataset (or on something stuck) wants to know: the CLI's
 * `status` document and the HTTP API's `GET .../status` answer (docs/operations.md).
 * Every "stale" or "expired" verdict is judged against the store's clock.
 */
export interface DatasetStatus {
  branches: { name: string; latestVersion: number | null }[];
  tags: { name: string; target: { branch: string; version: number } }[];
  /** Active leases only. */
  leases: LeaseView[];
  retirements: {
    key: string;
    branch: string;
    opId: string;
    state: string;
    versions: number[];
    cancelledVersions: number[];
    lastModified: string;
    ownershipBoundMs: number;
    /** A draining record whose owner stopped renewing past its bound. */
    abandoned: boolean;
  }[];
  intents: {
    key: string;
    kind: string;
    name: string;
    op: string;
    state: string;
    lastModified: string;
    /** Past its ownership bound: the next recovery settles it. */
    expired: boolean;
  }[];
  /** The cleanup holding the dataset's lock, if any. */
  cleanupLock: { owner: string; since: string | null; lastModified: string; stale: boolean } | null;
  /** The store's clock when the status was read. */
  storageNow: string;
}

/** Slack added to a storage-time bound before a verdict of stale (timestamp precision). */
const BOUND_SLACK_MS = 1000;

/**
 * Reads a dataset's status. Read-only except the one clock probe `storageNow` makes.
 * Branches, versions and tags are read through `options.format`, required (a Lance table's
 * are Lance's; docs/protocol.md §1.1).
 */
export async function collectStatus(
  ctx: ProtocolContext,
  options: { readonly format: DatasetFormat },
): Promise<DatasetStatus> {
  requireFormat(options?.format, "status");
  const { format } = options;
  if (holdfastMarkerUnchecked(ctx.store, format)) await requireHoldfastDataset(ctx, "status");
  const branches = await collectBranches(ctx, format);
  const tags = (await listTags(ctx, { format })).map((t) => ({
    name: t.name,
    target: t.target,
  }));
  const leases = (await describeLeases(ctx)).filter((l) => l.active);
  const now = await storageNow(ctx);
  const retirements = await collectRetirements(ctx, now);
  const intents = await collectIntents(ctx, now);
  const lock = await readCleanupLock(ctx).catch(() => null);
  const cleanupLock = lock
    ? {
        owner: lock.owner,
        since: lock.since ?? null,
        lastModified: lock.lastModified.toISOString(),
        stale: lock.lastModified.getTime() + lock.boundMs + BOUND_SLACK_MS < now.getTime(),
      }
    : null;
  return {
    branches,
    tags,
    leases,
    retirements,
    intents,
    cleanupLock,
    storageNow: now.toISOString(),
  };
}

// --- utils ---

/** Each branch with versions and its latest version, through the format (holdfast's from its head hint, O(1)). */
async function collectBranches(
  ctx: ProtocolContext,
  format: DatasetFormat,
): Promise<DatasetStatus["branches"]> {
  const names = await format.listBranches(ctx);
  return Promise.all(
    names.map(async (name) => ({ name, latestVersion: await format.latestVersion(ctx, name) })),
  );
}

async function collectRetirements(
  ctx: ProtocolContext,
  now: Date,
): Promise<DatasetStatus["retirements"]> {
  const retirements: DatasetStatus["retirements"] = [];
  for await (const meta of listAll(ctx.store, RETIREMENT_ROOT)) {
    if (!parseRetirementKey(meta.key)) continue;
    const handle = await readRecord(ctx, meta.key);
    if (!handle) continue;
    const record = handle.record;
    const stamp = handle.lastModified ?? meta.lastModified;
    const bound = stamp.getTime() + record.ownershipBoundMs + BOUND_SLACK_MS;
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
  return retirements;
}

async function collectIntents(ctx: ProtocolContext, now: Date): Promise<DatasetStatus["intents"]> {
  const intents: DatasetStatus["intents"] = [];
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
      expired:
        got.lastModified.getTime() + intent.ownershipBoundMs + BOUND_SLACK_MS < now.getTime(),
    });
  }
  return intents;
}
