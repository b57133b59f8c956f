import { holdfastError, probeStore } from "@holdfast/conditional-store";
import {
  type DatasetFormat,
  latestVersion,
  type ProtocolContext,
  type VersionRef,
} from "@holdfast/dataset";
import {
  describeLanceDataset,
  LANCE_AUTO_CLEANUP_GUARANTEE,
  type LanceDatasetReport,
  type LanceFormat,
  lanceDoctorCheck,
  type ResolvedFormat,
} from "@holdfast/format-lance";
import { getBranch, listTags } from "@holdfast/refs-lifecycle";

/** One version row of the `versions` document. */
export interface VersionView {
  version: number;
  key: string;
  lastModified: string;
  size: number;
  tags: string[];
}

/**
 * One page of a branch's versions, oldest first, read through the dataset's format (a
 * Lance table's manifests and tags are Lance's): versions numbered above `after`, at most
 * `limit`. `nextAfter` is the last version of the page when more may follow, else null.
 */
export async function versionsPage(
  ctx: ProtocolContext,
  format: DatasetFormat,
  branch: string,
  page: { after?: number | undefined; limit: number },
): Promise<{ versions: VersionView[]; nextAfter: number | null }> {
  const tagsByVersion = new Map<number, string[]>();
  for (const tag of await listTags(ctx, { format })) {
    if (tag.target.branch !== branch) continue;
    tagsByVersion.set(tag.target.version, [
      ...(tagsByVersion.get(tag.target.version) ?? []),
      tag.name,
    ]);
  }
  const versions: VersionView[] = [];
  let more = false;
  for await (const entry of format.listVersions(ctx, branch)) {
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

/**
 * The parent of a commit to a branch other than the default that names none: undefined
 * (the library takes the branch's latest) once the branch has versions; before that, the
 * version the branch was forked from, so a fork's first version keeps its lineage.
 */
export async function firstCommitParent(
  ctx: ProtocolContext,
  branch: string,
): Promise<VersionRef | null | undefined> {
  if ((await latestVersion(ctx, branch)) !== null) return undefined;
  const info = await getBranch(ctx, branch);
  if (!info) {
    throw holdfastError("not-found", "commit", `branch ${branch} does not exist`, {
      code: "BRANCH_NOT_FOUND",
      hint: "create it first with POST .../branches { name, from: { branch, version } }",
    });
  }
  return info.parent;
}

/** A Lance table's details (status, doctor), or `null` for holdfast's format. */
export async function lanceReport(
  ctx: ProtocolContext,
  resolved: ResolvedFormat,
): Promise<LanceDatasetReport | null> {
  if (resolved.name !== "lance") return null;
  return describeLanceDataset(ctx, resolved.format as LanceFormat);
}

type CheckId =
  | "lance"
  | "create-only"
  | "if-match"
  | "conditional-delete"
  | "timestamps"
  | "batch-delete"
  | "clock-skew";

/**
 * The doctor's findings for a dataset's store (the CLI `doctor` document): the shared
 * probe's verdicts on create-only, if-match and conditional delete, timestamp precision
 * and clock skew; on a Lance table (`lance`) its details and a `lance` check, `warn` when
 * Lance's automatic cleanup is on. Writes and removes one probe object.
 */
export async function diagnoseStore(ctx: ProtocolContext, lance: LanceDatasetReport | null = null) {
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
  if (lance) checks.push(lanceDoctorCheck(lance));
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
          ...(lance && checks.at(-1)?.status === "warn" ? [LANCE_AUTO_CLEANUP_GUARANTEE] : []),
        ];
  return {
    backend: store.backend,
    verdict,
    declared: { ...caps } as Record<string, unknown>,
    checks,
    clockSkewMs: report.clockSkewMs,
    guarantees,
    ...(lance ? { format: "lance" as const, lance } : {}),
  } as const;
}
