import { readFile } from "node:fs/promises";
import { holdfastError, isHoldfastError } from "@holdfast/conditional-store";
import type { DatasetFormat } from "@holdfast/dataset";
import {
  acquireLease,
  checkLeaseHandle,
  checkLeaseHolder,
  checkLeaseTtl,
  describeLease,
  describeLeases,
  forceReleaseLease,
  INVALID_LEASE_HANDLE,
  keeperTiming,
  keepLease,
  type Lease,
  type LeaseHandle,
  type LeaseView,
  MIN_TTL_MS,
  releaseLease,
  releaseLeaseHandle,
  renewLeaseHandle,
  toLeaseHandle,
} from "@holdfast/leases";
import type { ProtocolContext } from "@holdfast/protocol";
import { Command } from "commander";
import { parseNameArg, parseVersionArg } from "../args.js";
import { formatDuration, parseDuration } from "../duration.js";
import { ExitCode, exitCodeFor } from "../exit-codes.js";
import { lanceAutoCleanupWarning, openFormatDataset, parseFormatOption } from "../format.js";
import { errorShape } from "../output.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { contextFor, openTarget, parseTarget } from "../target.js";

/** `lease acquire|list|renew|release`: readers pin the versions they read. */
export function registerLease(r: Registrar, program: Command): void {
  const lease = new Command("lease").description(
    "pin a version while you read it (renewable leases timed by the store's clock)",
  );

  lease.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("acquire")
          .description(
            "acquire a lease on a version; with --hold, keep renewing it until Ctrl-C, then release",
          )
          .argument("<url>", "storage URL")
          .argument("<version>", "version number to pin")
          .requiredOption(
            "--ttl <duration>",
            `lease lifetime in storage time, e.g. 60s (min ${MIN_TTL_MS}ms, max 24h)`,
          )
          .option(
            "-b, --branch <name>",
            "branch of the version (default: the dataset's default branch)",
          )
          .option(
            "--holder <label>",
            "who holds the lease (a job, a host): shown by lease list and the dashboard",
          )
          .option("--hold", "keep the lease renewed until interrupted (Ctrl-C), then release it")
          .option(
            "--renew-every <duration>",
            "with --hold: renewal period (default: a third of the TTL)",
          )
          .option(
            "--read-every <duration>",
            "with --hold: read the version's manifest and files on this period, as a reader would",
          )
          .option(
            "--format <name>",
            "dataset format: holdfast or lance (default: detected from the dataset)",
          ),
      ),
      "lease acquire",
      [
        "holdfast lease acquire ./my-dataset 12 --ttl 60s",
        "holdfast lease acquire ./db/events.lance 7 --ttl 60s --hold   # a Lance table's version",
        "holdfast lease acquire ./my-dataset 12 --ttl 30s --hold          # renew until Ctrl-C",
        "holdfast lease acquire ./my-dataset 12 --ttl 5m --holder nightly-report",
        "holdfast lease acquire s3://bucket/ds 3 --branch exp --ttl 5m --json",
      ],
      leaseAcquire,
    ),
  );

  lease.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("list")
          .description("list leases with their expiry in storage time")
          .argument("<url>", "storage URL")
          .argument("[version]", "only leases on this version")
          .option(
            "-b, --branch <name>",
            "only this branch (default with a version: the dataset's default branch)",
          )
          .option(
            "--format <name>",
            "dataset format: holdfast or lance (default: detected from the dataset)",
          ),
      ),
      "lease list",
      [
        "holdfast lease list ./my-dataset",
        "holdfast lease list ./my-dataset 12 --branch main --json",
      ],
      leaseList,
    ),
  );

  lease.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("renew")
          .description(
            "renew a lease you hold, by the handle lease acquire (or an earlier renew) printed; prints the renewed handle",
          )
          .argument("<url>", "storage URL")
          .argument("[lease-id]", "the lease's id (checked against the handle)")
          .requiredOption(
            "--handle <json|@file>",
            "the lease's handle as lease acquire --json or lease renew --json printed it (or @path of a file holding it)",
          )
          .option(
            "--format <name>",
            "dataset format: holdfast or lance (default: detected from the dataset)",
          ),
      ),
      "lease renew",
      ["holdfast lease renew ./my-dataset --handle @lease-handle.json --json > lease-handle.json"],
      leaseRenew,
    ),
  );

  lease.addCommand(
    r.leaf(
      withStoreOptions(
        new Command("release")
          .description(
            "release a lease you hold, by the handle lease acquire printed (idempotent); --force removes anyone's lease by its id",
          )
          .argument("<url>", "storage URL")
          .argument("[lease-id]", "with --force: the id printed by lease list")
          .option(
            "--handle <json|@file>",
            "the lease's handle as lease acquire --json printed it (or @path of a file holding it)",
          )
          .option(
            "--force",
            "remove the lease with the given id whoever holds it (its holder loses protection; its next renewal fails LEASE_LOST)",
          )
          .option(
            "--format <name>",
            "dataset format: holdfast or lance (default: detected from the dataset)",
          ),
      ),
      "lease release",
      [
        "holdfast lease release ./my-dataset --handle @lease-handle.json",
        "holdfast lease release ./my-dataset 01J9Z3K4V6W8X0Y2Z4A6B8C0D2 --force",
      ],
      leaseRelease,
    ),
  );

  lease.addHelpText(
    "after",
    "\nExamples:\n  $ holdfast lease acquire ./my-dataset 12 --ttl 60s --hold\n  $ holdfast lease list ./my-dataset",
  );
  program.addCommand(lease);
}

