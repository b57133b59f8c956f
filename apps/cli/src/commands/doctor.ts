import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  isHoldfastError,
  joinKey,
  type ObjectStore,
  probeStore,
  type StoreProbeReport,
  ulidIds,
} from "@holdfast/conditional-store";
import { createContext, PRECISION_FLOOR_MS } from "@holdfast/dataset";
import {
  detectDatasetFormat,
  LANCE_AUTO_CLEANUP_GUARANTEE,
  lanceDoctorCheck,
} from "@holdfast/format-lance";
import { Command } from "commander";
import { formatDuration } from "../duration.js";
import { ExitCode } from "../exit-codes.js";
import {
  type FormatName,
  type LanceDetails,
  parseFormatOption,
  printLanceDetails,
  resolveFormat,
  withFormatOption,
} from "../format.js";
import type { Output } from "../output.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { openTarget, parseTarget, type Target } from "../target.js";

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

/** `doctor`: probe what the store really enforces and say what holdfast can guarantee there. */
export function registerDoctor(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("doctor")
            .description(
              "probe a store: create-only, if-match and conditional delete enforcement, timestamp precision, batch delete, clock skew; on a Lance table also its details and whether Lance's own automatic cleanup is on",
            )
            .argument(
              "<url>",
              "storage URL (needs no dataset; writes and removes a few probe objects under _holdfast/)",
            ),
        ),
      ),
      "doctor",
      [
        "holdfast doctor ./my-dataset",
        "holdfast doctor s3://holdfast-test/ds --endpoint http://127.0.0.1:7480 --path-style",
        "holdfast doctor az://my-container/ds --json",
      ],
      async ([url], opts, cx) => {
        const target = parseTarget(url!, opts, cx.io);
        const forced = parseFormatOption(opts.format);
        cx.out.note(`Probing ${target.display} ...`);
        // A local directory the doctor had to create is removed again afterwards.
        const createdDir =
          target.url.scheme === "file" && !(await stat(target.url.root).catch(() => null))
            ? target.url.root
            : undefined;
        try {
          return await runDoctor(cx, target, forced);
        } finally {
          if (createdDir) await removeProbeDir(createdDir);
        }
      },
    ),
  );
}

async function runDoctor(
  cx: CommandContext,
  target: Target,
  forced: FormatName | undefined,
): Promise<number> {
  let store: ObjectStore;
  try {
    // The backend's own open-time probe configures what it can (If-Match quoting,
    // conditional delete); a store it refuses outright is reported, not thrown.
    store = await openTarget(target, cx.io, { create: true });
  } catch (error) {
    if (!isHoldfastError(error, "unsupported")) throw error;
    const checks: DoctorCheck[] = [{ id: "create-only", status: "fail", detail: error.message }];
    const guarantees = [
      "NOTHING: the store failed the conditional-write probe, so holdfast refuses to run its protocol here.",
    ];
    cx.out.result(cx.command, {
      location: target.display,
      backend: target.url.scheme,
      verdict: "unsupported",
      declared: null,
      checks,
      clockSkewMs: null,
      guarantees,
    });
    cx.out.line(`${cx.out.paint("red", "FAIL")}  ${error.message}`);
    for (const line of guarantees) cx.out.line(`  - ${line}`);
    return ExitCode.unsupported;
  }
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
  const lance = await lanceCheck(store, forced);
  if (lance) {
    checks.push(lance.check);
    if (lance.check.status === "warn") {
      guarantees.push(LANCE_AUTO_CLEANUP_GUARANTEE);
    }
  }
  const verdict = checks.some((c) => c.status === "fail")
    ? "unsupported"
    : checks.some((c) => c.status === "warn")
      ? "degraded"
      : "supported";
  cx.out.result(cx.command, {
    location: target.display,
    backend: store.backend,
    verdict,
    declared: store.capabilities,
    checks,
    clockSkewMs: report.clockSkewMs,
    guarantees,
    ...(lance ? { format: "lance", lance: lance.details } : {}),
  });
  printHuman(cx.out, target.display, store, checks, guarantees, verdict);
  if (lance) {
    cx.out.line();
    printLanceDetails(cx.out, lance.details);
  }
  return verdict === "unsupported" ? ExitCode.unsupported : ExitCode.ok;
}

/**
 * On a Lance table (detected, or `--format lance`), its details and a `lance` check: `warn`
 * when its config turns on Lance's automatic cleanup, `info` otherwise. `null` elsewhere
 * (the doctor needs no dataset).
 */
async function lanceCheck(
  store: ObjectStore,
  forced: FormatName | undefined,
): Promise<{ check: DoctorCheck; details: LanceDetails } | null> {
  const ctx = createContext(store);
  const name = forced ?? (await detectDatasetFormat(ctx));
  if (name !== "lance") return null;
  const details = (await resolveFormat(ctx, name, { describe: true })).lance;
  return details ? { details, check: lanceDoctorCheck(details) } : null;
}

/** Removes a directory only if it holds nothing but the doctor's own (now empty) probe folders. */
async function removeProbeDir(dir: string): Promise<void> {
  const top = await readdir(dir).catch(() => null);
  if (!top?.every((name) => name === "_holdfast")) return;
  const control = await readdir(join(dir, "_holdfast")).catch(() => []);
  // `.local` is the local backend's private folder (its temp and lock files).
  if (!control.every((name) => name === "probe" || name === ".local")) return;
  const probes = await readdir(join(dir, "_holdfast", "probe")).catch(() => []);
  if (probes.length > 0) return;
  await rm(dir, { recursive: true, force: true });
}

// --- utils ---

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
export function diagnose(
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
export function guaranteesFor(
  store: ObjectStore,
  report: StoreProbeReport,
  casOk = true,
): string[] {
  const caps = store.capabilities;
  if (report.createOnly !== "honoured") {
    return [
      "NOTHING: this store does not enforce create-only writes, so two writers can both believe they committed the same version. Do not run holdfast here.",
    ];
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

function printHuman(
  out: Output,
  location: string,
  store: ObjectStore,
  checks: readonly DoctorCheck[],
  guarantees: readonly string[],
  verdict: string,
): void {
  const mark = (status: DoctorCheck["status"]) =>
    status === "pass"
      ? out.paint("green", "ok  ")
      : status === "warn"
        ? out.paint("yellow", "warn")
        : status === "fail"
          ? out.paint("red", "FAIL")
          : out.paint("cyan", "info");
  out.line(
    `${out.paint("bold", "holdfast doctor")} ${location} (backend ${store.backend}, client ${store.capabilities.requestMode})`,
  );
  for (const check of checks)
    out.line(`  ${mark(check.status)}  ${check.id.padEnd(18)} ${check.detail}`);
  out.line();
  out.line(out.paint("bold", "What holdfast guarantees here:"));
  for (const line of guarantees) out.line(`  - ${line}`);
  out.line();
  out.line(
    verdict === "supported"
      ? out.paint("green", "Verdict: supported.")
      : verdict === "degraded"
        ? out.paint("yellow", "Verdict: usable with the limits above.")
        : out.paint(
            "red",
            "Verdict: NOT supported: holdfast refuses to run its protocol on this store.",
          ),
  );
}
