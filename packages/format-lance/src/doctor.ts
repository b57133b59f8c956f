import {
  joinKey,
  type ObjectStore,
  probeStore,
  type StoreProbeReport,
  ulidIds,
} from "@holdfast/conditional-store";
import { requireFormat } from "@holdfast/dataset/internal";
import { PRECISION_FLOOR_MS, type ProtocolContext } from "@holdfast/protocol";
import type { ResolvedFormat } from "@holdfast/refs-lifecycle";
import {
  describeLanceDataset,
  LANCE_AUTO_CLEANUP_GUARANTEE,
  type LanceDatasetReport,
  lanceDoctorCheck,
} from "./describe.js";
import { LANCE_FORMAT, type LanceFormat } from "./format.js";

// What a doctor concludes about a store (the CLI's `holdfast doctor`, the HTTP API's
// `GET .../doctor`): the checks, the guarantees holdfast can give there, and one verdict.

/** The doctor's document, without the location (each app names the store its own way). */
export type StoreDiagnosis = {
  readonly backend: string;
  readonly verdict: "supported" | "degraded" | "unsupported";
  readonly declared: Record<string, unknown>;
  readonly checks: DoctorCheck[];
  readonly clockSkewMs: number;
  readonly guarantees: string[];
  /** Present on a Lance table. */
  readonly format?: "lance";
  readonly lance?: LanceDatasetReport;
};

/**
 * Probes what a store enforces and says what holdfast guarantees there: create-only,
 * if-match (stale refused, current applied: C9) and conditional delete, timestamp precision,
 * batch delete and clock skew; on a Lance table (`resolved`, the format the application's
 * `FormatRegistry` detected or was told) its details and a `lance` check (`warn` when Lance's
 * automatic cleanup is on). Any `fail` makes the verdict `unsupported`, any `warn`
 * `degraded`. Writes and removes a few probe objects under `_holdfast/probe/`; needs no
 * dataset. Without `resolved` it is refused before any request (`invalid-input`,
 * FORMAT_REQUIRED, docs/protocol.md §1.1).
 */
export async function diagnoseStore(
  ctx: ProtocolContext,
  options: { readonly resolved: ResolvedFormat },
): Promise<StoreDiagnosis> {
  requireFormat(options?.resolved?.format, "doctor");
  const { resolved } = options;
  const store = ctx.store;
  const report = await probeStore(store);
  const batch = await probeBatchDelete(store);
  // The shared probe already sent a compare-and-swap with the current ETag (the one
  // conditional-put path, C9); a store that refuses it breaks every renewal.
  const cas =
    report.currentEtagUpdate === "applied"
      ? { ok: true }
      : { ok: false, detail: "an if-match put with the current ETag was refused" };
  const checks = diagnose(store, report, batch, cas);
  const guarantees = guaranteesFor(store, report, cas.ok);
  const lance =
    resolved.name === LANCE_FORMAT
      ? await describeLanceDataset(ctx, resolved.format as LanceFormat)
      : null;
  if (lance) {
    const check = lanceDoctorCheck(lance);
    checks.push(check);
    if (check.status === "warn") guarantees.push(LANCE_AUTO_CLEANUP_GUARANTEE);
  }
  const verdict = checks.some((c) => c.status === "fail")
    ? "unsupported"
    : checks.some((c) => c.status === "warn")
      ? "degraded"
      : "supported";
  return {
    backend: store.backend,
    verdict,
    declared: { ...store.capabilities },
    checks,
    clockSkewMs: report.clockSkewMs,
    guarantees,
    ...(lance ? { format: "lance" as const, lance } : {}),
  };
}

/** The doctor's document for a store its backend refused when opened (`refusedStoreDiagnosis`). */
export type RefusedStoreDiagnosis = {
  readonly backend: string;
  readonly verdict: "unsupported";
  readonly declared: null;
  readonly checks: DoctorCheck[];
  readonly clockSkewMs: null;
  readonly guarantees: string[];
};

/**
 * The doctor's verdict on a store whose backend refused to open it (its create-only probe
 * failed: `unsupported`, docs/protocol.md §2): nothing is guaranteed there, so holdfast
 * runs no protocol on it. `reason` is the refusal's message.
 */
