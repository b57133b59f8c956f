import { readdirSync, readFileSync } from "node:fs";

/**
 * Whether the machine stayed quiet while a block ran: the CPU time spent by everything that
 * is neither this bench process, its (waited-for) children, nor the test store's server
 * processes that serve its requests. The 1-minute load average cannot say it once a block
 * runs: a cleaner's own threads (Lance's Rust pool, the copies' I/O) lift it above 1 on a
 * 2-core machine, while the thing that falsifies a comparison is other work competing for
 * the cores (tooling/bench/README.md, "Cleaners side by side").
 */
export interface CpuSnapshot {
  readonly busyTicks: number;
  readonly ownTicks: number;
  readonly atMs: number;
}

/** Server processes of the test stores: their CPU is the block's own requests. */
const STORE_PROCESSES = new Set(["radosgw", "ceph-osd", "ceph-mon", "ceph-mgr"]);
/** Linux USER_HZ. */
const TICKS_PER_SECOND = 100;

function statFields(path: string): string[] | null {
  try {
    const text = readFileSync(path, "utf8");
    // The command name is in parentheses and may hold spaces: fields follow the last ")".
    const close = text.lastIndexOf(")");
    return [text.slice(text.indexOf("(") + 1, close), ...text.slice(close + 2).split(" ")];
  } catch {
    return null; // the process ended between the listing and the read
  }
}

/** utime + stime (+ the waited-for children's when `children`), in ticks. */
function processTicks(fields: string[], children: boolean): number {
  // After the name: state is [1], utime [12], stime [13], cutime [14], cstime [15].
  const own = Number(fields[12]) + Number(fields[13]);
  return children ? own + Number(fields[14]) + Number(fields[15]) : own;
}

export function cpuSnapshot(): CpuSnapshot | null {
  let stat: string;
  try {
    stat = readFileSync("/proc/stat", "utf8");
  } catch {
    return null; // not Linux: only the load average is printed
  }
  const cpu = stat.split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait.
  const busyTicks = cpu.slice(0, 8).reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!;
  let ownTicks = processTicks(statFields("/proc/self/stat") ?? [], true);
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    const fields = statFields(`/proc/${pid}/stat`);
    if (fields && STORE_PROCESSES.has(fields[0]!)) ownTicks += processTicks(fields, false);
  }
  return { busyTicks, ownTicks, atMs: Date.now() };
}

/** Average cores other work kept busy between two snapshots. */
export function foreignCores(before: CpuSnapshot, after: CpuSnapshot): number {
  const seconds = Math.max(0.001, (after.atMs - before.atMs) / 1000);
  const foreign = after.busyTicks - before.busyTicks - (after.ownTicks - before.ownTicks);
  return Math.max(0, foreign) / TICKS_PER_SECOND / seconds;
}
