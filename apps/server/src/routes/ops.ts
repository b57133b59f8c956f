import { ReadinessShape } from "@holdfast/api-shapes";
import { isHoldfastError, probeStore, type StoreProbeReport } from "@holdfast/conditional-store";
import { describeLeases } from "@holdfast/leases";
import { z } from "zod";
import type { AppDeps, ZodApp } from "../app.js";
import { openServed } from "../datasets.js";
import { BEARER } from "./common.js";

/** Health, readiness and Prometheus metrics. */
export function registerOpsRoutes(app: ZodApp, deps: AppDeps): void {
  // Capabilities are probed once per dataset (the probe writes and removes an object).
  const probes = new Map<string, Promise<StoreProbeReport>>();
  // Counting active leases reads every lease body: refreshed at most every 15 s.
  let leasesCountedAt = Number.NEGATIVE_INFINITY;
  const refreshLeaseGauge = async () => {
    if (performance.now() - leasesCountedAt < 15_000) return;
    leasesCountedAt = performance.now();
    for (const ds of deps.datasets.values()) {
      const leases = await describeLeases(ds.ctx).catch(() => null);
      if (leases) {
        deps.metrics.activeLeases.set({ dataset: ds.name }, leases.filter((l) => l.active).length);
      }
    }
  };

  app.get(
    "/healthz",
    {
      schema: {
        summary: "Liveness: the process answers (no store request)",
        tags: ["operations"],
        response: { 200: z.object({ ok: z.literal(true) }) },
      },
    },
    async () => ({ ok: true as const }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        summary: "Readiness: every dataset's store answers and its capabilities were probed",
        tags: ["operations"],
        response: { 200: ReadinessShape, 503: ReadinessShape },
      },
    },
    async (_request, reply) => {
      const answer = await readinessRoute(deps, probes);
      return reply.code(answer.ok ? 200 : 503).send(answer);
    },
  );

  app.get(
    "/metrics",
    {
      config: { role: "reader" },
      schema: {
        summary: "Prometheus metrics (text exposition format)",
        tags: ["operations"],
        security: BEARER,
        produces: ["text/plain"],
      },
    },
    async (_request, reply) => {
      await refreshLeaseGauge();
      const text = await deps.metrics.registry.metrics();
      return reply.type(deps.metrics.registry.contentType).send(text);
    },
  );
}

/**
 * `GET /readyz`: every dataset's store answers and enforces create-only and compare-and-swap
 * (probed once per dataset: the probe writes and removes an object). Public, so it names
 * the checks' outcomes only, never a store's location.
 */
async function readinessRoute(deps: AppDeps, probes: Map<string, Promise<StoreProbeReport>>) {
  const datasets = await Promise.all(
    [...deps.datasets.values()].map(async (ds) => {
      try {
        await openServed(ds);
        let probe = probes.get(ds.name);
        if (!probe) {
          probe = probeStore(ds.store);
          probes.set(ds.name, probe);
          probe.catch(() => probes.delete(ds.name));
        }
        const report = await probe;
        const ok = report.createOnly === "honoured" && report.conditionalUpdate === "honoured";
        // Public: the checks' outcomes only. The probe's warnings and store errors name the
        // store's location (bucket, path), which only authenticated routes show.
        return {
          name: ds.name,
          ready: ok,
          detail: ok
            ? "store reachable, conditional writes enforced"
            : `conditional writes not enforced: create-only ${report.createOnly}, compare-and-swap ${report.conditionalUpdate} (GET .../doctor says more)`,
          capabilities: { ...ds.store.capabilities } as Record<string, unknown>,
          clockSkewMs: report.clockSkewMs,
        };
      } catch (error) {
        return {
          name: ds.name,
          ready: false,
          detail: `store not ready: ${isHoldfastError(error) ? `${error.kind}${error.code === undefined ? "" : ` (${error.code})`}` : "internal error"} (GET .../status says more)`,
          capabilities: null,
          clockSkewMs: null,
        };
      }
    }),
  );
  return { ok: datasets.every((d) => d.ready), datasets };
}
