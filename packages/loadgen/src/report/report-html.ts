/**
 * The `--html` report: one self-contained page (inline CSS and SVG, no scripts, no network
 * assets) with the parameters, the latency-vs-step and CPU-vs-step charts, and the table.
 */

import { extraColumns, stepName } from './report-table.js';
import type { StepResult, SweepReport } from '../presets/runner.js';

/** One line of a chart; `null` values leave a gap. */
interface Series {
  name: string;
  color: string;
  values: Array<number | null>;
}

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

/** An SVG line chart of `series` over the step labels (x evenly spaced, y linear from 0). */
export function lineChart(title: string, yUnit: string, xLabels: string[], series: Series[], xName = 'users'): string {
  const W = 640;
  const H = 300;
  const L = 60;
  const R = 20;
  const T = 36;
  const B = 50;
  const all = series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v)));
  const yMax = niceMax(Math.max(0, ...all));
  const x = (i: number) => L + (xLabels.length === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (xLabels.length - 1));
  const y = (v: number) => T + (H - T - B) * (1 - v / yMax);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">`);
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="15" font-weight="600">${esc(title)}</text>`);
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4;
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`);
    parts.push(`<text x="${L - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${esc(String(Math.round(v * 1000) / 1000))}</text>`);
  }
  parts.push(`<text x="14" y="${(T + H - B) / 2}" font-size="11" transform="rotate(-90 14 ${(T + H - B) / 2})" text-anchor="middle">${esc(yUnit)}</text>`);
  xLabels.forEach((label, i) => {
    parts.push(`<text x="${x(i)}" y="${H - B + 18}" text-anchor="middle" font-size="11">${esc(label)}</text>`);
  });
  parts.push(`<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle" font-size="11">${esc(xName)}</text>`);
  series.forEach((s, si) => {
    let d = '';
    s.values.forEach((v, i) => {
      if (v === null || !Number.isFinite(v)) return;
      d += `${d === '' ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      parts.push(`<circle cx="${x(i).toFixed(1)}" cy="${y(v).toFixed(1)}" r="3" fill="${s.color}"><title>${esc(`${s.name} ${xLabels[i]}: ${v}`)}</title></circle>`);
    });
    if (d) parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    parts.push(`<rect x="${L + 10 + si * 120}" y="${T - 8}" width="10" height="10" fill="${s.color}"/>`);
    parts.push(`<text x="${L + 24 + si * 120}" y="${T + 1}" font-size="11">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

function table(steps: StepResult[], named: string, published?: Readonly<Record<number, number>>): string {
  const extras = extraColumns(steps);
  const head = [named === 'users' ? 'step' : named, 'users', 'mean ms', 'min ms', 'p50 ms', 'p90 ms', 'p99 ms', 'p99.9 ms', 'max ms', 'delivered/s', 'expected/s', 'lost', 'out of order', 'server CPU %', 'generator CPU %'];
  head.push(...extras.map((c) => c.head));
  if (published) head.push('published mean ms');
  const rows = steps.map((s) => {
    const cells: Array<string | number> = [
      s.step, s.users, s.latencyMs.mean, s.latencyMs.min, s.latencyMs.p50, s.latencyMs.p90, s.latencyMs.p99, s.latencyMs.p999, s.latencyMs.max,
      s.deliveredPerSec, s.expectedPerSec, s.lost, s.outOfOrder, s.serverCpuPct ?? 'n/a', s.generatorCpuPct,
    ];
    for (const c of extras) cells.push(c.cell(s as StepResult & Record<string, unknown>) ?? 'n/a');
    if (published) cells.push(published[s.step] ?? '-');
    return `<tr>${cells.map((c) => `<td>${esc(String(c))}</td>`).join('')}</tr>`;
  });
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** Renders the whole report page. `generatedAt` is shown as is (ISO time). */
export function renderHtml(report: SweepReport, generatedAt: string, published?: Readonly<Record<number, number>>): string {
  const labels = report.steps.map((s) => s.step.toLocaleString('en-US'));
  const named = stepName(report);
  // mean and tail apart: a 30 ms max would flatten a 0.4 ms mean into the axis
  const latency = lineChart(`Mean latency vs ${named}`, 'ms', labels, [
    { name: 'mean', color: '#1f77b4', values: report.steps.map((s) => s.latencyMs.mean) },
    { name: 'p50', color: '#17becf', values: report.steps.map((s) => s.latencyMs.p50) },
    ...(published ? [{ name: 'published mean', color: '#7f7f7f', values: report.steps.map((s) => published[s.step] ?? null) }] : []),
  ], named);
  const tail = lineChart(`Latency tail vs ${named}`, 'ms', labels, [
    { name: 'p99', color: '#ff7f0e', values: report.steps.map((s) => s.latencyMs.p99) },
    { name: 'p99.9', color: '#8c564b', values: report.steps.map((s) => s.latencyMs.p999) },
    { name: 'max', color: '#d62728', values: report.steps.map((s) => s.latencyMs.max) },
  ], named);
  const cpu = lineChart(`CPU vs ${named} (% of one core)`, '% of one core', labels, [
    {
      name: report.steps.every((s) => s.serverCpuPct === null) ? 'server (n/a)' : 'server',
      color: '#2ca02c',
      values: report.steps.map((s) => s.serverCpuPct),
    },
    { name: 'generator', color: '#9467bd', values: report.steps.map((s) => s.generatorCpuPct) },
  ], named);
  const params = Object.entries(report.params)
    .map(([k, v]) => `<tr><th>${esc(k)}</th><td>${esc(typeof v === 'string' ? v : JSON.stringify(v))}</td></tr>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tidewire load report: ${esc(report.scenario)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
table{border-collapse:collapse;margin:12px 0}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
th{background:#f3f3f3}
.params th,.params td{text-align:left}
.charts{display:flex;flex-wrap:wrap;gap:16px}
</style></head><body>
<h1>Tidewire load report: ${esc(report.scenario)}</h1>
<p>Generated ${esc(generatedAt)}. ${typeof report.params.latency === 'string' ? `Latency: ${esc(report.params.latency)}.` : "Latency is end to end: the source's send time (<code>ts</code>) to the simulated client's receipt, on one clock."}
CPU is % of one core (200% = both cores of a 2-core machine); the server's comes from its <code>/api/health</code>.</p>
<table class="params"><tbody>${params}</tbody></table>
<div class="charts">${latency}${tail}${cpu}</div>
${table(report.steps, named, published)}
</body></html>
`;
}
