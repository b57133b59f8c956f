import { decodeJson, listAll, probeStore } from "@holdfast/conditional-store";
import {
  isActiveAt,
  latestVersion,
  leaseExpiresAt,
  listBranchesWithVersions,
  listVersions,
  type ProtocolContext,
  storageNow,
  storePrecisionMs,
} from "@holdfast/dataset";
import { LeaseBodySchema, type LeaseEntry, listLeases } from "@holdfast/leases";
import { INTENTS_PREFIX, IntentSchema, listTags } from "@holdfast/refs-lifecycle";
import {
  activeVersions,
  parseRetirementKey,
  RETIREMENT_ROOT,
  readRecord,
} from "@holdfast/retirement";

/** A lease as the CLI's `lease list` and `status` show it (`LeaseShape`). */
export interface LeaseView {
  leaseId: string;
  branch: string;
  version: number;
  key: string;
  ttlMs: number | null;
  lastModified: string;
  expiresAt: string | null;
  active: boolean;
}

/** One version row of the `versions` document. */
export interface VersionView {
  version: number;
  key: string;
  lastModified: string;
  size: number;
  tags: string[];
}

/**
 * One page of a branch's versions, oldest first: versions numbered above `after`, at most
 * `limit`. `nextAfter` is the last version of the page when more may follow, else null.
 */
export async function versionsPage(
  ctx: ProtocolContext,
  branch: string,
  page: { after?: number | undefined; limit: number },
): Promise<{ versions: VersionView[]; nextAfter: number | null }> {
  const tagsByVersion = new Map<number, string[]>();
  for (const tag of await listTags(ctx)) {
    if (tag.target.branch !== branch) continue;
    tagsByVersion.set(tag.target.version, [
      ...(tagsByVersion.get(tag.target.version) ?? []),
      tag.name,
    ]);
  }
  const versions: VersionView[] = [];
  let more = false;
  for await (const entry of listVersions(ctx, branch)) {
    if (page.after !== undefined && entry.version <= page.after) continue;
    if (versions.length === page.limit) {
      more = true;
      break;
    }
    versions.push({
      version: entry.version,
      key: entry.key,
      lastModified: entry.lastModified.toISOString(),
      size: entry.size,
      tags: tagsByVersion.get(entry.version) ?? [],
    });
  }
  return { versions, nextAfter: more ? (versions.at(-1)?.version ?? null) : null };
}

/** Lists leases with their TTL (from each body) and activity judged in storage time. */
export async function describeLeases(
  ctx: ProtocolContext,
  filter: { branch?: string; version?: number } = {},
): Promise<LeaseView[]> {
  const entries: LeaseEntry[] = [];
  for await (const entry of listLeases(ctx, filter)) entries.push(entry);
  if (entries.length === 0) return [];
  // "Now" is the store's own clock (a probe object's Last-Modified), never this host's.
  const now = await storageNow(ctx);
  const precision = storePrecisionMs(ctx);
  const views: LeaseView[] = [];
  for (const entry of entries) {
    const ttlMs = await readTtl(ctx, entry.key);
    views.push({
      leaseId: entry.leaseId,
      branch: entry.branch,
      version: entry.version,
      key: entry.key,
      ttlMs,
      lastModified: entry.lastModified.toISOString(),
      expiresAt:
        ttlMs === null ? null : leaseExpiresAt(entry.lastModified, ttlMs, precision).toISOString(),
      // An unreadable body counts as active: showing a lease as expired must never be a guess.
      active: ttlMs === null ? true : isActiveAt(entry.lastModified, ttlMs, precision, now),
    });
  }
  return views;
}

