import { progressDocument } from "@holdfast/api-shapes";
import { type ProgressEstimate, ProgressTracker } from "@holdfast/cleanup";
import type { Clock } from "@holdfast/conditional-store";
import cliProgress from "cli-progress";
import type { Output } from "./output.js";

/** One progress event: `done` of `total` (when known) items of a named phase. */
export interface ProgressEvent {
  readonly phase: string;
  readonly done: number;
  readonly total?: number | undefined;
}

const PHASE_LABEL: Record<string, string> = {
  commit: "committing versions",
  recover: "recovering interrupted work",
  plan: "planning",
  retire: "retiring (drain, census, seal, commit)",
  delete: "deleting manifests and data files",
  orphans: "sweeping orphan files",
};

/** Most one `--json` progress event a second within a phase (the first and last always print). */
const JSON_EVERY_MS = 1_000;

export interface ProgressViewOptions {
  /** The clock rate and ETA are measured on (the run's injected clock). */
  readonly clock: Clock;
  /** Plain progress lines on a stderr that is not a terminal (`--progress`). @default false */
  readonly plain?: boolean | undefined;
  /** The command named in `--json` progress events; without one, `--json` shows no progress. */
  readonly command?: "cleanup" | "recover" | undefined;
}

/**
 * Shows progress on stderr, with rate and ETA from the cleanup package's
 * `progressEstimate` (the server's job progress uses the same): a live bar on a terminal
 * (cli-progress); in `--json` mode one `CleanupProgressEventShape` object per line
 * (throttled: the first and last event of each phase, at most one a second between);
 * plain lines on a non-terminal only when asked (`--progress`). stdout stays the answer.
 */
export class ProgressView {
  readonly #out: Output;
  readonly #tracker: ProgressTracker;
  readonly #plain: boolean;
  readonly #command: string | undefined;
  #bar: cliProgress.SingleBar | undefined;
  #phase: string | undefined;
  #lastQuarter = -1;
  #lastJsonAt = Number.NEGATIVE_INFINITY;
  #pending: ProgressEstimate | undefined;

  constructor(out: Output, options: ProgressViewOptions) {
    this.#out = out;
    this.#tracker = new ProgressTracker(options.clock);
    this.#plain = options.plain === true;
    this.#command = options.command;
  }

  update(event: ProgressEvent): void {
    const previous = this.#tracker.estimate();
    const estimate = this.#tracker.record(event as Parameters<ProgressTracker["record"]>[0]);
    if (this.#out.json) {
      if (this.#command) this.#json(estimate, previous);
      return;
    }
    const label = PHASE_LABEL[event.phase] ?? event.phase;
    const known = event.total !== undefined && event.total > 0;
    if (this.#out.progressTty) {
      const payload = { label, speed: formatRate(estimate), eta: formatEta(estimate) };
      if (this.#phase !== event.phase) {
        this.#bar?.stop();
        this.#bar = new cliProgress.SingleBar(
          {
            format: `{label} ${known ? "[{bar}] {value}/{total}" : "{value}"}{speed}{eta}`,
            stream: process.stderr,
            hideCursor: true,
            clearOnComplete: false,
            barsize: 30,
          },
          cliProgress.Presets.shades_classic,
        );
        this.#bar.start(known ? event.total! : 0, event.done, payload);
        this.#phase = event.phase;
      } else {
        if (known) this.#bar?.setTotal(event.total!);
        this.#bar?.update(event.done, payload);
      }
      return;
    }
    if (!this.#plain) return;
    // Plain lines: the start of each phase, and each quarter of a phase with a known total.
    if (this.#phase !== event.phase) {
      this.#phase = event.phase;
      this.#lastQuarter = -1;
      this.#out.note(`holdfast: ${label}${known ? ` (${event.total})` : ""}`);
    }
    if (known) {
      const quarter = Math.floor((event.done / event.total!) * 4);
      if (quarter > this.#lastQuarter && event.done > 0) {
        this.#lastQuarter = quarter;
        this.#out.note(
          `holdfast: ${event.phase} ${event.done}/${event.total}${formatRate(estimate)}${formatEta(estimate)}`,
        );
      }
    }
  }

  stop(): void {
    this.#bar?.stop();
    this.#bar = undefined;
    if (this.#pending) this.#writeJson(this.#pending);
  }

  /** The first event of a phase (after the last of the one before), then one a second. */
  #json(estimate: ProgressEstimate, previous: ProgressEstimate | undefined): void {
    const now = this.#tracker.now();
    if (previous && previous.phase !== estimate.phase && this.#pending) {
      this.#writeJson(this.#pending);
    }
    if (previous?.phase !== estimate.phase || now - this.#lastJsonAt >= JSON_EVERY_MS) {
      this.#lastJsonAt = now;
      this.#writeJson(estimate);
    } else {
      this.#pending = estimate;
    }
  }

  #writeJson(e: ProgressEstimate): void {
    this.#pending = undefined;
    const event = { event: "progress", command: this.#command, ...progressDocument(e) };
    this.#out.io.stderr.write(`${JSON.stringify(event)}\n`);
  }
}

function formatRate(e: ProgressEstimate): string {
  if (e.ratePerSec === undefined) return "";
  const rate = e.ratePerSec >= 10 ? Math.round(e.ratePerSec) : e.ratePerSec.toFixed(1);
  return ` ${rate}/s`;
}

function formatEta(e: ProgressEstimate): string {
  if (e.etaMs === undefined || e.left === undefined || e.left === 0) return "";
  return ` ${e.left} left, ETA ${formatDuration(e.etaMs)}`;
}

/** `45s`, `12m 05s`, `3h 07m`. */
export function formatDuration(ms: number): string {
  const s = Math.ceil(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** Compresses version numbers into ranges for people: `1-40, 42, 45-47`. */
export function formatRanges(versions: readonly number[]): string {
  const sorted = [...new Set(versions)].sort((a, b) => a - b);
  const parts: string[] = [];
  let start: number | undefined;
  let prev: number | undefined;
  for (const v of sorted) {
    if (start === undefined) {
      start = v;
    } else if (v !== prev! + 1) {
      parts.push(start === prev ? `${start}` : `${start}-${prev}`);
      start = v;
    }
    prev = v;
  }
  if (start !== undefined) parts.push(start === prev ? `${start}` : `${start}-${prev}`);
  return parts.join(", ");
}
