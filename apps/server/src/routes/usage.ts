import { RunHistoryShape, UsageShape } from "@holdfast/api-shapes";
import { listRunHistory } from "@holdfast/cleanup";
import { listAll } from "@holdfast/conditional-store";
import { type AppDeps, datasetOf, type ZodApp } from "../app.js";
import { type DatasetEntry, openServed } from "../datasets.js";
import { BEARER, DatasetParams, withProblems } from "./common.js";

/** What an operator asks of a dataset's store: the runs that changed it, and what it holds. */
export function registerUsageRoutes(app: ZodApp, deps: AppDeps): void {
  app.get(
    "/v1/datasets/:dataset/cleanup/history",
    {
      config: { role: "reader" },
      schema: {
        summary:
          "Every cleanup and recovery run that left a summary on the store (the CLI's, jobs', schedules'), newest first",
        tags: ["cleanup"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: RunHistoryShape }),
      },
    },
    (request) => historyRoute(datasetOf(deps, request)),
  );

  app.get(
    "/v1/datasets/:dataset/usage",
    {
      config: { role: "reader" },
      schema: {
        summary: "Objects and bytes the dataset holds now, by area (one listing of its store)",
        tags: ["datasets"],
        security: BEARER,
        params: DatasetParams,
        response: withProblems({ 200: UsageShape }),
      },
    },
    (request) => usageRoute(datasetOf(deps, request)),
  );
}

/** `GET .../cleanup/history`: read through the cleanup package, which writes it. */
async function historyRoute(ds: DatasetEntry) {
  await openServed(ds);
  const runs = await listRunHistory(ds.store);
  return {
    ok: true as const,
    command: "cleanup history" as const,
    runs,
    bytesFreed: runs.reduce((sum, r) => sum + r.bytesDeleted, 0),
  };
}

/** `GET .../usage`: one listing of the whole dataset, sizes summed by first path segment. */
async function usageRoute(ds: DatasetEntry) {
  await openServed(ds);
  const areas = new Map<string, { objects: number; bytes: number }>();
  let newest: Date | null = null;
  for await (const meta of listAll(ds.store, "")) {
    const slash = meta.key.indexOf("/");
    const area = slash === -1 ? "(top level)" : meta.key.slice(0, slash);
    const sum = areas.get(area) ?? { objects: 0, bytes: 0 };
    sum.objects += 1;
    sum.bytes += meta.size;
    areas.set(area, sum);
    if (newest === null || meta.lastModified > newest) newest = meta.lastModified;
  }
  const list = [...areas].map(([area, sum]) => ({ area, ...sum }));
  list.sort((a, b) => b.bytes - a.bytes || (a.area < b.area ? -1 : 1));
  return {
    ok: true as const,
    command: "usage" as const,
    location: ds.store.location,
    objects: list.reduce((n, a) => n + a.objects, 0),
    bytes: list.reduce((n, a) => n + a.bytes, 0),
    areas: list,
    newest: newest === null ? null : newest.toISOString(),
  };
}
