import { holdfastError } from "@holdfast/conditional-store";
import type { ProtocolContext } from "@holdfast/protocol";
import type { LanceFormat } from "./format.js";
import { readManifestFile } from "./manifest-file.js";
import type { LanceManifest } from "./proto.js";
import { LANCE_MAIN_BRANCH, listLanceReferences } from "./refs.js";

/** Lance's automatic cleanup settings (manifest `config`), when a writer turned it on. */
export interface LanceAutoCleanup {
  /** `lance.auto_cleanup.interval`: run Lance's cleanup every N commits. */
  readonly interval?: string | undefined;
  /** `lance.auto_cleanup.older_than`: what Lance then deletes. */
  readonly olderThan?: string | undefined;
  /** `lance.auto_cleanup.retain_versions`. */
  readonly retainVersions?: string | undefined;
}

/** What `doctor` and `status` report about a Lance table. */
export interface LanceDatasetReport {
  readonly naming: LanceFormat["naming"];
  readonly versions: number;
  readonly latest: number | null;
  /** File format of the latest manifest (footer `major.minor`). */
  readonly formatVersion: string | null;
  readonly readerFeatureFlags: string | null;
  /** Lance's own cleaner, which ignores holdfast's leases; `null` when off. */
  readonly autoCleanup: LanceAutoCleanup | null;
  readonly tags: number;
  readonly branches: number;
}

const AUTO_CLEANUP = {
  interval: "lance.auto_cleanup.interval",
  olderThan: "lance.auto_cleanup.older_than",
  retainVersions: "lance.auto_cleanup.retain_versions",
} as const;

/**
 * Lance's automatic cleanup settings of a manifest, or `null` when none is set. A writer
 * with these runs Lance's cleanup after its commits: a second cleaner that ignores
 * holdfast's leases, which `doctor`/`status` must warn about.
 */
export function autoCleanupOf(manifest: LanceManifest): LanceAutoCleanup | null {
  const found: Record<string, string> = {};
  for (const [field, key] of Object.entries(AUTO_CLEANUP)) {
    const value = manifest.config[key];
    if (value !== undefined) found[field] = value;
  }
  return Object.keys(found).length > 0 ? (found as LanceAutoCleanup) : null;
}

/**
 * Reads what an operator should know about a Lance table: naming, versions, the latest
 * manifest's format and flags, whether Lance's automatic cleanup is on, and how many
 * Lance tags and branches it has (failing closed like the census does).
 */
export async function describeLanceDataset(
  ctx: ProtocolContext,
  format: LanceFormat,
): Promise<LanceDatasetReport> {
  let versions = 0;
  let latest: number | null = null;
  for await (const entry of format.listVersions(ctx, LANCE_MAIN_BRANCH)) {
    versions += 1;
    latest = entry.version;
  }
  let manifest: LanceManifest | null = null;
  let formatVersion: string | null = null;
  if (latest !== null) {
    const key = format.manifestKey(LANCE_MAIN_BRANCH, latest);
    const got = await ctx.store.get(key);
    if (!got) {
      throw holdfastError("not-found", "describe", `Lance manifest ${key} vanished while read`, {
        key,
        hint: "a cleanup may be running; retry",
      });
    }
    const file = readManifestFile(got.body, key);
    manifest = file.manifest;
    formatVersion = `${file.formatMajor}.${file.formatMinor}`;
  }
  const refs = await listLanceReferences(ctx);
  const sources = (reason: string) =>
    new Set(refs.filter((r) => r.reason === reason).map((r) => r.source)).size;
  return {
    naming: format.naming,
    versions,
    latest,
    formatVersion,
    readerFeatureFlags: manifest?.reader_feature_flags ?? null,
    autoCleanup: manifest ? autoCleanupOf(manifest) : null,
    tags: sources("tag"),
    branches: sources("branch-lineage"),
  };
}

/**
 * The warning for a Lance table whose config turns on Lance's automatic cleanup (a second
 * cleaner that ignores holdfast's leases), or `null`. It names the `lance.auto_cleanup.*`
 * keys set and how to turn them off, in the words of the Python package's
 * `LanceAutoCleanupWarning` (docs/lance.md); `status`, `doctor`, `cleanup` and
 * `lease acquire` all print this one.
 */
export function lanceAutoCleanupWarning(report: LanceDatasetReport): string | null {
  const auto = report.autoCleanup;
  if (!auto) return null;
  const set = (Object.keys(AUTO_CLEANUP) as (keyof LanceAutoCleanup)[]).filter(
    (field) => auto[field] !== undefined,
  );
  const settings = set.map((field) => `${AUTO_CLEANUP[field]}=${String(auto[field])}`).join(", ");
  const keys = set.map((field) => AUTO_CLEANUP[field]).join(", ");
  return (
    `this Lance table has Lance's automatic cleanup on (${settings}): every Lance writer ` +
    "deletes old versions inside its commits and ignores holdfast's leases, so a leased " +
    "version can lose its files. Turn it off with ds.optimize.disable_auto_cleanup() " +
    `(pylance), i.e. delete the config keys ${keys}, and run holdfast's cleanup instead`
  );
}

/** The `lance` finding of a doctor (CLI `doctor`, the server's doctor route). */
export interface LanceDoctorCheck {
  readonly id: "lance";
  readonly status: "warn" | "info";
  readonly detail: string;
}

/**
 * A doctor's `lance` finding about a Lance table: `warn` when its config turns on Lance's
 * automatic cleanup, `info` otherwise.
 */
export function lanceDoctorCheck(report: LanceDatasetReport): LanceDoctorCheck {
  const warning = lanceAutoCleanupWarning(report);
  if (warning) return { id: "lance", status: "warn", detail: warning };
  return {
    id: "lance",
    status: "info",
    detail: `a Lance table (${report.naming.toUpperCase()} manifest naming, ${report.versions} version(s), ${report.tags} tag(s), ${report.branches} branch(es)); Lance's automatic cleanup is off`,
  };
}

/** The guarantee a doctor withdraws when Lance's automatic cleanup is on. */
export const LANCE_AUTO_CLEANUP_GUARANTEE =
  "NOT against Lance's own automatic cleanup: this table's writers run it after their commits, and it deletes files under holdfast's leases; turn it off";
