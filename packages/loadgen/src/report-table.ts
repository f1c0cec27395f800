/**
 * The end-of-run table, in the shape of the published ones (users, mean/min/max latency, server
 * CPU), with our extra columns (percentiles, throughput, loss, generator CPU).
 */

import type { SweepReport } from './runner.js';

const fmt = (v: number | null, digits = 3): string => (v === null ? 'n/a' : Number.isInteger(v) ? v.toLocaleString('en-US') : v.toFixed(digits));

/** Renders the report as a fixed-width text table (one line per step). */
export function renderTable(report: SweepReport, published?: Readonly<Record<number, number>>): string {
  const head = ['users', 'mean ms', 'min ms', 'p50 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'delivered/s', 'expected/s', 'lost', 'out of order', 'server CPU %', 'gen CPU %'];
  if (published) head.push('published mean ms');
  const rows = report.steps.map((s) => {
    const row = [
      fmt(s.users), fmt(s.latencyMs.mean), fmt(s.latencyMs.min), fmt(s.latencyMs.p50), fmt(s.latencyMs.p99), fmt(s.latencyMs.p999), fmt(s.latencyMs.max),
      fmt(s.deliveredPerSec), fmt(s.expectedPerSec), fmt(s.lost), fmt(s.outOfOrder), fmt(s.serverCpuPct, 1), fmt(s.generatorCpuPct, 1),
    ];
    if (published) row.push(published[s.step] === undefined ? '-' : String(published[s.step]));
    return row;
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padStart(widths[i] as number)).join(' | ')} |`;
  const sep = `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`;
  return [`${report.scenario} ${JSON.stringify(report.params)}`, line(head), sep, ...rows.map(line)].join('\n');
}