/** `holdfast lease acquire`. */
async function leaseAcquire(
  [url, versionText]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  const version = parseVersionArg(versionText);
  // The leases package's rule (INVALID_TTL, as the HTTP API), before anything is written.
  const ttlMs = checkLeaseTtl(parseDuration(String(opts.ttl), "--ttl"), "parse");
  const branchFlag = opts.branch === undefined ? undefined : parseNameArg(opts.branch, "branch");
  // The leases package's rule (INVALID_HOLDER, as the HTTP API), before anything is written.
  const holder = checkLeaseHolder(
    opts.holder === undefined ? undefined : String(opts.holder),
    "parse",
  );
  const renewEveryMs =
    opts.renewEvery === undefined
      ? undefined
      : parseDuration(String(opts.renewEvery), "--renew-every");
  const readEveryMs =
    opts.readEvery === undefined
      ? undefined
      : parseDuration(String(opts.readEvery), "--read-every");
  if ((renewEveryMs !== undefined || readEveryMs !== undefined) && opts.hold !== true) {
    throw holdfastError("invalid-input", "parse", "--renew-every and --read-every need --hold");
  }
  // The keeper's own check (its fence margin), before anything is written.
  if (renewEveryMs !== undefined) checkRenewEvery(ttlMs, renewEveryMs);
  const forced = parseFormatOption(opts.format);
  const store = await openTarget(target, cx.io);
  const ctx = contextFor(store);
  // A Lance table is described (its latest manifest's config) before the lease is written:
  // with Lance's automatic cleanup on, its writers delete versions whatever holdfast's leases
  // pin, and the reader must hear that the lease does not protect it (docs/lance.md).
  const { resolved, defaultBranch } = await openFormatDataset(ctx, forced, { describe: true });
  const format = resolved.format;
  const branch = branchFlag ?? defaultBranch;
  const warning = lanceAutoCleanupWarning(resolved);
  const warnings = warning ? [warning] : [];
  const acquired = await acquireLease(ctx, { branch, version, ttlMs, holder, format });
  const shape = await describeLease(ctx, acquired);
  // On stderr in both modes: stdout stays the answer, and a script still sees it in its log.
  if (warning) cx.io.stderr.write(`${cx.out.paint("yellow", "warning:")} ${warning}\n`);
  if (opts.hold !== true) {
    const handle = toLeaseHandle(acquired);
    cx.out.result(cx.command, { location: target.display, lease: shape, handle, warnings });
    cx.out.line(
      `Acquired lease ${acquired.leaseId} on ${branch}@${version} for ${formatDuration(ttlMs)} (expires ${shape.expiresAt ?? "?"} storage time).`,
    );
    // The handle carries the lease's secret: only its holder can release the lease.
    cx.out.line(
      `Release it with (the handle is the lease's secret: keep it private): holdfast lease release ${url} --handle '${JSON.stringify(handle)}'`,
    );
    return ExitCode.ok;
  }
  return holdLease(cx, ctx, acquired, shape, { renewEveryMs, readEveryMs, format, warnings });
}

