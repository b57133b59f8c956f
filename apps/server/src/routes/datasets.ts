import { DatasetsShape, JsonShapes } from "@holdfast/api-shapes";
import { collectStatus } from "@holdfast/cleanup";
import {
  describeLanceDataset,
  diagnoseStore,
  type LanceFormat,
  lanceAutoCleanupWarning,
} from "@holdfast/format-lance";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { type DatasetEntry, formats, openServed } from "../datasets.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

/** The served datasets, each one's status and doctor. */
export function registerDatasetRoutes(app: ZodApp, deps: AppDeps): void {
  app.get(
    "/v1/datasets",
    {
      config: { role: "reader" },
      schema: {
        summary: "The datasets this server serves",
        tags: ["datasets"],
        security: BEARER,
        response: withProblems({ 200: DatasetsShape }),
      },
    },
    async () => listDatasetsRoute(deps),
  );

  app.get(
    "/v1/datasets/:dataset/status",
    {
      config: { role: "reader" },
      schema: {
        summary: "Branches, tags, active leases, retirements and reference intents in flight",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes.status }),
      },
    },
    (request) => statusRoute(datasetOf(deps, request)),
  );

  app.get(
    "/v1/datasets/:dataset/doctor",
    {
      config: { role: "reader" },
      schema: {
        summary: "Probe what the dataset's store enforces (writes and removes a few probe objects)",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: JsonShapes.doctor }),
      },
    },
    (request) => doctorRoute(datasetOf(deps, request)),
  );
}

/** `GET /v1/datasets`: names, locations and backends. */
function listDatasetsRoute(deps: AppDeps) {
  return {
    ok: true as const,
    command: "datasets" as const,
    datasets: [...deps.datasets.values()].map((d) => ({
      name: d.name,
      location: d.store.location,
      backend: d.store.backend,
    })),
  };
}

/** `GET .../status`: the cleanup package's status, a Lance table's details (as `holdfast status`). */
async function statusRoute(ds: DatasetEntry) {
  const { resolved, datasetId, defaultBranch } = await openServed(ds);
  const status = await collectStatus(ds.ctx, { format: resolved.format });
  const lance =
    resolved.name === "lance"
      ? await describeLanceDataset(ds.ctx, resolved.format as LanceFormat)
      : null;
  const warning = lance ? lanceAutoCleanupWarning(lance) : null;
  return {
    ok: true as const,
    command: "status" as const,
    location: ds.store.location,
    datasetId,
    defaultBranch,
    format: resolved.name,
    ...status,
    ...(lance ? { lance } : {}),
    warnings: warning ? [warning] : [],
  };
}

/** `GET .../doctor`: the format package's diagnosis (as `holdfast doctor`); needs no dataset. */
async function doctorRoute(ds: DatasetEntry) {
  return {
    ok: true as const,
    command: "doctor" as const,
    location: ds.store.location,
    ...(await diagnoseStore(ds.ctx, { resolved: await formats.resolve(ds.ctx, ds.formatName) })),
  };
}