/** What `status` reports: branches, tags, active leases, retirements and intents in flight. */
export async function collectStatus(ctx: ProtocolContext) {
  const branchNames = await listBranchesWithVersions(ctx);
  const branches = await Promise.all(
    branchNames.map(async (name) => ({ name, latestVersion: await latestVersion(ctx, name) })),
  );
  const tags = (await listTags(ctx)).map((t) => ({ name: t.name, target: t.target }));
  const leases = (await describeLeases(ctx)).filter((l) => l.active);
  const now = await storageNow(ctx);
  const retirements = [];
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
  const intents = [];
  for await (const meta of listAll(ctx.store, INTENTS_PREFIX)) {
    if (!meta.key.endsWith(".json")) continue;
    const got = await ctx.store.get(meta.key);
    if (!got) continue;
    const parsed = IntentSchema.safeParse(safeDecode(got.body));
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
  return { branches, tags, leases, retirements, intents, storageNow: now.toISOString() };
}

type CheckId =
  | "create-only"
  | "if-match"
  | "conditional-delete"
  | "timestamps"
  | "batch-delete"
  | "clock-skew";

/**
 * The doctor's findings for a dataset's store (the CLI `doctor` document): the shared
 * probe's verdicts on create-only, if-match and conditional delete, timestamp precision
 * and clock skew. Writes and removes one probe object.
 */
export async function diagnoseStore(ctx: ProtocolContext) {
  const store = ctx.store;
  const report = await probeStore(store);
  const caps = store.capabilities;
  const checks: { id: CheckId; status: "pass" | "warn" | "fail" | "info"; detail: string }[] = [
    report.createOnly === "honoured"
      ? { id: "create-only", status: "pass", detail: "a second create-only put was refused" }
      : { id: "create-only", status: "fail", detail: "a create-only put overwrote an object" },
    report.conditionalUpdate === "honoured" && report.currentEtagUpdate === "applied"
      ? { id: "if-match", status: "pass", detail: "stale ETag refused, current ETag applied" }
      : {
          id: "if-match",
          status: caps.atomicConditionalUpdate ? "fail" : "warn",
          detail: `stale if-match ${report.conditionalUpdate}, current ${report.currentEtagUpdate}`,
        },
    report.conditionalDelete === "not-declared"
      ? {
          id: "conditional-delete",
          status: "info",
          detail: "not declared: deletions of shared objects go through fences",
        }
      : report.conditionalDelete === "honoured"
        ? {
            id: "conditional-delete",
            status: "pass",
            detail: "a stale if-match delete was refused",
          }
        : { id: "conditional-delete", status: "fail", detail: "a stale if-match delete applied" },
    {
      id: "timestamps",
      status:
        report.timestamps.headPrecisionMs > report.timestamps.declaredPrecisionMs ? "warn" : "pass",
      detail: `head precision ${report.timestamps.headPrecisionMs} ms, declared ${report.timestamps.declaredPrecisionMs} ms`,
    },
    {
      id: "clock-skew",
      status: "info",
      detail: `store clock minus this host's: ${report.clockSkewMs} ms (leases never use host clocks)`,
    },
  ];
  const verdict = checks.some((c) => c.status === "fail")
    ? "unsupported"
    : checks.some((c) => c.status === "warn")
      ? "degraded"
      : "supported";
  const guarantees =
    verdict === "unsupported"
      ? ["NOTHING: the store failed a conditional-write probe; holdfast refuses to run here."]
      : [
          "leases, tags and branches are exclusive (create-only and if-match are enforced)",
          "lease expiry is judged by the store's clock, never a host's",
        ];
  return {
    backend: store.backend,
    verdict,
    declared: { ...caps } as Record<string, unknown>,
    checks,
    clockSkewMs: report.clockSkewMs,
    guarantees,
  } as const;
}

// --- utils ---

async function readTtl(ctx: ProtocolContext, key: string): Promise<number | null> {
  const got = await ctx.store.get(key);
  if (!got) return null;
  const parsed = LeaseBodySchema.safeParse(safeDecode(got.body));
  return parsed.success ? parsed.data.ttlMs : null;
}

function safeDecode(bytes: Uint8Array): unknown {
  try {
    return decodeJson(bytes);
  } catch {
    return null;
  }
}
