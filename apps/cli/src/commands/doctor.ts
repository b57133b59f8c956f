import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { isHoldfastError, type ObjectStore } from "@holdfast/conditional-store";
import { type DoctorCheck, diagnoseStore, refusedStoreDiagnosis } from "@holdfast/format-lance";
import { createContext } from "@holdfast/protocol";
import { Command } from "commander";
import { ExitCode } from "../exit-codes.js";
import {
  type FormatName,
  formats,
  parseFormatOption,
  printLanceDetails,
  withFormatOption,
} from "../format.js";
import type { Output } from "../output.js";
import { type CommandContext, type Registrar, withStoreOptions } from "../program.js";
import { openTarget, parseTarget, type Target } from "../target.js";

/** `doctor`: probe what the store really enforces and say what holdfast can guarantee there. */
export function registerDoctor(r: Registrar, program: Command): void {
  program.addCommand(
    r.leaf(
      withStoreOptions(
        withFormatOption(
          new Command("doctor")
            .description(
              "probe a store: create-only, if-match and conditional delete enforcement, timestamp precision, batch delete, clock skew; on a Lance table also its details and whether Lance's own automatic cleanup is on",
            )
            .argument(
              "<url>",
              "storage URL (needs no dataset; writes and removes a few probe objects under _holdfast/)",
            ),
        ),
      ),
      "doctor",
      [
        "holdfast doctor ./my-dataset",
        "holdfast doctor s3://holdfast-test/ds --endpoint http://127.0.0.1:7480 --path-style",
        "holdfast doctor az://my-container/ds --json",
        "holdfast doctor gs://my-bucket/ds --endpoint http://127.0.0.1:4443",
      ],
      doctorCommand,
    ),
  );
}

/** `holdfast doctor`. */
async function doctorCommand(
  [url]: readonly string[],
  opts: Record<string, unknown>,
  cx: CommandContext,
): Promise<number> {
  const target = parseTarget(url!, opts, cx.io);
  const forced = parseFormatOption(opts.format);
  cx.out.note(`Probing ${target.display} ...`);
  // A local directory the doctor had to create is removed again afterwards.
  const createdDir =
    target.url.scheme === "file" && !(await stat(target.url.root).catch(() => null))
      ? target.url.root
      : undefined;
  try {
    return await runDoctor(cx, target, forced);
  } finally {
    if (createdDir) await removeProbeDir(createdDir);
  }
}

async function runDoctor(
  cx: CommandContext,
  target: Target,
  forced: FormatName | undefined,
): Promise<number> {
  let store: ObjectStore;
  try {
    // The backend's own open-time probe configures what it can (If-Match quoting,
    // conditional delete); a store it refuses outright is reported, not thrown.
    store = await openTarget(target, cx.io, { create: true });
  } catch (error) {
    if (!isHoldfastError(error, "unsupported")) throw error;
    const report = refusedStoreDiagnosis(target.url.scheme, error.message);
    cx.out.result(cx.command, { location: target.display, ...report });
    cx.out.line(`${cx.out.paint("red", "FAIL")}  ${error.message}`);
    for (const line of report.guarantees) cx.out.line(`  - ${line}`);
    return ExitCode.unsupported;
  }
  // The checks, guarantees and verdict are the format package's (the server's doctor too).
  const ctx = createContext(store);
  const report = await diagnoseStore(ctx, { resolved: await formats.resolve(ctx, forced) });
  const { verdict, checks, guarantees, lance } = report;
  cx.out.result(cx.command, { location: target.display, ...report });
  printHuman(cx.out, target.display, store, checks, guarantees, verdict);
  if (lance) {
    cx.out.line();
    printLanceDetails(cx.out, lance);
  }
  return verdict === "unsupported" ? ExitCode.unsupported : ExitCode.ok;
}

// --- utils ---

/** Removes a directory only if it holds nothing but the doctor's own (now empty) probe folders. */
async function removeProbeDir(dir: string): Promise<void> {
  const top = await readdir(dir).catch(() => null);
  if (!top?.every((name) => name === "_holdfast")) return;
  const control = await readdir(join(dir, "_holdfast")).catch(() => []);
  // `.local` is the local backend's private folder (its temp and lock files).
  if (!control.every((name) => name === "probe" || name === ".local")) return;
  const probes = await readdir(join(dir, "_holdfast", "probe")).catch(() => []);
  if (probes.length > 0) return;
  await rm(dir, { recursive: true, force: true });
}

function printHuman(
  out: Output,
  location: string,
  store: ObjectStore,
  checks: readonly DoctorCheck[],
  guarantees: readonly string[],
  verdict: string,
): void {
  const mark = (status: DoctorCheck["status"]) =>
    status === "pass"
      ? out.paint("green", "ok  ")
      : status === "warn"
        ? out.paint("yellow", "warn")
        : status === "fail"
          ? out.paint("red", "FAIL")
          : out.paint("cyan", "info");
  out.line(
    `${out.paint("bold", "holdfast doctor")} ${location} (backend ${store.backend}, client ${store.capabilities.requestMode})`,
  );
  for (const check of checks)
    out.line(`  ${mark(check.status)}  ${check.id.padEnd(18)} ${check.detail}`);
  out.line();
  out.line(out.paint("bold", "What holdfast guarantees here:"));
  for (const line of guarantees) out.line(`  - ${line}`);
  out.line();
  out.line(
    verdict === "supported"
      ? out.paint("green", "Verdict: supported.")
      : verdict === "degraded"
        ? out.paint("yellow", "Verdict: usable with the limits above.")
        : out.paint(
            "red",
            "Verdict: NOT supported: holdfast refuses to run its protocol on this store.",
          ),
  );
}