/** `holdfast lease list`. */
async function leaseList(
  [url, versionText]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  const branch = opts.branch === undefined ? undefined : parseNameArg(opts.branch, "branch");
  const version = versionText === undefined ? undefined : parseVersionArg(versionText);
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(target, cx.io, { readOnly: true }));
  const { defaultBranch } = await openFormatDataset(ctx, forced);
  const leases = await describeLeases(ctx, { branch, version, defaultBranch });
  cx.out.result(cx.command, { location: target.display, leases });
  if (leases.length === 0) {
    cx.out.line("No leases.");
    return ExitCode.ok;
  }
  cx.out.table(
    ["LEASE", "HOLDER", "VERSION", "TTL", "EXPIRES (storage time)", "STATE"],
    leases.map((l) => [
      l.leaseId,
      l.holder ?? "-",
      `${l.branch}@${l.version}`,
      l.ttlMs === null ? "?" : formatDuration(l.ttlMs),
      l.expiresAt ?? "?",
      l.active ? cx.out.paint("green", "active") : cx.out.paint("dim", "expired"),
    ]),
  );
  return ExitCode.ok;
}

/**
 * `holdfast lease renew`: the leases package judges the term by the store's clock
 * (`renewLeaseHandle`: LEASE_EXPIRED when the renewal landed after it ran out, LEASE_LOST
 * when the lease is gone), as the HTTP API's renew route does (docs/protocol.md §4.2).
 */
async function leaseRenew(
  [url, leaseId]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  // Checked before any request: a forged handle or one of another lease is refused.
  const handle = await parseHandleOption(String(opts.handle), leaseId, "renewLease");
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(target, cx.io));
  await openFormatDataset(ctx, forced);
  const held = await renewLeaseHandle(ctx, handle);
  cx.out.result(cx.command, { location: target.display, ...held });
  cx.out.line(
    `Renewed lease ${held.handle.leaseId} on ${held.handle.branch}@${held.handle.version} (expires ${held.lease.expiresAt ?? "?"} storage time).`,
  );
  cx.out.line(
    `Its handle changed (keep it private): holdfast lease renew ${url} --handle '${JSON.stringify(held.handle)}'`,
  );
  return ExitCode.ok;
}

/** `holdfast lease release`. */
async function leaseRelease(
  [url, leaseId]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  if (opts.handle !== undefined) {
    if (opts.force === true) {
      throw holdfastError("invalid-input", "parse", "--handle and --force exclude each other");
    }
    // Checked before any request: a forged handle or one of another lease is refused.
    const handle = await parseHandleOption(String(opts.handle), leaseId, "releaseLease");
    const forced = parseFormatOption(opts.format);
    const ctx = contextFor(await openTarget(target, cx.io));
    await openFormatDataset(ctx, forced);
    await releaseLeaseHandle(ctx, handle);
    cx.out.result(cx.command, {
      location: target.display,
      released: { leaseId: handle.leaseId, branch: handle.branch, version: handle.version },
    });
    cx.out.line(`Released lease ${handle.leaseId} on ${handle.branch}@${handle.version}.`);
    return ExitCode.ok;
  }
  if (opts.force !== true) {
    throw holdfastError(
      "invalid-input",
      "parse",
      "lease release needs the lease's handle (--handle, as lease acquire printed it)",
      {
        hint: "to remove another holder's lease by its id with your store credentials, add --force",
      },
    );
  }
  const forced = parseFormatOption(opts.format);
  const ctx = contextFor(await openTarget(target, cx.io));
  await openFormatDataset(ctx, forced);
  const found = await forceReleaseLease(ctx, leaseId ?? "");
  cx.out.result(cx.command, {
    location: target.display,
    released: { leaseId: found.leaseId, branch: found.branch, version: found.version },
  });
  cx.out.line(
    `Removed lease ${found.leaseId} on ${found.branch}@${found.version} (forced: its holder's next renewal fails LEASE_LOST).`,
  );
  return ExitCode.ok;
}

