import { cpSync, mkdtempSync, rmSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Session } from "node:inspector/promises";
import { writeFileSync } from "node:fs";
import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/dataset";
import { censusLanceReferences, openLanceFormat } from "@holdfast/format-lance";
const src = "/tmp/holdfast-bench-cache/lance-200v-10r";
const session = new Session(); session.connect();
for (let run = 0; run < 4; run++) {
  const root = mkdtempSync(join(tmpdir(), "ph-"));
  const name = readdirSync(src).find((n) => n.endsWith(".lance"))!;
  cpSync(join(src, name), join(root, name), { recursive: true, preserveTimestamps: true });
  const store = createLocalStore({ root: join(root, name) });
  const timed: Record<string, [number, number]> = {};
  const wrap = new Proxy(store, { get(t, p) { const v = (t as any)[p]; if (typeof v !== "function") return v; return async (...a: unknown[]) => { const s = performance.now(); try { return await v.apply(t, a); } finally { const e = (timed[String(p)] ??= [0, 0]); e[0]++; e[1] += performance.now() - s; } }; } });
  const ctx = createContext(wrap as any);
  if (run === 3) { await session.post("Profiler.enable"); await session.post("Profiler.start"); }
  const t0 = performance.now();
  const format = await openLanceFormat(ctx);
  await cleanup(ctx, { retainVersions: 1, minVersionAgeMs: 0 }, { format, referenceCensus: censusLanceReferences(ctx) });
  const ms = performance.now() - t0;
  if (run === 3) { const { profile } = await session.post("Profiler.stop"); writeFileSync("/tmp/prof/clean.cpuprofile", JSON.stringify(profile)); }
  console.log(ms.toFixed(0), JSON.stringify(Object.fromEntries(Object.entries(timed).map(([k, [n, t]]) => [k, `${n}x ${t.toFixed(0)}ms`]))));
  rmSync(root, { recursive: true, force: true });
}
