import { z } from "zod";
import { LeaseHandleShape } from "./params.js";

/**
 * The documented `--json` shapes, one per command. Every answer is one JSON document on
 * stdout (`lease acquire --hold` prints one per line). Fields may be added in a minor
 * release; none is removed or changes meaning without a major one. Tests parse every
 * command's output with these schemas.
 */

export const RefShape = z.object({ branch: z.string(), version: z.number().int() });
export const IsoTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "an ISO-8601 time");

/** Every failed command: the typed kind first, then the message and hint a person reads. */
export const ErrorShape = z.object({
  ok: z.literal(false),
  command: z.string(),
  exitCode: z.number().int(),
  error: z.object({
    kind: z.string(),
    message: z.string(),
    hint: z.string().optional(),
    operation: z.string().optional(),
    key: z.string().optional(),
    code: z.string().optional(),
    status: z.number().optional(),
  }),
});

const ok = <T extends z.ZodRawShape>(command: string, shape: T) =>
  z.looseObject({ ok: z.literal(true), command: z.literal(command), ...shape });

export const LeaseShape = z.object({
  leaseId: z.string(),
  branch: z.string(),
  version: z.number().int(),
  key: z.string(),
  /** The holder label the reader gave (`--holder`, the API's `holder`); null when none. */
  holder: z.string().nullable().optional(),
  ttlMs: z.number().int().nullable(),
  lastModified: z.string(),
  expiresAt: IsoTime.nullable(),
  active: z.boolean(),
  /** Storage time left as of the listing's probe of the store's clock; null when unknown. */
  timeLeftMs: z.number().int().nullable().optional(),
});

/**
 * Progress of a cleanup: `done` of `total` (when known) items of a phase (the cleanup
 * package's `CleanupProgress`; `delete` and `orphans` count objects), with the estimate of
 * `progressEstimate`: `left`, `ratePerSec` (since the phase's first event), `etaMs`,
 * `elapsedMs` (null while unknown). The server's job document carries it as `progress`.
 */
export const CleanupProgressShape = z.object({
  phase: z.enum(["recover", "plan", "retire", "delete", "orphans"]),
  done: z.number().int(),
  total: z.number().int().optional(),
  left: z.number().int().nullable().optional(),
  ratePerSec: z.number().nullable().optional(),
  etaMs: z.number().int().nullable().optional(),
  elapsedMs: z.number().int().optional(),
});

/**
 * `holdfast cleanup|recover --json`: one progress event per line on **stderr** (stdout
 * stays the one answer document): the first event of each phase, then at most one a
 * second, and the last event of each phase.
 */
export const CleanupProgressEventShape = CleanupProgressShape.extend({
  event: z.literal("progress"),
  command: z.enum(["cleanup", "recover"]),
});

const ObjectsAndBytes = z.object({ objects: z.number().int(), bytes: z.number().int() });

export const CleanupStatsShape = z.looseObject({
  dryRun: z.boolean(),
  retired: z.array(RefShape),
  /**
   * Every kept version: `reason` decided it; `reasons` is every reason it is kept, `reason`
   * first (a version within --retain may also be leased, tagged or forked from).
   */
  retained: z.array(
    z.object({
      branch: z.string(),
      version: z.number().int(),
      reason: z.string(),
      reasons: z.array(z.string()).min(1),
    }),
  ),
  recovered: z.object({ committed: z.number(), cancelled: z.number(), retained: z.number() }),
  objectsDeleted: z.looseObject({
    manifests: z.number(),
    dataFiles: z.number(),
    orphans: z.number(),
    total: z.number(),
  }),
  /** Bytes of the dataset's files deleted (a plan: to be): the sum of `deletedByKind`'s bytes. */
  bytesDeleted: z.number(),
  /**
   * The dataset's files deleted (a plan: to be) per kind, as the format names a key (Lance:
   * `_versions/` manifests, `data/` data, `_deletions/` deletion, `_indices/` index,
   * `_transactions/` transaction; else other): objects and bytes. holdfast's own objects
   * (clock probes, expired leases and intents) are in `objectsDeleted` only.
   */
  deletedByKind: z.object({
    manifests: ObjectsAndBytes,
    data: ObjectsAndBytes,
    deletion: ObjectsAndBytes,
    index: ObjectsAndBytes,
    transaction: ObjectsAndBytes,
    other: ObjectsAndBytes,
  }),
  requests: z.looseObject({
    total: z.number(),
    get: z.number(),
    head: z.number(),
    put: z.number(),
    delete: z.number(),
    deleteMany: z.number(),
    list: z.number(),
  }),
  elapsedMs: z.number(),
  warnings: z.array(z.string()),
});

