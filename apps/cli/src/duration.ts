import { holdfastError } from "@holdfast/conditional-store";

const UNIT_MS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

type Unit = keyof typeof UNIT_MS;

/** Longest duration accepted anywhere (10 years): larger values are almost always a typo. */
export const MAX_DURATION_MS = 10 * 365 * UNIT_MS.d;

const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;

/**
 * Parses a human duration such as `90s`, `15m`, `7d`, `1h30m` or `250ms` into milliseconds.
 * A bare number other than 0 is refused (is `60` seconds or minutes?), so a typo never becomes a TTL
 * or a retention age: throws `invalid-input` before anything is written (docs/guarantees.md, invariant 6).
 */
export function parseDuration(text: string, option = "duration"): number {
  const fail = (why: string) =>
    holdfastError("invalid-input", "parse", `invalid ${option} ${JSON.stringify(text)}: ${why}`, {
      hint: "use a number with a unit: 250ms, 90s, 15m, 2h, 7d, 1w (or combined, like 1h30m)",
    });
  const input = text.trim();
  if (input === "") throw fail("empty");
  // Zero needs no unit; any other bare number is ambiguous (seconds? minutes?).
  if (/^0+$/.test(input)) return 0;
  if (/^\d+(\.\d+)?$/.test(input)) throw fail("missing a unit");
  let total = 0;
  let at = 0;
  const seen = new Set<string>();
  while (at < input.length) {
    PART.lastIndex = at;
    const match = PART.exec(input);
    if (!match) throw fail(`unexpected ${JSON.stringify(input.slice(at))}`);
    const unit = match[2] as Unit;
    if (seen.has(unit)) throw fail(`unit ${unit} given twice`);
    seen.add(unit);
    total += Number(match[1]) * UNIT_MS[unit];
    at = PART.lastIndex;
  }
  if (!Number.isFinite(total) || total > MAX_DURATION_MS) throw fail("longer than 10 years");
  const ms = Math.round(total);
  if (ms !== total) throw fail("finer than a millisecond");
  return ms;
}

/** Formats milliseconds as a short human duration (`1h 30m`, `2.5s`, `120ms`). */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(ms < 10_000 ? 2 : 1))}s`;
  const parts: string[] = [];
  let rest = Math.round(ms / 1000);
  for (const [unit, size] of [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join(" ");
}

/** Formats a byte count with binary units (`1.5 MiB`). */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 2 : 1)} ${units[unit]}`;
}
