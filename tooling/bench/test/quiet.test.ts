import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { type CpuSnapshot, cpuSnapshot, foreignCores } from "../src/quiet.js";

// The cleaners' record refuses a block that other work competed with (README, "Cleaners
// side by side"): the bench's own children count as its own CPU, not as other work.
describe("quiet-machine check", () => {
  it("counts a waited-for child's CPU as the bench's own", () => {
    const before = cpuSnapshot();
    expect(before).not.toBeNull();
    execFileSync(process.execPath, [
      "-e",
      "const end = process.cpuUsage().user + 300000; while (process.cpuUsage().user < end);",
    ]);
    const after = cpuSnapshot()!;
    // At least 0.3 s of the child's user CPU (100 ticks per second) joined the own ticks.
    expect(after.ownTicks - before!.ownTicks).toBeGreaterThanOrEqual(30);
  });

  it("other work is the busy time the bench did not spend, per second", () => {
    const before: CpuSnapshot = { busyTicks: 1_000, ownTicks: 400, atMs: 0 };
    const after: CpuSnapshot = { busyTicks: 1_300, ownTicks: 550, atMs: 2_000 };
    // 300 busy ticks, 150 of them the bench's: 150 ticks = 1.5 s over 2 s.
    expect(foreignCores(before, after)).toBeCloseTo(0.75);
    expect(foreignCores(before, { ...after, busyTicks: 1_100 })).toBe(0);
  });
});
