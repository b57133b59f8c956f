import type {
  CleanupJobAcceptedShape,
  CleanupJobShape,
  CleanupJobsShape,
  CleanupRequest,
  DatasetsShape,
  JsonShapes,
  ProblemShape,
  ReadinessShape,
  RunHistoryShape,
  UsageShape,
  VersionsPageShape,
} from "@holdfast/api-shapes";
import type { z } from "zod";

// The dashboard's wire types: the HTTP API's documents, inferred from the schemas the
// server validates its answers with (`@holdfast/api-shapes`), never declared by hand.

export type BranchList = z.infer<(typeof JsonShapes)["branch list"]>;
export type Status = z.infer<typeof JsonShapes.status>;
export type LeaseList = z.infer<(typeof JsonShapes)["lease list"]>;
export type VersionsPage = z.infer<typeof VersionsPageShape>;
export type Job = z.infer<typeof CleanupJobShape>;
export type Jobs = z.infer<typeof CleanupJobsShape>;
export type JobAccepted = z.infer<typeof CleanupJobAcceptedShape>;
export type Plan = z.infer<typeof JsonShapes.cleanup>;
export type Doctor = z.infer<typeof JsonShapes.doctor>;
export type Datasets = z.infer<typeof DatasetsShape>;
export type Readiness = z.infer<typeof ReadinessShape>;
export type Stats = Plan["stats"];
export type RunHistory = z.infer<typeof RunHistoryShape>;
export type Usage = z.infer<typeof UsageShape>;
/** The body of `POST .../cleanup/plan` and `.../cleanup/jobs`. */
export type CleanupBody = z.infer<typeof CleanupRequest>;
/** Every error answer (RFC 9457 problem document). */
export type Problem = z.infer<typeof ProblemShape>;
