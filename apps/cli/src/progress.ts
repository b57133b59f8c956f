import { progressDocument } from "@holdfast/api-shapes";
import { type ProgressEstimate, ProgressTracker } from "@holdfast/cleanup";
import type { Clock } from "@holdfast/conditional-store";
import type { Output } from "./output.js";

/** One progress event: `done` of `total` (when known) items of a named phase. */
export interface ProgressEvent {
  readonly phase: string;
  readonly done: number;
  readonly total?: number | undefined;
}

/** What each phase is doing, and what it counts, in the words the bar prints. */
const PHASES: Record<string, { label: string; unit: string }> = {
  commit: { label: "committing", unit: "versions" },
  recover: { label: "finishing interrupted cleanups", unit: "records" },
  plan: { label: "planning", unit: "versions" },
  retire: { label: "retiring", unit: "versions" },
  delete: { label: "deleting", unit: "objects" },
  orphans: { label: "removing orphan files", unit: "objects" },
};

/** Most one `--json` progress event a second within a phase (the first and last always print). */
const JSON_EVERY_MS = 1_000;
/** Most one terminal redraw per this many ms within a phase (the first and last always draw). */
const DRAW_EVERY_MS = 100;
/** Width of the bar's `[####----]` part. */
const BAR_WIDTH = 24;

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
 * `progressEstimate` (the server's job progress uses the same): one redrawn line on a
 * terminal (its own small renderer: `\r`, erase line, the line cut to the terminal's width
 * so it never wraps); in `--json` mode one `CleanupProgressEventShape` object per line
 * (throttled: the first and last event of each phase, at most one a second between);
 * plain lines on a non-terminal only when asked (`--progress`). stdout stays the answer.
 * A phase that does nothing to a fresh dataset (`recover` with no record) shows nothing.
 */
export class ProgressView {
  readonly #out: Output;
  readonly #tracker: ProgressTracker;
  readonly #plain: boolean;
  readonly #command: string | undefined;
  /** The phase on screen (terminal) or last announced (plain). */
  #phase: string | undefined;
  /** A line is drawn and not yet ended with a newline. */
  #drawn = false;
  #lastDrawAt = Number.NEGATIVE_INFINITY;
  #lastQuarter = -1;
  #lastJsonAt = Number.NEGATIVE_INFINITY;
  #pending: ProgressEstimate | undefined;
  /** The latest estimate not yet drawn (throttled), drawn when its phase ends. */
  #undrawn: ProgressEstimate | undefined;

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
    // Nothing to recover: the phase is not shown (a fresh dataset is not "recovering").
    if (event.phase === "recover" && event.done === 0) return;
    if (this.#out.progressTty) {
      this.#draw(estimate);
      return;
    }
    if (this.#plain) this.#line(estimate);
  }

  /** Ends the line on screen (the phase's last state drawn) and prints a throttled `--json` event. */
  stop(): void {
    if (this.#undrawn) this.#render(this.#undrawn);
    if (this.#drawn) this.#out.io.stderr.write("\n");
    this.#drawn = false;
    this.#undrawn = undefined;
    this.#phase = undefined;
    if (this.#pending) this.#writeJson(this.#pending);
  }

  #draw(e: ProgressEstimate): void {
    const now = this.#tracker.now();
    if (this.#phase !== e.phase) {
      // The phase before ends on its last state, on a line of its own.
      if (this.#undrawn) this.#render(this.#undrawn);
      if (this.#drawn) this.#out.io.stderr.write("\n");
      this.#drawn = false;
      this.#phase = e.phase;
    } else if (now - this.#lastDrawAt < DRAW_EVERY_MS && e.left !== 0) {
      this.#undrawn = e;
      return;
    }
    this.#render(e);
  }

  #render(e: ProgressEstimate): void {
    this.#undrawn = undefined;
    this.#lastDrawAt = this.#tracker.now();
    const columns = this.#out.io.stderr.columns;
    const width = columns !== undefined && columns > 0 ? columns - 1 : 100;
    const text = progressLine(e, { bar: true });
    this.#out.io.stderr.write(`\r\u001b[2K${text.length > width ? text.slice(0, width) : text}`);
    this.#drawn = true;
  }

  /** Plain lines: the start of each phase, and each quarter of a phase with a known total. */
  #line(e: ProgressEstimate): void {
    if (this.#phase !== e.phase) {
      this.#phase = e.phase;
      this.#lastQuarter = -1;
      this.#out.note(`holdfast: ${progressLine(e, { bar: false })}`);
      return;
    }
    if (e.total === undefined || e.total === 0) return;
    const quarter = Math.floor((e.done / e.total) * 4);
    if (quarter > this.#lastQuarter && e.done > 0) {
      this.#lastQuarter = quarter;
      this.#out.note(`holdfast: ${progressLine(e, { bar: false })}`);
    }
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

/**
 * One progress line: `deleting [######------] 1,200/5,980 objects  480 objects/s  ETA 10s`;
 * without a total, `removing orphan files 120 objects  40 objects/s`. Rate and ETA appear
 * once known; a phase with nothing left says `done`.
 */
export function progressLine(e: ProgressEstimate, options: { bar: boolean }): string {
  const { label, unit } = PHASES[e.phase] ?? { label: e.phase, unit: "items" };
  const parts = [label];
  const known = e.total !== undefined;
  if (known && options.bar) parts.push(bar(e.done, e.total!));
  parts.push(known ? `${count(e.done)}/${count(e.total!)} ${unit}` : `${count(e.done)} ${unit}`);
  const line = [parts.join(" ")];
  if (e.ratePerSec !== undefined) line.push(`${formatRate(e.ratePerSec)} ${unit}/s`);
  if (e.left === 0) line.push("done");
  else if (e.etaMs !== undefined) line.push(`ETA ${formatDuration(e.etaMs)}`);
  return line.join("  ");
}

function bar(done: number, total: number): string {
  const filled =
    total > 0 ? Math.min(BAR_WIDTH, Math.floor((done / total) * BAR_WIDTH)) : BAR_WIDTH;
  return `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
}

/** `5,980`: thousands separated, so a count is read at a glance. */
function count(n: number): string {
  return n.toLocaleString("en-US");
}

function formatRate(rate: number): string {
  return rate >= 10 ? count(Math.round(rate)) : rate.toFixed(1);
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
