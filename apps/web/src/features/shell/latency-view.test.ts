import type { LatencySnapshot } from '@tidewire/client';
import { describe, expect, it } from 'vitest';
import { formatMs, latencyView } from './latency-view.js';

const stats = (samples: number, meanMs: number, p99Ms: number) => ({ samples, meanMs, p99Ms, maxMs: p99Ms * 2 });

describe('latencyView', () => {
  it('shows the last report, the figures the admin sessions table shows', () => {
    const snapshot: LatencySnapshot = { period: stats(0, 0, 0), reported: stats(40, 1.234, 3.9), current: stats(3, 9, 9), lifetime: stats(100, 2, 5), paintMeanMs: 12.5 };
    const view = latencyView(snapshot);
    expect(view).toMatchObject({ mean: '1.2', p99: '3.9', tone: 'ok' });
    expect(view.title).toContain('over 40 updates');
    expect(view.title).toContain('Admin › Sessions');
    expect(view.title).toContain('on screen: mean 12.5 ms');
  });
  it('shows dashes before the first report, whatever the period in progress holds', () => {
    expect(latencyView({ period: stats(0, 0, 0), reported: stats(0, 0, 0), current: stats(5, 80, 120), lifetime: stats(5, 80, 120) })).toMatchObject({ mean: '—', p99: '—', tone: 'idle' });
    expect(latencyView({ period: stats(5, 80, 120), reported: stats(5, 80, 120), current: stats(0, 0, 0), lifetime: stats(5, 80, 120) })).toMatchObject({ mean: '80.0', p99: '120', tone: 'warn' });
    expect(latencyView(undefined)).toMatchObject({ mean: '—', p99: '—', tone: 'idle' });
  });
  it('marks slow p99 as bad', () => {
    expect(latencyView({ period: stats(5, 200, 900), reported: stats(5, 200, 900), current: stats(0, 0, 0), lifetime: stats(5, 200, 900) }).tone).toBe('bad');
  });
  it('formats milliseconds by magnitude', () => {
    expect(formatMs(0.4219)).toBe('0.42');
    expect(formatMs(12.34)).toBe('12.3');
    expect(formatMs(1234.5)).toBe('1235');
    expect(formatMs(Number.NaN)).toBe('—');
  });
});
