import { isHoldfastError } from "@holdfast/conditional-store";
import { exitCodeFor, INTERNAL_KIND } from "./exit-codes.js";

/** Where the CLI writes; injected so tests can capture output without a child process. */
export interface CliIo {
  readonly stdout: WritableLike;
  readonly stderr: WritableLike;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export interface WritableLike {
  write(chunk: string): unknown;
  readonly isTTY?: boolean | undefined;
  readonly columns?: number | undefined;
}

/** The `error` object of every failed `--json` answer. */
export interface JsonError {
  kind: string;
  message: string;
  hint?: string | undefined;
  operation?: string | undefined;
  key?: string | undefined;
  code?: string | undefined;
  status?: number | undefined;
}

/**
 * Human or JSON output for one command. In JSON mode stdout carries exactly one JSON
 * document (or, for long-running commands, one JSON object per line) and nothing else.
 */
export class Output {
  readonly json: boolean;
  readonly color: boolean;
  /** Progress and chatter go to stderr so stdout stays the command's answer. */
  readonly progressTty: boolean;

  constructor(
    readonly io: CliIo,
    options: { json: boolean },
  ) {
    this.json = options.json;
    this.color = shouldColor(io.stdout, io.env);
    // The bar goes to stderr, and only when both streams are a terminal: an answer
    // redirected to a file is a script's run, not a person watching.
    this.progressTty =
      io.stderr.isTTY === true && io.stdout.isTTY === true && io.env.TERM !== "dumb";
  }

  /** Writes a line of human output to stdout (suppressed in JSON mode). */
  line(text = ""): void {
    if (!this.json) this.io.stdout.write(`${text}\n`);
  }

  /** Writes a line of human progress to stderr (suppressed in JSON mode). */
  note(text: string): void {
    if (!this.json) this.io.stderr.write(`${text}\n`);
  }

  /** Writes a JSON document (one line) to stdout. */
  emit(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** In JSON mode, prints the command's answer `{ ok: true, command, ...data }`. */
  result(command: string, data: Record<string, unknown>): void {
    if (this.json) this.emit({ ok: true, command, ...data });
  }

  /** Prints an error: one clear line plus a hint, or the typed JSON shape. */
  error(command: string, error: unknown): number {
    const code = exitCodeFor(error);
    const shape = errorShape(error);
    shape.hint ??= CODE_HINT[shape.code ?? ""] ?? FALLBACK_HINT[shape.kind]?.(command);
    if (this.json) {
      this.emit({ ok: false, command, error: shape, exitCode: code });
    } else {
      this.io.stderr.write(`${this.paint("red", "holdfast: error:")} ${shape.message}\n`);
      if (shape.hint) this.io.stderr.write(`${this.paint("dim", "hint:")} ${shape.hint}\n`);
    }
    return code;
  }

  paint(style: Style, text: string): string {
    return this.color ? `${STYLES[style]}${text}\x1b[0m` : text;
  }

  /** Renders rows as an aligned text table (human mode). */
  table(headers: readonly string[], rows: readonly (readonly string[])[]): void {
    if (this.json) return;
    for (const line of renderTable(headers, rows)) this.line(line);
  }
}

/** Hints for local filesystem refusals, which the generic "refused" hint would misdirect. */
const CODE_HINT: Record<string, string> = {
  EROFS: "the filesystem is mounted read-only: remount it writable (nothing was changed)",
  EACCES: "this user may not write there: check the directory's owner and permissions",
  EPERM: "the operating system refused the operation: check permissions and file attributes",
  ENOSPC:
    "the disk is full: free space, then run holdfast recover <url> if a cleanup was interrupted",
};

/** A hint for errors raised without one, so every error line comes with a next step. */
const FALLBACK_HINT: Record<string, (command: string) => string> = {
  "invalid-input": (command) => `run: holdfast ${command} --help`,
  conflict: () =>
    "someone else changed it first: check the current state (holdfast status <url>) and retry",
  "in-flight": () => "another write to the same object is in flight: retry in a moment",
  "not-found": () =>
    "check the URL and the names and versions (holdfast versions, tag list, branch list)",
  refused: () =>
    "the store refused the request before applying it: check the URL and that the bucket or container exists",
  auth: () => "check the credentials in the environment (never put them in the URL)",
  unsupported: () => "run holdfast doctor <url> to see what this store enforces",
  ambiguous: () => "the outcome is unknown: run holdfast recover <url> before retrying",
  unresolved: () => "the outcome is unknown: run holdfast recover <url> before retrying",
  aborted: () => "interrupted: run holdfast recover <url> to finish or undo interrupted work",
};

type Style = "red" | "green" | "yellow" | "cyan" | "bold" | "dim";
const STYLES: Record<Style, string> = {
  red: "\x1b[31m",
  green: "\x1b[32m",
  yellow: "\x1b[33m",
  cyan: "\x1b[36m",
  bold: "\x1b[1m",
  dim: "\x1b[2m",
};

/** Colour only on a TTY, never with NO_COLOR set (https://no-color.org) or TERM=dumb. */
export function shouldColor(stream: WritableLike, env: CliIo["env"]): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/** The JSON error shape: typed kind first, message, hint, and the structured fields. */
export function errorShape(error: unknown): JsonError {
  if (isHoldfastError(error)) {
    return stripUndefined({
      kind: error.kind,
      message: error.message,
      hint: error.hint,
      operation: error.operation,
      key: error.key,
      code: error.code,
      status: error.status,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    kind: INTERNAL_KIND,
    message,
    hint: "this looks like a bug in holdfast; please report it with the command you ran",
  };
}

export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
): string[] {
  const widths = headers.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => visibleLength(r[i] ?? ""))),
  );
  const fmt = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat(widths[i]! - visibleLength(c))))
      .join("  ")
      .trimEnd();
  return [fmt(headers), fmt(widths.map((w) => "-".repeat(w))), ...rows.map(fmt)];
}

// --- utils ---

function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes
  return text.replace(/\x1b\[[0-9;]*m/g, "").length;
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
