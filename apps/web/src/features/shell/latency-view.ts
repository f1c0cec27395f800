/** What the latency indicator shows, from the client's latency snapshot. Pure: tested beside. */

import type { LatencySnapshot, LatencyStats } from '@tidewire/client';

/** Indicator text parts and tooltip. */
export interface LatencyView {
  /** Mean origin -> receipt latency, e.g. `1.4`, or `—` without samples. */
  mean: string;
  /** 99th percentile, e.g. `3.2`, or `—`. */
  p99: string;
  /** `ok` under 50 ms p99, `warn` under 250 ms, else `bad`; `idle` without samples. */
  tone: 'ok' | 'warn' | 'bad' | 'idle';
  /** Longer explanation: period, lifetime and paint figures. */
  title: string;
}

/** Milliseconds with precision that suits their size: `0.42`, `3.1`, `120`. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  const abs = Math.abs(ms);
  if (abs < 1) return ms.toFixed(2);
  if (abs < 100) return ms.toFixed(1);
  return ms.toFixed(0);
}

/** The stats the indicator shows: the last completed heartbeat period, else the one in progress. */
function shown(snapshot: LatencySnapshot): LatencyStats {
  return snapshot.period.samples > 0 ? snapshot.period : snapshot.current;
}

/** Indicator content for a snapshot (undefined while logged out). */
export function latencyView(snapshot: LatencySnapshot | undefined): LatencyView {
  if (snapshot === undefined) return { mean: '—', p99: '—', tone: 'idle', title: 'Not connected' };
  const stats = shown(snapshot);
  const life = snapshot.lifetime;
  const lines = [
    `Origin → receipt over ${stats.samples} updates: mean ${formatMs(stats.meanMs)} ms, p99 ${formatMs(stats.p99Ms)} ms, max ${formatMs(stats.maxMs)} ms`,
    `Since login: ${life.samples} updates, mean ${formatMs(life.meanMs)} ms, p99 ${formatMs(life.p99Ms)} ms`,
  ];
  if (snapshot.paintMeanMs !== undefined) lines.push(`Origin → on screen: mean ${formatMs(snapshot.paintMeanMs)} ms`);
  if (stats.samples === 0) return { mean: '—', p99: '—', tone: 'idle', title: lines.join('\n') };
  const tone = stats.p99Ms < 50 ? 'ok' : stats.p99Ms < 250 ? 'warn' : 'bad';
  return { mean: formatMs(stats.meanMs), p99: formatMs(stats.p99Ms), tone, title: lines.join('\n') };
}
