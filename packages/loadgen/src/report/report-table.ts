/**
 * The end-of-run table, in the shape of the published ones (users, mean/min/max latency, server
 * CPU), with our extra columns (percentiles, throughput, loss, generator CPU).
 */

import type { StepResult, SweepReport } from '../presets/runner.js';

/** An extra column of the view, blotter and order presets: header and the cell of a step (undefined: not shown). */
export interface ExtraColumn {
  head: string;
  cell(step: StepResult & Record<string, unknown>): number | null | undefined;
}

const dig = (o: unknown, path: string[]): unknown => path.reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), o);
const numberAt = (path: string[]) => (s: StepResult & Record<string, unknown>): number | null | undefined => {
  const v = dig(s, path);
  return typeof v === 'number' ? v : v === null ? null : undefined;
};

/** Extra columns shown when the steps carry them (p95, std dev, % over 500 ms, server RSS, load average). */
export const EXTRA_COLUMNS: readonly ExtraColumn[] = [
  { head: 'p95 ms', cell: numberAt(['latencyExtraMs', 'p95']) },
  { head: 'std dev ms', cell: numberAt(['latencyExtraMs', 'stdDev']) },
  { head: '% > 500 ms', cell: numberAt(['overMsPct', '500']) },
  { head: 'server RSS MiB', cell: (s) => (typeof s.serverRssBytes === 'number' ? Math.round(s.serverRssBytes / 1048576) : undefined) },
  { head: 'load avg', cell: numberAt(['loadAvg1']) },
];

/** The extra columns present in `steps` (a column shows when any step has a value for it). */
export function extraColumns(steps: readonly StepResult[]): ExtraColumn[] {
  return EXTRA_COLUMNS.filter((c) => steps.some((s) => c.cell(s as StepResult & Record<string, unknown>) !== undefined));
}

/** Name of the step column: `params.stepName` (view presets: requests/s, unique views, ...), else users. */
export function stepName(report: SweepReport): string {
  return typeof report.params.stepName === 'string' ? report.params.stepName : 'users';
}

const fmt = (v: number | null, digits = 3): string => (v === null ? 'n/a' : Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(digits));

/** Renders the report as a fixed-width text table (one line per step). */
export function renderTable(report: SweepReport, published?: Readonly<Record<number, number>>): string {
  const named = stepName(report);
  const extras = extraColumns(report.steps);
  const head = [...(named === 'users' ? [] : [named]), 'users', 'mean ms', 'min ms', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'delivered/s', 'expected/s', 'lost', 'out of order', 'server CPU %', 'gen CPU %'];
  head.push(...extras.map((c) => c.head));
  if (published) head.push('published mean ms');
  const rows = report.steps.map((s) => {
    const row = [
      ...(named === 'users' ? [] : [fmt(s.step)]),
      fmt(s.users), fmt(s.latencyMs.mean), fmt(s.latencyMs.min), fmt(s.latencyMs.p50), fmt(s.latencyMs.p99), fmt(s.latencyMs.p999), fmt(s.latencyMs.max),
      fmt(s.deliveredPerSec), fmt(s.expectedPerSec), fmt(s.lost), fmt(s.outOfOrder), fmt(s.serverCpuPct, 1), fmt(s.generatorCpuPct, 1),
    ];
    for (const c of extras) row.push(fmt(c.cell(s as StepResult & Record<string, unknown>) ?? null));
    if (published) row.push(published[s.step] === undefined ? '-' : String(published[s.step]));
    return row;
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(' | ')} |`;
  const sep = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  const table = [`${report.scenario} ${JSON.stringify(report.params)}`, line(head), sep, ...rows.map(line)].join('\n');
  return report.baseline ? `${table}\n\n${renderBaseline(report)}` : table;
}

/** Server CPU per delivered message, µs (null when the server's CPU is unknown or nothing arrived). */
export function serverMicrosPerMessage(s: StepResult): number | null {
  if (s.serverCpuPct === null || s.deliveredPerSec <= 0) return null;
  return Math.round(((s.serverCpuPct / 100) * 1e6 * 100) / s.deliveredPerSec) / 100;
}

const ratio = (a: number | null, b: number | null): number | null => (a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100);

/**
 * Ours beside the baseline of the same run, step by step: mean latency and server CPU per message
 * (orders: per acknowledged order), with the ratios.
 */
export function renderBaseline(report: SweepReport): string {
  const base = report.baseline!;
  const unit = stepName(report) === 'orders/s' ? 'order' : 'msg';
  const head = [stepName(report), 'mean ms', `${base.kind} mean ms`, 'mean ratio', `server µs/${unit}`, `${base.kind} µs/${unit}`, `CPU/${unit} ratio`, 'server CPU %', `${base.kind} CPU %`];
  const rows = report.steps.map((s) => {
    const b = base.steps.find((x) => x.step === s.step);
    const ours = serverMicrosPerMessage(s);
    const theirs = b ? serverMicrosPerMessage(b) : null;
    return [fmt(s.step), fmt(s.latencyMs.mean), fmt(b?.latencyMs.mean ?? null), fmt(ratio(s.latencyMs.mean, b?.latencyMs.mean ?? null), 2), fmt(ours, 2), fmt(theirs, 2), fmt(ratio(ours, theirs), 2), fmt(s.serverCpuPct, 1), fmt(b?.serverCpuPct ?? null, 1)];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(' | ')} |`;
  const sep = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [`beside the ${base.kind} baseline (${base.url}, same preset, same sitting)`, line(head), sep, ...rows.map(line)].join('\n');
}