/**
 * Keeps a lease renewed until Ctrl-C (then releases it) or until the keeper fences itself
 * (renewal failed past its deadline: protection may have ended, so we say so and fail).
 */
async function holdLease(
  cx: CommandContext,
  ctx: ProtocolContext,
  acquired: Lease,
  shape: LeaseView,
  options: {
    renewEveryMs: number | undefined;
    readEveryMs: number | undefined;
    format: DatasetFormat;
    warnings: readonly string[];
  },
): Promise<number> {
  let keeper: ReturnType<typeof keepLease>;
  try {
    keeper = keepLease(ctx, acquired, {
      ...(options.renewEveryMs === undefined ? {} : { renewEveryMs: options.renewEveryMs }),
      // One line per renewal, so a supervisor (or a test) sees the lease kept, not only held.
      onRenew: (lease) => {
        if (cx.out.json) {
          cx.out.emit({ ok: true, command: cx.command, event: "renewed", renewal: lease.renewal });
        }
      },
    });
  } catch (error) {
    // Bad keeper timing is refused after the lease exists: do not leave it behind.
    await releaseLease(ctx, acquired).catch(() => undefined);
    throw error;
  }
  const label = `${acquired.branch}@${acquired.version}`;
  if (cx.out.json) {
    cx.out.emit({
      ok: true,
      command: cx.command,
      event: "acquired",
      lease: shape,
      warnings: options.warnings,
    });
  } else {
    cx.out.line(
      `Holding lease ${acquired.leaseId} on ${label} (TTL ${formatDuration(acquired.ttlMs)}), renewing in the background. Press Ctrl-C to release.`,
    );
  }
  let reads = 0;
  let readError: unknown;
  const stopReading = new AbortController();
  const reader =
    options.readEveryMs === undefined
      ? Promise.resolve()
      : (async () => {
          while (!stopReading.signal.aborted && !keeper.signal.aborted) {
            try {
              const bytes = await readVersion(
                ctx,
                acquired.branch,
                acquired.version,
                options.format,
              );
              reads += 1;
              if (cx.out.json)
                cx.out.emit({ ok: true, command: cx.command, event: "read", reads, bytes });
            } catch (error) {
              readError = error;
              stopReading.abort();
              return;
            }
            await ctx.sleep(options.readEveryMs!, stopReading.signal).catch(() => undefined);
          }
        })();

  await new Promise<void>((resolve) => {
    const done = () => resolve();
    if (cx.interrupt.aborted || keeper.signal.aborted) return resolve();
    cx.interrupt.addEventListener("abort", done, { once: true });
    keeper.signal.addEventListener("abort", done, { once: true });
    stopReading.signal.addEventListener("abort", done, { once: true });
  });
  stopReading.abort();
  await reader;
  const fenced = keeper.signal.aborted && !cx.interrupt.aborted;
  await keeper.stop();
  await releaseLease(ctx, keeper.lease).catch(() => undefined);

  if (readError !== undefined) {
    const code = cx.out.error(cx.command, readError);
    return code === ExitCode.ok ? ExitCode.failure : code;
  }
  if (fenced) {
    const reason: unknown = keeper.signal.reason;
    const error = isHoldfastError(reason)
      ? reason
      : holdfastError(
          "refused",
          "keepLease",
          `lease ${acquired.leaseId} on ${label} could not be renewed in time`,
          {
            hint: "protection may have ended: stop reading this version, then acquire a new lease",
            cause: reason,
          },
        );
    if (cx.out.json) {
      cx.out.emit({
        ok: false,
        command: cx.command,
        event: "fenced",
        error: errorShape(error),
        exitCode: exitCodeFor(error),
      });
      return exitCodeFor(error);
    }
    return cx.out.error(cx.command, error);
  }
  if (cx.out.json) {
    cx.out.emit({
      ok: true,
      command: cx.command,
      event: "released",
      leaseId: acquired.leaseId,
      reads,
    });
  } else {
    cx.out.line(
      `Released lease ${acquired.leaseId} on ${label}${reads > 0 ? ` after ${reads} read(s)` : ""}.`,
    );
  }
  return ExitCode.ok;
}

