// One point of the scaling table, in its own process (run with --expose-gc) so its peak
// RSS is the cleanup's alone: cleans the local dataset at argv[2] down to the newest
// argv[3] versions and prints one JSON line { ms, heapMiB, rssMiB, deleted }.

import { performance } from "node:perf_hooks";
import { createLocalStore } from "@holdfast/backends-local";
import { cleanup } from "@holdfast/cleanup";
import { createContext } from "@holdfast/protocol";
import { holdfastFormat } from "@holdfast/refs-lifecycle";

const [root, retainText] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!root || !gc) throw new Error("usage: node --expose-gc scale-child.ts <dataset dir> <retain>");

// Live heap after a full GC, sampled at every progress report (phase boundaries and
// batches), at most every 100 ms; the largest sample is the run's live heap.
let heapMax = 0;
let lastSample = 0;
const sample = () => {
  gc();
  heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
  lastSample = performance.now();
};
sample();
const started = performance.now();
const stats = await cleanup(
  createContext(createLocalStore({ root })),
  { retainVersions: Number(retainText ?? 10), minVersionAgeMs: 0 },
  {
    format: holdfastFormat,
    onProgress: () => {
      if (performance.now() - lastSample > 100) sample();
    },
  },
);
const ms = performance.now() - started;
sample(); // with the returned stats still alive
const MiB = 1024 * 1024;
process.stdout.write(
  `${JSON.stringify({
    ms,
    heapMiB: heapMax / MiB,
    rssMiB: (process.resourceUsage().maxRSS * 1024) / MiB,
    deleted: stats.objectsDeleted.total,
  })}\n`,
);