/** Success shapes by command name. */
export const JsonShapes = {
  init: ok("init", {
    location: z.string(),
    backend: z.string(),
    datasetId: z.string(),
    defaultBranch: z.string(),
  }),
  commit: ok("commit", {
    location: z.string(),
    branch: z.string(),
    version: z.number().int(),
    key: z.string(),
    txnId: z.string(),
    /** `path`: the local file the CLI read (absent in the HTTP API's answer). */
    files: z.array(z.object({ path: z.string().optional(), key: z.string(), size: z.number() })),
  }),
  versions: ok("versions", {
    location: z.string(),
    branch: z.string(),
    versions: z.array(
      z.object({
        version: z.number().int(),
        key: z.string(),
        lastModified: IsoTime,
        size: z.number(),
        tags: z.array(z.string()),
      }),
    ),
  }),
  "lease acquire": ok("lease acquire", {
    location: z.string(),
    lease: LeaseShape,
    /** The lease's handle, its secret included: `lease release --handle` takes it back. */
    handle: LeaseHandleShape,
    /**
     * What the lease does not protect against: on a Lance table whose config turns on Lance's
     * automatic cleanup (`lance.auto_cleanup.*`), the warning (also on stderr); else empty.
     */
    warnings: z.array(z.string()),
  }),
  "lease acquire --hold": z.discriminatedUnion("event", [
    ok("lease acquire", {
      event: z.literal("acquired"),
      lease: LeaseShape,
      /** As `lease acquire`'s `warnings`. */
      warnings: z.array(z.string()),
    }),
    /** After each renewal: `renewal` is the lease's writes so far minus one. */
    ok("lease acquire", { event: z.literal("renewed"), renewal: z.number().int() }),
    ok("lease acquire", { event: z.literal("read"), reads: z.number(), bytes: z.number() }),
    ok("lease acquire", { event: z.literal("released"), leaseId: z.string(), reads: z.number() }),
  ]),
  "lease renew": ok("lease renew", {
    location: z.string(),
    lease: LeaseShape,
    /** The renewed handle (its ETag and renewal count changed): the next renew takes it. */
    handle: LeaseHandleShape,
  }),
  "lease list": ok("lease list", { location: z.string(), leases: z.array(LeaseShape) }),
  "lease release": ok("lease release", {
    location: z.string(),
    released: z.object({ leaseId: z.string(), branch: z.string(), version: z.number().int() }),
  }),
  "tag create": ok("tag create", {
    location: z.string(),
    tag: z.object({ name: z.string(), target: RefShape }),
  }),
  "tag update": ok("tag update", {
    location: z.string(),
    tag: z.object({ name: z.string(), target: RefShape }),
  }),
  "tag delete": ok("tag delete", {
    location: z.string(),
    deleted: z.object({ name: z.string(), resumed: z.boolean() }),
  }),
  "tag list": ok("tag list", {
    location: z.string(),
    tags: z.array(z.object({ name: z.string(), target: RefShape })),
  }),
  "branch create": ok("branch create", {
    location: z.string(),
    branch: z.object({
      name: z.string(),
      parent: RefShape.nullable(),
      metadata: z.record(z.string(), z.string()),
    }),
  }),
  "branch delete": ok("branch delete", {
    location: z.string(),
    deleted: z.object({ name: z.string(), resumed: z.boolean() }),
  }),
  "branch list": ok("branch list", {
    location: z.string(),
    branches: z.array(
      z.looseObject({
        name: z.string(),
        parent: RefShape.nullable(),
        default: z.boolean(),
        latestVersion: z.number().int().nullable(),
      }),
    ),
  }),
  cleanup: ok("cleanup", {
    location: z.string(),
    policy: z.record(z.string(), z.unknown()),
    stats: CleanupStatsShape,
  }),
  recover: z.union([
    ok("recover", {
      location: z.string(),
      /** How many references each outcome of the reference recovery touched. */
      references: z.record(z.string(), z.number()),
      /** The objects behind those counts (intent, canonical and fence keys), by outcome. */
      referenceKeys: z.record(z.string(), z.array(z.string())).optional(),
      retirements: z.object({ committed: z.number(), cancelled: z.number(), retained: z.number() }),
      retired: z.array(RefShape),
      /** Versions of earlier runs' committed retirements this recovery finished. */
      finished: z.array(RefShape).optional(),
      objectsDeleted: z.looseObject({ total: z.number() }),
      bytesDeleted: z.number(),
      warnings: z.array(z.string()),
      /** The cleanup lock this recovery waited for (storage times), or null when it was free. */
      waitedForLock: z
        .object({
          owner: z.string(),
          lastHeartbeat: IsoTime,
          clearsAt: IsoTime,
          stoppedRenewing: z.boolean(),
        })
        .nullable()
        .optional(),
    }),
    // recover --abandon <id>
    ok("recover", {
      location: z.string(),
      abandoned: z.object({
        key: z.string(),
        branch: z.string(),
        previousState: z.enum(["draining", "sealed", "cancelled"]),
        versions: z.array(z.number().int()),
      }),
    }),
  ]),
  status: ok("status", {
    location: z.string(),
    /** `null` for a Lance table, which has no holdfast identity. */
    datasetId: z.string().nullable(),
    defaultBranch: z.string(),
    branches: z.array(z.object({ name: z.string(), latestVersion: z.number().int().nullable() })),
    tags: z.array(z.object({ name: z.string(), target: RefShape })),
    leases: z.array(LeaseShape),
    retirements: z.array(
      z.looseObject({
        key: z.string(),
        branch: z.string(),
        opId: z.string(),
        state: z.string(),
        versions: z.array(z.number()),
        abandoned: z.boolean(),
      }),
    ),
    intents: z.array(
      z.looseObject({
        key: z.string(),
        kind: z.string(),
        name: z.string(),
        op: z.string(),
        state: z.string(),
        expired: z.boolean(),
      }),
    ),
    cleanupLock: z
      .object({
        owner: z.string(),
        since: z.string().nullable(),
        lastModified: z.string(),
        stale: z.boolean(),
      })
      .nullable()
      .optional(),
  }),
  doctor: ok("doctor", {
    location: z.string(),
    backend: z.string(),
    verdict: z.enum(["supported", "degraded", "unsupported"]),
    declared: z.record(z.string(), z.unknown()).nullable(),
    checks: z.array(
      z.object({
        id: z.enum([
          "create-only",
          "if-match",
          "conditional-delete",
          "timestamps",
          "batch-delete",
          "clock-skew",
          "lance",
        ]),
        status: z.enum(["pass", "warn", "fail", "info"]),
        detail: z.string(),
      }),
    ),
    clockSkewMs: z.number().nullable(),
    guarantees: z.array(z.string()),
  }),
  demo: ok("demo", {
    dir: z.string(),
    versions: z.number().int(),
    tags: z.array(z.object({ name: z.string(), version: z.number().int() })),
    branch: z.looseObject({ name: z.string(), forkedFrom: RefShape }),
    reader: z.looseObject({
      pid: z.number().optional(),
      version: z.number().int(),
      leaseId: z.string(),
      reads: z.number(),
      exitCode: z.number(),
    }),
    plan: z.object({ retired: z.number(), retained: z.number() }),
    stats: CleanupStatsShape,
    verification: z.looseObject({
      ok: z.boolean(),
      readerOk: z.boolean(),
      failures: z.array(z.string()),
    }),
    elapsedMs: z.number(),
  }),
} as const;