/** `--renew-every` must end before the keeper's fence (the leases package's `keeperTiming`). */
function checkRenewEvery(ttlMs: number, renewEveryMs: number): void {
  try {
    keeperTiming(ttlMs, { renewEveryMs });
  } catch (error) {
    if (!isHoldfastError(error, "invalid-input")) throw error;
    throw holdfastError(
      "invalid-input",
      "parse",
      `--renew-every ${formatDuration(renewEveryMs)} is too long for --ttl ${formatDuration(ttlMs)}: ${error.message}`,
      {
        ...(error.code === undefined ? {} : { code: error.code }),
        hint: "leave --renew-every out (a third of the TTL), or shorten it",
        cause: error,
      },
    );
  }
}

/**
 * Parses `--handle`: the handle's JSON, or `@path` of a file holding it (or a whole
 * `lease acquire --json` or `lease renew --json` document, whose `handle` is taken), checked by the leases package
 * (`checkLeaseHandle`, INVALID_LEASE_HANDLE), against `leaseId` when one was given. Errors
 * never echo the text: it holds the lease's secret.
 */
async function parseHandleOption(
  text: string,
  leaseId: string | undefined,
  operation: "renewLease" | "releaseLease",
): Promise<LeaseHandle> {
  const bad = (why: string, cause?: unknown) =>
    holdfastError("invalid-input", operation, `--handle is not a lease handle: ${why}`, {
      code: INVALID_LEASE_HANDLE,
      hint: "pass the handle exactly as lease acquire --json printed it",
      cause,
    });
  let raw = text;
  if (text.startsWith("@")) {
    raw = await readFile(text.slice(1), "utf8").catch((error: unknown) => {
      throw bad(`cannot read the file ${text.slice(1)}`, error);
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw bad("not JSON");
  }
  if (value !== null && typeof value === "object" && "handle" in value) {
    value = (value as { handle: unknown }).handle;
  }
  return checkLeaseHandle(value, operation, leaseId);
}

/** Reads a version as a reader would: its manifest (in the dataset's format), then every file it names. Returns bytes read. */
async function readVersion(
  ctx: ProtocolContext,
  branch: string,
  version: number,
  format: DatasetFormat,
): Promise<number> {
  const manifest = await format.readManifest(ctx, branch, version);
  if (!manifest) {
    throw holdfastError("not-found", "read", `version ${version} of ${branch} is gone`, {
      key: format.manifestKey(branch, version),
      code: "VERSION_NOT_FOUND",
      hint: "a version under lease lost its manifest: this is a holdfast bug, please report it",
    });
  }
  let bytes = 0;
  for (const file of manifest.files) {
    const got = await ctx.store.get(file.key);
    if (!got) {
      throw holdfastError(
        "not-found",
        "read",
        `data file ${file.key} of ${branch}@${version} is missing`,
        {
          key: file.key,
          hint: "a version under lease lost a file: this is a holdfast bug, please report it",
        },
      );
    }
    bytes += got.body.byteLength;
  }
  return bytes;
}
