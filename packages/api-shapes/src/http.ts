import { z } from "zod";
import { CleanupProgressShape, CleanupStatsShape, IsoTime, JsonShapes, LeaseShape } from "./cli.js";
import {
  HolderParam,
  LeaseHandleShape,
  LeaseTtlParam,
  NameParam,
  UlidParam,
  VersionParam,
} from "./params.js";

/**
 * Request and response bodies of the holdfast HTTP API (`apps/server`, routes under `/v1`).
 * Answers reuse the CLI's `--json` shapes, so a script can switch between `holdfast ... --json`
 * and the API without re-learning a document. Requests are strict: an unknown field is a 400,
 * never ignored, and nothing is written for a rejected request.
 */

/** `POST /v1/datasets/{dataset}/leases`. */
export const LeaseAcquireRequest = z.strictObject({
  version: VersionParam,
  /** @default the dataset's default branch */
  branch: NameParam.optional(),
  ttlMs: LeaseTtlParam,
  /** Who holds the lease (a job, a host): shown by listings and the dashboard. */
  holder: HolderParam.optional(),
});

/** `POST .../leases/{leaseId}/renew` and `.../release`. */
export const LeaseHandleRequest = z.strictObject({ handle: LeaseHandleShape });

/** Answer of acquire and renew: the CLI's lease plus the handle for the next call. */
export const LeaseHeldShape = z.looseObject({
  ok: z.literal(true),
  command: z.enum(["lease acquire", "lease renew"]),
  location: z.string(),
  lease: LeaseShape,
  handle: LeaseHandleShape,
});

