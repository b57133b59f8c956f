// The cleanup of the million-scale run (million.ts), in its own `node --expose-gc`
// process: cleans the local dataset at argv[2] (`lance:PATH` for a Lance table) down to
// the newest argv[3] versions and
// prints one JSON line per sample (every argv[4] ms: phase, progress, live heap after a
// full GC, RSS) and a last line with the totals (time, objects deleted, requests by type,
// passes over each folder by the store's listings).

import { relative } from "node:path";
import { performance } from "node:perf_hooks";
import { createLocalStore } from "@holdfast/backends-local";
import { type CleanupProgress, cleanup } from "@holdfast/cleanup";
import { openLanceFormat } from "@holdfast/format-lance";
import { createContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";

const [root, retainText, everyText, rateText] = process.argv.slice(2);
// `lance:PATH`: a Lance table, cleaned through the Lance format its `_versions/` shows.
const lanceTable = root?.startsWith("lance:") ? root.slice("lance:".length) : undefined;
const gc = (globalThis as { gc?: () => void }).gc;
if (!root || !gc) {
  throw new Error("usage: node --expose-gc million-child.ts <dir> <retain> <sample ms> [rate]");
}
const MiB = 1024 * 1024;
const started = performance.now();
let last: CleanupProgress = { phase: "recover", done: 0 };
let heapMax = 0;
let rssMax = 0;
const sample = () => {
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  heapMax = Math.max(heapMax, heapUsed);
  rssMax = Math.max(rssMax, rss);
  process.stdout.write(
    `${JSON.stringify({ sample: true, s: (performance.now() - started) / 1000, phase: last.phase, done: last.done, total: last.total ?? null, heapMiB: heapUsed / MiB, rssMiB: rss / MiB })}\n`,
  );
};
const timer = setInterval(sample, Number(everyText ?? 5000));
// Passes over each folder's entries by the local store's listings (one per window of it).
const folderReads: Record<string, number> = {};
const onFolderRead = (dir: string) => {
  const name = relative(lanceTable ?? root, dir) || ".";
  folderReads[name] = (folderReads[name] ?? 0) + 1;
};
const ctx = createContext(createLocalStore({ root: lanceTable ?? root, onFolderRead }));
const format = lanceTable === undefined ? holdfastFormat : await openLanceFormat(ctx);
const stats = await cleanup(
  ctx,
  { retainVersions: Number(retainText ?? 10), minVersionAgeMs: 0 },
  {
    format,
    onProgress: (p) => {
      last = p;
    },
    ...(rateText ? { maxDeletesPerSecond: Number(rateText) } : {}),
    // A resumed run (million.ts --kill-at) waits for the killed run's lock to go stale.
    waitForLock: true,
  },
);
const ms = performance.now() - started;
const usage = process.resourceUsage();
clearInterval(timer);
sample(); // with the returned stats still alive
process.stdout.write(
  `${JSON.stringify({
    done: true,
    ms,
    heapMaxMiB: heapMax / MiB,
    rssMaxMiB: rssMax / MiB,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
    cpu: { userMs: usage.userCPUTime / 1000, systemMs: usage.systemCPUTime / 1000 },
    deleted: stats.objectsDeleted,
    requests: stats.requests,
    retiredRanges: stats.retiredRanges.length,
    folderReads,
  })}\n`,
);
