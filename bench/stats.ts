// Small statistics and formatting helpers for the benchmarks. Times are in milliseconds.

export interface Summary {
  n: number;
  median: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Linear-interpolated quantile of an ascending-sorted array (q in [0, 1]). */
function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (pos - lo);
}

export function quantile(xs: readonly number[], q: number): number {
  return quantileSorted([...xs].sort((a, b) => a - b), q);
}

export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

export function summarize(xs: readonly number[]): Summary {
  const s = [...xs].sort((a, b) => a - b);
  const sum = s.reduce((a, b) => a + b, 0);
  return {
    n: s.length,
    median: quantileSorted(s, 0.5),
    p90: quantileSorted(s, 0.9),
    p99: quantileSorted(s, 0.99),
    mean: s.length ? sum / s.length : Number.NaN,
    min: s.length ? s[0]! : Number.NaN,
    max: s.length ? s[s.length - 1]! : Number.NaN,
  };
}

/** Median of per-pair ratios a[i] / b[i] (pairs measured back to back). */
export function pairedRatioMedian(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  const r: number[] = [];
  for (let i = 0; i < n; i++) if (b[i]! > 0) r.push(a[i]! / b[i]!);
  return median(r);
}

/** Milliseconds since `t0` (from process.hrtime.bigint()). */
export function msSince(t0: bigint): number {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export function round(x: number, digits = 3): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Rounds every number in a Summary, for JSON output. */
export function roundSummary(s: Summary, digits = 3): Summary {
  return {
    n: s.n,
    median: round(s.median, digits),
    p90: round(s.p90, digits),
    p99: round(s.p99, digits),
    mean: round(s.mean, digits),
    min: round(s.min, digits),
    max: round(s.max, digits),
  };
}

export function fmtMs(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x < 1) return `${x.toFixed(3)} ms`;
  if (x < 100) return `${x.toFixed(2)} ms`;
  return `${x.toFixed(1)} ms`;
}

export function fmtRatio(x: number): string {
  return Number.isFinite(x) ? `${x.toFixed(2)}x` : String(x);
}

/** A plain text table: first row is the header; columns are left-aligned, numbers right-aligned. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  const numeric = (c: string) => /^[-+]?[\d.]+( ?(ms|x|MiB\/s|MiB|KiB|%))?$/.test(c);
  const line = (r: readonly string[]) =>
    r.map((c, i) => (numeric(c) && i > 0 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of rows.slice(1)) out.push(line(r));
  return out.join('\n');
}

export const verdict = (pass: boolean): 'PASS' | 'MISS' => (pass ? 'PASS' : 'MISS');
