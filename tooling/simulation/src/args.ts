import { parseArgs } from "node:util";

/** A bad command line: the CLI prints the message and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export type Profile = "default" | "stress";

/** Faults `--plant` can plant (see {@link PlantedFault}). */
export const PLANTED_FAULTS = [
  "unprotected-reuse",
  "blind-last-look",
  "forgeable-leases",
  "late-validation",
  "no-drop",
  "no-give-up",
  "floor-above-latest",
] as const;
/**
 * `unprotected-reuse`: restorers and forkers commit reused files as if just written and
 * name no source, so the commit runs no reuse protocol. `blind-last-look`: cleaners see no
 * commit intent and no manifest added after their plan (cleanup's last look blinded).
 * Either reopens the hole docs/protocol.md §2.5 closes.
 * `forgeable-leases`: lease attackers' handles, built from the lease listing, are carried
 * out as before lease secrets (docs/protocol.md §4.2), so they can release,
 * shorten or stretch a reader's lease. `late-validation`: cleaners validate manifests only
 * when they use their files, after the commit (docs/protocol.md §6.1), so a manifest a breaker
 * replaced is refused after an irreversible commit. `no-drop`: the rewrite that drops a version
 * whose manifest was replaced from a committed record is refused (docs/protocol.md §5.5), so the
 * version stays un-leasable after its repair until another run settles it. `no-give-up`: a cleanup
 * run's give-up of its own draining or sealed record (cancelled and deleted when it fails before
 * its commits) is refused, so a run refused before its commit leaves a record it owns
 * (docs/protocol.md §6.1). `floor-above-latest`: cleaners refuse to raise the retired floor of a
 * branch whose latest version is at or below a committed record's highest number (`RETIRE_LATEST`),
 * as before docs/protocol.md §2.1, F1 "A branch torn down under a record", so a record written
 * after its branch's teardown stops every cleanup's deletions.
 */
export type PlantedFault = (typeof PLANTED_FAULTS)[number];

export type Command =
  | {
      kind: "run";
      count: number;
      first: number;
      profile: Profile;
      trace: boolean;
      plant?: PlantedFault | undefined;
    }
  | {
      kind: "soak";
      durationMs: number;
      workers: number;
      first: number;
      profile: Profile;
      shrink: boolean;
    }
  | { kind: "replay"; seed: number; profile: Profile; shrink: boolean }
  | { kind: "help" };

export const USAGE = `usage:
  simulate [run] [COUNT] [FIRST]        run COUNT seeds (default 200) from FIRST (default 1)
  simulate soak --duration 10m [--workers 2] [--first 1]
                                         seeds across worker processes until the duration ends
  simulate replay --seed N [--no-shrink] rerun one seed, then shrink it to a minimal schedule
options: --profile default|stress (or HOLDFAST_SIM_PROFILE), --trace (run with COUNT 1),
  --plant unprotected-reuse|blind-last-look|forgeable-leases|late-validation|no-drop|no-give-up|floor-above-latest
  (run only: reopen the reuse hole, forgeable lease handles, cleanup validating manifests
  after its commit, a committed record keeping a version whose manifest was replaced, a
  refused run keeping its record, or a retired floor refused under a torn-down branch,
  on purpose; seeds must then fail, which proves the checker sees it)`;

/** Parses argv (without node and script). A leading "--" (pnpm passes it through) is dropped. */
export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Command {
  const args = argv[0] === "--" ? argv.slice(1) : [...argv];
  let parsed: ReturnType<typeof parseWith>;
  try {
    parsed = parseWith(args);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  const profile = parseProfile(values.profile ?? env.HOLDFAST_SIM_PROFILE ?? "default");
  const verb =
    positionals[0] === "soak" || positionals[0] === "replay" || positionals[0] === "run"
      ? positionals.shift()
      : "run";
  if (verb === "soak") {
    if (positionals.length > 0) throw new UsageError(`soak takes no positional arguments`);
    if (values.duration === undefined)
      throw new UsageError("soak needs --duration (e.g. 90s, 10m)");
    return {
      kind: "soak",
      durationMs: parseDuration(values.duration),
      workers: positiveInt("--workers", values.workers ?? "2"),
      first: positiveInt("--first", values.first ?? "1"),
      profile,
      shrink: !values["no-shrink"],
    };
  }
  if (verb === "replay") {
    if (positionals.length > 0) throw new UsageError(`replay takes no positional arguments`);
    if (values.seed === undefined) throw new UsageError("replay needs --seed N");
    return {
      kind: "replay",
      seed: nonNegativeInt("--seed", values.seed),
      profile,
      shrink: !values["no-shrink"],
    };
  }
  if (positionals.length > 2) throw new UsageError(`unexpected argument ${positionals[2]}`);
  const count = positiveInt("COUNT", positionals[0] ?? values.count ?? "200");
  const first = nonNegativeInt("FIRST", positionals[1] ?? values.first ?? "1");
  const trace = values.trace === true || Boolean(env.HOLDFAST_SIM_TRACE);
  return { kind: "run", count, first, profile, trace, plant: parsePlant(values.plant) };
}

function parseWith(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      count: { type: "string" },
      first: { type: "string" },
      seed: { type: "string" },
      duration: { type: "string" },
      workers: { type: "string" },
      profile: { type: "string" },
      trace: { type: "boolean" },
      plant: { type: "string" },
      "no-shrink": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function parsePlant(value: string | undefined): PlantedFault | undefined {
  if (value === undefined) return undefined;
  const known = PLANTED_FAULTS.find((p) => p === value);
  if (!known) throw new UsageError(`--plant must be one of ${PLANTED_FAULTS.join(", ")}`);
  return known;
}

function parseProfile(value: string): Profile {
  if (value === "default" || value === "stress") return value;
  throw new UsageError(`--profile must be default or stress, not ${JSON.stringify(value)}`);
}

function positiveInt(name: string, value: string): number {
  const n = nonNegativeInt(name, value);
  if (n < 1) throw new UsageError(`${name} must be at least 1`);
  return n;
}

function nonNegativeInt(name: string, value: string): number {
  if (!/^\d+$/.test(value))
    throw new UsageError(`${name} must be a whole number, not ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${name} is too large`);
  return n;
}

/** "90s", "10m", "1h", "1500ms" or plain seconds. */
export function parseDuration(value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  if (!match)
    throw new UsageError(`--duration must look like 90s, 10m or 1h, not ${JSON.stringify(value)}`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? "s"]!;
  const ms = Number(match[1]) * unit;
  if (!(ms > 0)) throw new UsageError("--duration must be positive");
  return ms;
}
