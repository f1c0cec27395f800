/**
 * The charts' data: a rolling window of metrics samples (5 minutes at one per second), kept in
 * time order without duplicates, and the uPlot column arrays of each chart.
 */

import type { AdminMetricsSample } from '@tidewire/protocol';
import { formatMs } from '../shell/latency-view.js';

/** Window length, ms. */
export const WINDOW_MS = 5 * 60 * 1000;

/** Adds `incoming` samples (any order, duplicates by `at` ignored) and drops those older than WINDOW_MS before the newest. */
export function mergeSamples(current: readonly AdminMetricsSample[], incoming: readonly AdminMetricsSample[]): AdminMetricsSample[] {
  const byAt = new Map<number, AdminMetricsSample>();
  for (const s of current) byAt.set(s.at, s);
  for (const s of incoming) byAt.set(s.at, s);
  const all = [...byAt.values()].sort((a, b) => a.at - b.at);
  const newest = all.at(-1)?.at ?? 0;
  return all.filter((s) => s.at > newest - WINDOW_MS);
}

/** One chart: title, unit, and per series its label and how to read it from a sample. */
export interface ChartSpec {
  id: string;
  title: string;
  unit: string;
  /** Logarithmic y axis: a spike 1,000x the median leaves the median and p99 lines readable. */
  log?: boolean;
  /** `null`: nothing measured in the sample's interval (a gap in the line, a dash in the caption). */
  series: ReadonlyArray<{ label: string; value: (s: AdminMetricsSample) => number | null }>;
}

const MB = 1024 * 1024;

type Stats = AdminMetricsSample['latencyMs'];
type StatKey = 'mean' | 'p50' | 'p99' | 'max';

/** A statistic of an interval's samples, or null when the interval had none (not a 0 ms latency). */
const stat = (st: Stats, key: StatKey): number | null => (st.count > 0 ? st[key] : null);

/** The console's charts, in display order. */
export const CHARTS: readonly ChartSpec[] = [
  { id: 'latency', log: true, title: 'Latency: origin -> socket write', unit: 'ms', series: [
    { label: 'mean', value: (s) => stat(s.latencyMs, 'mean') },
    { label: 'p50', value: (s) => stat(s.latencyMs, 'p50') },
    { label: 'p99', value: (s) => stat(s.latencyMs, 'p99') },
    { label: 'max', value: (s) => stat(s.latencyMs, 'max') },
  ] },
  { id: 'client', log: true, title: 'Client-reported latency: heartbeat reports per interval, all sessions (origin -> receipt, paint)', unit: 'ms', series: [
    { label: 'mean', value: (s) => stat(s.clientLatencyMs, 'mean') },
    { label: 'p99', value: (s) => stat(s.clientLatencyMs, 'p99') },
    { label: 'max', value: (s) => stat(s.clientLatencyMs, 'max') },
    { label: 'paint', value: (s) => (s.clientLatencyMs.count > 0 ? s.clientPaintMeanMs : null) },
  ] },
  { id: 'views-orders', log: true, title: 'View updates and order acks', unit: 'ms', series: [
    { label: 'view mean', value: (s) => stat(s.viewUpdateMs, 'mean') },
    { label: 'view p99', value: (s) => stat(s.viewUpdateMs, 'p99') },
    { label: 'ack mean', value: (s) => stat(s.orderAckMs, 'mean') },
    { label: 'ack p99', value: (s) => stat(s.orderAckMs, 'p99') },
  ] },
  { id: 'messages', title: 'Messages per second', unit: 'msg/s', series: [
    { label: 'in', value: (s) => s.messagesInPerSec },
    { label: 'out', value: (s) => s.messagesOutPerSec },
    { label: 'conflated', value: (s) => s.conflatedPerSec },
    { label: 'dropped (slow)', value: (s) => s.droppedPerSec },
  ] },
  { id: 'cpu', title: 'Process CPU', unit: '% of a core', series: [{ label: 'cpu', value: (s) => s.cpuPercent }] },
  { id: 'memory', title: 'Memory', unit: 'MB', series: [
    { label: 'rss', value: (s) => Math.round((s.rssBytes / MB) * 10) / 10 },
    { label: 'heap', value: (s) => Math.round((s.heapUsedBytes / MB) * 10) / 10 },
  ] },
  { id: 'sessions', title: 'Sessions', unit: 'count', series: [
    { label: 'sessions', value: (s) => s.sessions },
    { label: 'connections', value: (s) => s.connections },
  ] },
  { id: 'loop', log: true, title: 'Event-loop lag (worst thread)', unit: 'ms', series: [
    { label: 'p99', value: (s) => stat(s.eventLoopLagMs, 'p99') },
    { label: 'max', value: (s) => stat(s.eventLoopLagMs, 'max') },
  ] },
];

/** Smallest value a log chart draws (a 0 ms latency would be minus infinity on a log axis). */
export const LOG_FLOOR = 0.001;

/**
 * uPlot data of a chart: x = seconds since epoch, then one column per series. On a log chart a
 * value not above 0 is drawn at LOG_FLOOR (no point has no place on a log axis). An interval
 * that measured nothing is null: uPlot leaves a gap instead of a drop to the floor.
 */
export function chartData(spec: ChartSpec, samples: readonly AdminMetricsSample[]): (number | null)[][] {
  const read = spec.log === true
    ? (v: number | null) => (v === null ? null : v > LOG_FLOOR ? v : LOG_FLOOR)
    : (v: number | null) => v;
  return [samples.map((s) => s.at / 1000), ...spec.series.map((series) => samples.map((s) => read(series.value(s))))];
}

/** A chart value for its caption: milliseconds as the latency pill shows them, others to 0.1 below 100 and whole with grouping above. */
export function formatChartValue(unit: string, v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '—';
  if (unit === 'ms') return formatMs(v);
  return Math.abs(v) < 100 ? String(Math.round(v * 10) / 10) : Math.round(v).toLocaleString('en-US');
}

/** The caption under a chart's title: each series' newest value, formatted, and the unit. */
export function chartCaption(spec: ChartSpec, last: AdminMetricsSample | undefined): string {
  const scale = `(${spec.unit}${spec.log === true ? ', log scale' : ''})`;
  if (last === undefined) return `no data yet ${scale}`;
  return `${spec.series.map((s) => `${s.label} ${formatChartValue(spec.unit, s.value(last))}`).join(' · ')} ${scale}`;
}
