/** What the latency indicator shows, from the client's latency snapshot. Pure: tested beside. */

import type { LatencySnapshot } from '@tidewire/client';
import { plural } from './plural.js';

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

/**
 * Indicator content for a snapshot (undefined while logged out): the client's last heartbeat
 * report with samples (`reported`), the very figures the server keeps for this session and the
 * admin console's sessions table shows, in the same format (formatMs). Dashes until the first
 * report (one heartbeat period after login).
 */
export function latencyView(snapshot: LatencySnapshot | undefined): LatencyView {
  if (snapshot === undefined) return { mean: '—', p99: '—', tone: 'idle', title: 'Not connected' };
  const stats = snapshot.reported;
  const life = snapshot.lifetime;
  const lines = [
    stats.samples === 0
      ? 'Origin → receipt: no heartbeat report yet (one per heartbeat period)'
      : `Origin → receipt, last heartbeat report (as Admin › Sessions shows it) over ${plural(stats.samples, 'update')}: mean ${formatMs(stats.meanMs)} ms, p99 ${formatMs(stats.p99Ms)} ms, max ${formatMs(stats.maxMs)} ms`,
    `Since login: ${plural(life.samples, 'update')}, mean ${formatMs(life.meanMs)} ms, p99 ${formatMs(life.p99Ms)} ms`,
  ];
  if (snapshot.paintMeanMs !== undefined) lines.push(`Origin → on screen: mean ${formatMs(snapshot.paintMeanMs)} ms`);
  if (stats.samples === 0) return { mean: '—', p99: '—', tone: 'idle', title: lines.join('\n') };
  const tone = stats.p99Ms < 50 ? 'ok' : stats.p99Ms < 250 ? 'warn' : 'bad';
  return { mean: formatMs(stats.meanMs), p99: formatMs(stats.p99Ms), tone, title: lines.join('\n') };
}