/** `GET .../versions` query: one page of a branch's versions, oldest first. */
export const VersionsQuery = z.strictObject({
  branch: NameParam.optional(),
  /** Versions numbered above this (the previous page's `nextAfter`). */
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** One page of versions: the CLI's `versions` document plus the cursor of the next page. */
export const VersionsPageShape = JsonShapes.versions.extend({
  nextAfter: z.number().int().nullable(),
});

/** `GET .../leases` query. */
export const LeasesQuery = z.strictObject({
  branch: NameParam.optional(),
  version: z.coerce.number().int().min(1).optional(),
});

/** `POST .../tags`. */
export const TagCreateRequest = z.strictObject({
  name: NameParam,
  version: VersionParam,
  branch: NameParam.optional(),
});

/** `PUT .../tags/{name}`. */
export const TagUpdateRequest = z.strictObject({
  version: VersionParam,
  branch: NameParam.optional(),
});

/** A version of a branch, in request bodies. */
export const VersionRefShape = z.strictObject({ branch: NameParam, version: VersionParam });

/**
 * A data file a commit names: its key under `data/` and its size in bytes (the library's
 * `DataFile`). The file must already be on the store: written by a writer with the
 * library, or reused from a version that names it.
 */
export const DataFileShape = z.strictObject({
  key: z
    .string()
    .max(1024)
    .regex(/^data\/[^/]/, "a data file key under data/"),
  size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

/** `POST .../files` answer: the data file written from the request body, to name in a commit. */
export const FileUploadedShape = z.object({
  ok: z.literal(true),
  command: z.literal("file upload"),
  location: z.string(),
  file: z.object({ key: z.string(), size: z.number().int() }),
});

/**
 * `POST .../versions`: commit the next version of a branch naming files already on the store
 * (the library's `commitVersion` options). Files the server did not just write are covered
 * by a commit intent and checked to exist before the manifest is sent, so a commit never
 * names a file a cleanup is deleting.
 */
export const CommitRequest = z.strictObject({
  /** @default the dataset's default branch */
  branch: NameParam.optional(),
  files: z
    .array(DataFileShape)
    .max(10_000)
    .refine((files) => new Set(files.map((f) => f.key)).size === files.length, {
      message: "a file is named twice",
    }),
  /** Lineage. @default the branch's latest version (a fork's first version: its fork point) */
  parent: VersionRefShape.nullable().optional(),
  /** Versions whose manifests the files were read from (a restore, a revert). */
  sources: z.array(VersionRefShape).max(1000).optional(),
});

/** `POST .../branches`. */
export const BranchCreateRequest = z.strictObject({
  name: NameParam,
  /** Fork point. @default the latest version of the default branch */
  from: z.strictObject({ branch: NameParam.optional(), version: VersionParam }).optional(),
});

/** A cleanup policy as the API and the server's config file take it (the cleanup package's `CleanupPolicy`). */
export const CleanupPolicyShape = z
  .strictObject({
    olderThanMs: z.number().int().min(0).optional(),
    retainVersions: z.number().int().min(1).optional(),
    beforeVersion: VersionParam.optional(),
    branches: z.array(NameParam).min(1).optional(),
    orphanGraceMs: z.number().int().min(0).optional(),
    minVersionAgeMs: z.number().int().min(0).optional(),
    errorIfTaggedOldVersions: z.boolean().optional(),
  })
  .refine(
    (p) =>
      p.olderThanMs !== undefined ||
      p.retainVersions !== undefined ||
      p.beforeVersion !== undefined,
    "a policy needs at least one of olderThanMs, retainVersions, beforeVersion",
  );
export type CleanupPolicyBody = z.infer<typeof CleanupPolicyShape>;

/** `POST .../cleanup/plan` and `POST .../cleanup/jobs`. */
export const CleanupRequest = z.strictObject({ policy: CleanupPolicyShape });

/** Progress of a running cleanup (the cleanup package's `CleanupProgress`). */
export { CleanupProgressShape } from "./cli.js";

/** An RFC 9457 problem document: every 4xx and 5xx answer. `kind` is holdfast's typed error kind. */
export const ProblemShape = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  kind: z.string(),
  hint: z.string().optional(),
  code: z.string().optional(),
  instance: z.string().optional(),
});
export type Problem = z.infer<typeof ProblemShape>;

/** A cleanup (or recovery) run by the server, started through the API or by the schedule. */
export const CleanupJobShape = z.object({
  id: UlidParam,
  dataset: z.string(),
  kind: z.enum(["cleanup", "recover"]),
  trigger: z.enum(["api", "schedule"]),
  state: z.enum(["running", "succeeded", "failed", "skipped"]),
  replica: z.string(),
  policy: z.record(z.string(), z.unknown()).nullable(),
  startedAt: IsoTime,
  finishedAt: IsoTime.nullable(),
  progress: CleanupProgressShape.nullable(),
  stats: CleanupStatsShape.nullable(),
  /** What the run's reference recovery did: counts per outcome (as `recover` reports them). */
  references: z.record(z.string(), z.number()).nullable().optional(),
  /** The intent, canonical and fence keys behind those counts. */
  referenceKeys: z.record(z.string(), z.array(z.string())).nullable().optional(),
  error: ProblemShape.nullable(),
});
export type CleanupJob = z.infer<typeof CleanupJobShape>;

/** `POST .../cleanup` (202) and `GET .../cleanup/jobs/{jobId}`: one job. */
export const CleanupJobAcceptedShape = z.object({
  ok: z.literal(true),
  command: z.literal("cleanup job"),
  job: CleanupJobShape,
});

/** `GET .../cleanup/jobs`: the dataset's recent runs through any replica (kept on the store), newest first. */
export const CleanupJobsShape = z.object({
  ok: z.literal(true),
  command: z.literal("cleanup jobs"),
  jobs: z.array(CleanupJobShape),
});

const RunRangeShape = z.object({
  branch: z.string(),
  from: z.number().int(),
  to: z.number().int(),
});

/**
 * One run's summary from the store's run history (`_holdfast/history/`, the cleanup
 * package's `RunSummary`): cleanups and recoveries started anywhere (the CLI, a server job,
 * a schedule), with `recordedAt` the store's stamp of its write.
 */
export const RunSummaryShape = z.looseObject({
  id: z.string(),
  mode: z.enum(["cleanup", "recover"]),
  /** `cli`, `api`, `schedule`, `library` or a label the runner chose. */
  trigger: z.string(),
  /** The server job this run was, when a server ran it. */
  jobId: z.string().nullable(),
  startedAt: z.string(),
  endedAt: z.string(),
  elapsedMs: z.number(),
  outcome: z.enum(["succeeded", "interrupted", "failed"]),
  error: z
    .object({ kind: z.string(), code: z.string().nullable(), message: z.string() })
    .nullable(),
  retiredVersions: z.number().int(),
  finishedVersions: z.number().int(),
  retiredRanges: z.array(RunRangeShape),
  finishedRanges: z.array(RunRangeShape),
  rangesTruncated: z.boolean(),
  keptVersions: z.number().int(),
  objectsDeleted: z.record(z.string(), z.number()),
  bytesDeleted: z.number(),
  warnings: z.array(z.string()),
  recordedAt: IsoTime,
});

/** `GET .../cleanup/history`: the store's run history, newest first. */
export const RunHistoryShape = z.object({
  ok: z.literal(true),
  command: z.literal("cleanup history"),
  runs: z.array(RunSummaryShape),
  /** Bytes the listed runs deleted, summed. */
  bytesFreed: z.number(),
});

/** `GET .../usage`: what the dataset holds on the store now, from one listing of it. */
export const UsageShape = z.object({
  ok: z.literal(true),
  command: z.literal("usage"),
  location: z.string(),
  objects: z.number().int(),
  bytes: z.number(),
  /** By the key's first path segment (`data`, `_versions`, `_holdfast`, `_deletions`, ...). */
  areas: z.array(z.object({ area: z.string(), objects: z.number().int(), bytes: z.number() })),
  /** The store's stamp of the listing's newest object (storage time), or null when empty. */
  newest: IsoTime.nullable(),
});

/** `GET /v1/datasets`. */
export const DatasetsShape = z.object({
  ok: z.literal(true),
  command: z.literal("datasets"),
  datasets: z.array(z.object({ name: z.string(), location: z.string(), backend: z.string() })),
});

/** `GET /readyz`: every dataset's store answered and its capabilities were probed. */
export const ReadinessShape = z.object({
  ok: z.boolean(),
  datasets: z.array(
    z.object({
      name: z.string(),
      ready: z.boolean(),
      detail: z.string(),
      capabilities: z.record(z.string(), z.unknown()).nullable(),
      clockSkewMs: z.number().nullable(),
    }),
  ),
});
