// Lease round trips through the HTTP server (apps/server) against the direct library:
// acquire + release per round trip, through one replica and through three (acquire on one,
// release on another), on local disk and RGW, with the store requests each lease costs.
// Run: pnpm --filter @holdfast/bench bench:server (source the service env files for RGW).

import { CountingStore, type ObjectStore } from "@holdfast/conditional-store";
import { commitVersion, initDataset, writeDataFile } from "@holdfast/dataset";
import { acquireLease, releaseLease } from "@holdfast/leases";
import { createContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";
import { buildServer, hashToken } from "@holdfast/server";
import { availableTargets } from "./targets.js";

const TOKEN = "hf_bench_reader";
const CONCURRENCY = 8;

interface Row {
  target: string;
  mode: string;
  roundTrips: number;
  perSecond: number;
  requestsPerLease: number;
}

async function seed(store: ObjectStore): Promise<void> {
  const ctx = createContext(store);
  await initDataset(ctx);
  const file = await writeDataFile(ctx, new TextEncoder().encode("bench"));
  await commitVersion(ctx, { branch: "main", files: [file] });
}

/** Runs `count` round trips `CONCURRENCY` at a time; returns elapsed ms. */
async function timed(count: number, once: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await once(next++);
    }),
  );
  return performance.now() - started;
}

async function direct(target: string, store: CountingStore, count: number): Promise<Row> {
  const ctx = createContext(store);
  store.resetCounts();
  const ms = await timed(count, async () => {
    const lease = await acquireLease(ctx, {
      format: holdfastFormat,
      branch: "main",
      version: 1,
      ttlMs: 30_000,
    });
    await releaseLease(ctx, lease);
  });
  return row(target, "library (direct)", count, ms, store);
}

async function throughServers(
  target: string,
  store: CountingStore,
  count: number,
  replicas: number,
): Promise<Row> {
  const apps = [];
  const urls: string[] = [];
  for (let i = 0; i < replicas; i++) {
    const app = await buildServer({
      datasets: [{ name: "ds", store }],
      tokens: [{ name: "bench", role: "reader", sha256: hashToken(TOKEN) }],
      logger: false,
      rateLimit: false,
      dashboardDir: null,
    });
    urls.push(await app.listen({ host: "127.0.0.1", port: 0 }));
    apps.push(app);
  }
  const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
  store.resetCounts();
  try {
    const ms = await timed(count, async (i) => {
      const first = urls[i % replicas]!;
      const second = urls[(i + 1) % replicas]!;
      const got = await fetch(`${first}/v1/datasets/ds/leases`, {
        method: "POST",
        headers,
        body: JSON.stringify({ version: 1, ttlMs: 30_000 }),
      });
      if (got.status !== 201) throw new Error(`acquire: ${got.status} ${await got.text()}`);
      const { handle } = (await got.json()) as { handle: { leaseId: string } };
      const released = await fetch(`${second}/v1/datasets/ds/leases/${handle.leaseId}/release`, {
        method: "POST",
        headers,
        body: JSON.stringify({ handle }),
      });
      if (released.status !== 200) throw new Error(`release: ${released.status}`);
    });
    return row(
      target,
      replicas === 1 ? "HTTP, 1 replica" : `HTTP, ${replicas} replicas`,
      count,
      ms,
      store,
    );
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
}

function row(target: string, mode: string, count: number, ms: number, store: CountingStore): Row {
  return {
    target,
    mode,
    roundTrips: count,
    perSecond: Math.round((count / ms) * 1000),
    requestsPerLease: store.totalRequests() / count,
  };
}

async function main(): Promise<void> {
  const { targets, missing } = await availableTargets();
  const rows: Row[] = [];
  for (const target of targets.filter((t) => t.name === "local" || t.name === "rgw")) {
    const { store: raw, dispose } = await target.open();
    const store = new CountingStore(raw);
    try {
      await seed(store);
      const count = target.name === "local" ? 400 : 200;
      rows.push(await direct(target.name, store, count));
      rows.push(await throughServers(target.name, store, count, 1));
      rows.push(await throughServers(target.name, store, count, 3));
    } finally {
      await dispose();
    }
  }
  console.log(`lease acquire+release round trips, ${CONCURRENCY} clients at a time`);
  console.log(
    ["target", "mode", "round trips", "per second", "store requests per lease"].join("\t"),
  );
  for (const r of rows) {
    console.log(
      [r.target, r.mode, r.roundTrips, r.perSecond, r.requestsPerLease.toFixed(2)].join("\t"),
    );
  }
  if (missing.length > 0) console.log(`not measured: ${missing.join(", ")}`);
}

await main();
