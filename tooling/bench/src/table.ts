/**
 * The one table printer of the performance record: every section prints through it, so a
 * run reads as a sequence of aligned tables. Other bench files (e.g. lance.ts) may call it.
 */
export interface Table {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
  /** Lines printed under the table (sources, prices used, caveats). */
  readonly notes?: readonly string[];
}

/** Renders a table: first column left-aligned, the rest right-aligned. */
export function renderTable(table: Table): string {
  const cells = [table.columns, ...table.rows].map((row) => row.map((c) => String(c)));
  const widths = table.columns.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (row: readonly string[]) =>
    row
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [
    `## ${table.title}`,
    line(cells[0]!),
    rule,
    ...cells.slice(1).map(line),
    ...(table.notes ?? []).map((n) => `  ${n}`),
    "",
  ].join("\n");
}

export function printTable(table: Table): void {
  process.stdout.write(`${renderTable(table)}\n`);
}

/** Minimum and median of repeated measurements. */
export function minMedian(values: readonly number[]): { min: number; median: number } {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return { min: Number.NaN, median: Number.NaN };
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median };
}

/** `min / median` of a series, each with `digits` decimals. */
export function fmtMinMedian(values: readonly number[], digits = 0): string {
  const { min, median } = minMedian(values);
  return `${min.toFixed(digits)} / ${median.toFixed(digits)}`;
}

export function ratio(a: number, b: number): string {
  return b === 0 ? "-" : `${(a / b).toFixed(3)}x`;
}