export function refusedStoreDiagnosis(backend: string, reason: string): RefusedStoreDiagnosis {
  return {
    backend,
    verdict: "unsupported",
    declared: null,
    checks: [{ id: "create-only", status: "fail", detail: reason }],
    clockSkewMs: null,
    guarantees: [NO_GUARANTEE],
  };
}

// --- utils ---

/** What holdfast guarantees on a store that does not enforce create-only writes. */
const NO_GUARANTEE =
  "NOTHING: this store does not enforce create-only writes, so two writers can both believe they committed the same version. Do not run holdfast here.";

/** One line of the doctor's findings. */
export interface DoctorCheck {
  id:
    | "create-only"
    | "if-match"
    | "conditional-delete"
    | "timestamps"
    | "batch-delete"
    | "clock-skew"
    | "lance";
  status: "pass" | "warn" | "fail" | "info";
  detail: string;
}

/** What the batch-delete probe saw. */
interface BatchProbe {
  ok: boolean;
  deleted: number;
  detail?: string;
}

/** Writes three small objects and removes them in one batch, checking they are gone. */
async function probeBatchDelete(store: ObjectStore): Promise<BatchProbe> {
  const ids = ulidIds();
  const keys = [0, 1, 2].map(() => joinKey("_holdfast/probe", `batch-${ids.next()}`));
  try {
    for (const key of keys) await store.put(key, new TextEncoder().encode(key));
    const result = await store.deleteMany(keys);
    const left = await Promise.all(keys.map((k) => store.head(k)));
    const remaining = left.filter((m) => m !== null).length;
    if (result.failed.length > 0 || remaining > 0) {
      return {
        ok: false,
        deleted: keys.length - remaining,
        detail: `${remaining} of ${keys.length} objects survived a batch delete${result.failed[0] ? ` (${result.failed[0].error.message})` : ""}`,
      };
    }
    return { ok: true, deleted: keys.length };
  } catch (error) {
    await Promise.all(keys.map((k) => store.delete(k).catch(() => undefined)));
    return {
      ok: false,
      deleted: 0,
      detail: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Turns observations into pass/warn/fail lines; only broken safety primitives fail. */
function diagnose(
  store: ObjectStore,
  report: StoreProbeReport,
  batch: BatchProbe,
  cas: { ok: boolean; detail?: string } = { ok: true },
): DoctorCheck[] {
  const caps = store.capabilities;
  const checks: DoctorCheck[] = [];
  checks.push(
    report.createOnly === "honoured"
      ? {
          id: "create-only",
          status: "pass",
          detail: "a create-only put on an existing key was refused",
        }
      : {
          id: "create-only",
          status: "fail",
          detail:
            "a create-only put OVERWROTE an existing object: commits, leases and retirement cannot be safe here",
        },
  );
  if (report.conditionalUpdate === "honoured") {
    checks.push({
      id: "if-match",
      status: caps.atomicConditionalUpdate ? "pass" : "warn",
      detail: caps.atomicConditionalUpdate
        ? "a put with a stale ETag was refused"
        : "a stale If-Match was refused, but the backend does not declare atomic compare-and-swap, so reference mutations are refused",
    });
  } else {
    checks.push({
      id: "if-match",
      status: caps.atomicConditionalUpdate ? "fail" : "warn",
      detail: caps.atomicConditionalUpdate
        ? "a put with a stale ETag was APPLIED although the backend declares atomic compare-and-swap"
        : "a put with a stale ETag was applied; the backend declares no compare-and-swap, so reference mutations are refused",
    });
  }
  if (!cas.ok && caps.atomicConditionalUpdate) {
    checks.push({
      id: "if-match",
      status: "fail",
      detail: `a put with the CURRENT ETag was refused (${cas.detail ?? "unknown"}): renewals and reference updates would always fail`,
    });
  }
  if (report.conditionalDelete === "honoured") {
    checks.push({
      id: "conditional-delete",
      status: "pass",
      detail: "a delete with a stale ETag was refused",
    });
  } else if (report.conditionalDelete === "ignored") {
    checks.push({
      id: "conditional-delete",
      status: "fail",
      detail:
        "a delete with a stale ETag removed the object although the backend declares conditional delete",
    });
  } else {
    checks.push({
      id: "conditional-delete",
      status: "info",
      detail:
        "not declared by the backend (as on Ceph RGW): holdfast never relies on it there; records are fenced by a conditional rewrite before an unconditional delete",
    });
  }
  const t = report.timestamps;
  const observed = Math.max(t.headPrecisionMs, t.listPrecisionMs ?? 1);
  checks.push({
    id: "timestamps",
    status: observed > t.declaredPrecisionMs ? "warn" : "pass",
    detail:
      `head reports ${t.headPrecisionMs === 1 ? "millisecond" : "whole-second"} Last-Modified` +
      (t.listPrecisionMs === null
        ? ""
        : `, list ${t.listPrecisionMs === 1 ? "millisecond" : "whole-second"}`) +
      `; declared ${t.declaredPrecisionMs} ms; lease expiry adds ${Math.max(t.declaredPrecisionMs, PRECISION_FLOOR_MS)} ms so truncation never shortens a TTL`,
  });
  checks.push(
    batch.ok
      ? {
          id: "batch-delete",
          status: "pass",
          detail: `a batch delete removed ${batch.deleted} objects; cleanup sends up to ${caps.maxBatchDelete} keys per request`,
        }
      : {
          id: "batch-delete",
          status: "warn",
          detail: `batch delete misbehaved: ${batch.detail ?? "unknown"}`,
        },
  );
  const skew = report.clockSkewMs;
  checks.push({
    id: "clock-skew",
    status: "info",
    detail: `the store's clock is about ${formatDuration(Math.abs(skew))} ${skew >= 0 ? "ahead of" : "behind"} this host's (±${formatDuration(observed)}); holdfast compares only storage timestamps, so host clock skew never shortens a lease`,
  });
  for (const warning of report.warnings) {
    if (checks.some((c) => c.detail.includes(warning))) continue;
    // Head and list disagreeing on precision is handled by the protocol (it truncates
    // every stamp to whole seconds), so it is worth knowing but not a limitation.
    const handled = /different timestamp precision/.test(warning);
    checks.push({ id: "timestamps", status: handled ? "info" : "warn", detail: warning });
  }
  return checks;
}

/** Plain statements of what holdfast guarantees on this store, given what the probe saw. */
function guaranteesFor(store: ObjectStore, report: StoreProbeReport, casOk = true): string[] {
  const caps = store.capabilities;
  if (report.createOnly !== "honoured") {
    return [NO_GUARANTEE];
  }
  const lines = [
    "Commits: two writers never both commit the same version number (create-only manifests).",
    `Leases: a version with an unexpired lease is never deleted; expiry is measured in the store's own time (Last-Modified + TTL + ${Math.max(caps.timestampPrecisionMs, PRECISION_FLOOR_MS)} ms), never this host's clock.`,
  ];
  if (caps.atomicConditionalUpdate && report.conditionalUpdate === "honoured" && casOk) {
    lines.push(
      "Tags and branches: create, update and delete are safe against concurrent cleanup and against each other (compare-and-swap is enforced).",
    );
    lines.push(
      "Cleanup: retirement moves draining → sealed → committed by compare-and-swap; a crash at any step is recovered by holdfast recover.",
    );
  } else {
    lines.push(
      "Tags and branches: mutations are REFUSED here (no atomic compare-and-swap); read-only listing works.",
    );
    lines.push(
      "Cleanup: refused here as well, since retirement state transitions need compare-and-swap.",
    );
  }
  if (!caps.atomicConditionalDelete) {
    lines.push(
      "Conditional delete is not relied on: a record is moved to a terminal state by a rewrite that changes its bytes before it is deleted.",
    );
  }
  if (caps.etagIsContentHash) {
    lines.push(
      "ETags are content hashes here, so every fencing rewrite carries a fresh id to change its bytes.",
    );
  }
  return lines;
}

/** `45ms`, `1.25s`, `2m 5s`: how the doctor words a duration. */
function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(ms < 10_000 ? 2 : 1))}s`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join(" ");
}
