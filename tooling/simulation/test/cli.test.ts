import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseCommand, UsageError } from "../src/args.js";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));
const run = (...args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "--conditions=@holdfast/source", cli, ...args], {
    encoding: "utf8",
    cwd: fileURLToPath(new URL("..", import.meta.url)),
  });

describe("simulate command line", () => {
  it("the README's `simulate -- 300 1` means 300 seeds from seed 1 (pnpm passes the --)", () => {
    expect(parseCommand(["--", "300", "1"])).toEqual({
      kind: "run",
      count: 300,
      first: 1,
      profile: "default",
      trace: false,
    });
    expect(parseCommand(["soak", "--duration", "90s", "--workers", "2"])).toMatchObject({
      kind: "soak",
      durationMs: 90_000,
      workers: 2,
    });
    expect(parseCommand(["replay", "--seed", "7"])).toMatchObject({ kind: "replay", seed: 7 });
    expect(parseCommand(["run", "1", "48", "--plant", "blind-last-look"])).toMatchObject({
      kind: "run",
      first: 48,
      plant: "blind-last-look",
    });
    expect(parseCommand(["run", "40", "--plant", "late-validation"])).toMatchObject({
      kind: "run",
      count: 40,
      plant: "late-validation",
    });
  });

  it("rejects bad arguments instead of running nothing", () => {
    for (const args of [
      ["--", "0"],
      ["abc"],
      ["1", "2", "3"],
      ["--count", "-1"],
      ["soak"],
      ["soak", "--duration", "soon"],
      ["soak", "--duration", "1m", "--workers", "0"],
      ["replay"],
      ["--profile", "fast"],
      ["--bogus"],
      ["--plant", "no-such-fault"],
    ]) {
      expect(() => parseCommand(args), args.join(" ")).toThrow(UsageError);
    }
  });

  it("exits 2 on bad arguments and 0 with a closing line after running seeds", () => {
    const bad = run("--", "NaN");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("COUNT must be a whole number");
    const good = run("--", "1", "3");
    expect(good.stdout).toContain("1 passed, 0 failed");
    expect(good.status).toBe(0);
  });
});
