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

/**
 * Shows progress on stderr: a live bar on a terminal (cli-progress), plain lines when
 * stderr is not a TTY (logs, CI), nothing in `--json` mode. stdout stays the answer.
 */
export class ProgressView {
  readonly #out: Output;
  #bar: cliProgress.SingleBar | undefined;
  #phase: string | undefined;
  #lastQuarter = -1;

  constructor(out: Output) {
    this.#out = out;
  }

  update(event: ProgressEvent): void {
    if (this.#out.json) return;
    const label = PHASE_LABEL[event.phase] ?? event.phase;
    const known = event.total !== undefined && event.total > 0;
    if (this.#out.progressTty) {
      if (this.#phase !== event.phase) {
        this.#bar?.stop();
        this.#bar = new cliProgress.SingleBar(
          {
            format: `{label} ${known ? "[{bar}] {value}/{total}" : "{value}"}`,
            stream: process.stderr,
            hideCursor: true,
            clearOnComplete: false,
            barsize: 30,
          },
          cliProgress.Presets.shades_classic,
        );
        this.#bar.start(known ? event.total! : 0, event.done, { label });
        this.#phase = event.phase;
      } else {
        if (known) this.#bar?.setTotal(event.total!);
        this.#bar?.update(event.done, { label });
      }
      return;
    }
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
        this.#out.note(`holdfast: ${event.phase} ${event.done}/${event.total}`);
      }
    }
  }

  stop(): void {
    this.#bar?.stop();
    this.#bar = undefined;
  }
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
