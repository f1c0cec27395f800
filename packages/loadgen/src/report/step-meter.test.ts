import { describe, expect, it } from 'vitest';
import { encodeHistogram, newLatencyHistogram, recordLatencyMs } from '../util/histogram.js';
import { renderTable } from './report-table.js';
import { latencyExtras, percentOver, stepRow, type WindowUsage } from './step-meter.js';

const usage: WindowUsage = { seconds: 10, serverCpuPct: 50, serverRssBytes: 200 * 1048576, serverIngestPerSec: 1000, generatorCpuPct: 20, loadAvg1: 1.5 };

describe('report rows', () => {
  it('summarises merged histograms with p95, std dev and % over a threshold', () => {
    const a = newLatencyHistogram();
    const b = newLatencyHistogram();
    for (let i = 1; i <= 90; i++) recordLatencyMs(a, 10); // 90 x 10 ms
    for (let i = 1; i <= 10; i++) recordLatencyMs(b, 1000); // 10 x 1 s
    const row = stepRow({
      step: 8.3, users: 100, expectedPerSec: 8.3, deliveredPerSec: 8.2, lost: 0, outOfOrder: 0,
      histograms: [encodeHistogram(a), encodeHistogram(b)], usage, overMs: 500, extra: { tiers: 1 },
    });
    expect(row.latencyMs.mean).toBeCloseTo(109, 0);
    expect(row.latencyMs.p50).toBeCloseTo(10, 1);
    expect(row.latencyMs.max).toBeCloseTo(1000, -1);
    expect(row.latencyExtraMs).toMatchObject({ count: 100 });
    expect((row.latencyExtraMs as { p95: number }).p95).toBeCloseTo(1000, -1);
    expect(row.overMsPct).toEqual({ '500': 10 });
    expect(row).toMatchObject({ step: 8.3, serverCpuPct: 50, generatorCpuPct: 20, serverRssBytes: 200 * 1048576, loadAvg1: 1.5, tiers: 1 });
    a.destroy();
    b.destroy();
  });

  it('an empty window gives zeros, not NaN', () => {
    const h = newLatencyHistogram();
    expect(latencyExtras(h)).toEqual({ p95: 0, stdDev: 0, count: 0 });
    expect(percentOver(h, 500)).toBe(0);
    const row = stepRow({ step: 1, users: 0, expectedPerSec: 1, deliveredPerSec: 0, lost: 1, outOfOrder: 0, histograms: [''], usage });
    expect(row.latencyMs).toEqual({ mean: 0, min: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 });
    h.destroy();
  });

  it('counts values just above the threshold and none just below it', () => {
    const h = newLatencyHistogram();
    for (let i = 0; i < 99; i++) recordLatencyMs(h, 499);
    recordLatencyMs(h, 502);
    expect(percentOver(h, 500)).toBe(1);
    h.destroy();
  });

  it('the table shows the swept value and the extra columns', () => {
    const row = stepRow({ step: 166.7, users: 3000, expectedPerSec: 166.7, deliveredPerSec: 160, lost: 0, outOfOrder: 0, histograms: [], usage, overMs: 500 });
    const text = renderTable({ scenario: 'finder-response', params: { stepName: 'requests/s' }, steps: [row] }, { 166.7: 70 });
    const [, head, , line] = text.split('\n') as [string, string, string, string];
    expect(head).toMatch(/requests\/s \| +users .*p95 ms .*% > 500 ms .*server RSS MiB .*published mean ms/);
    expect(line).toMatch(/166\.700 \| +3,000 .*\| +200 \|.*\| +70 \|$/);
  });
});
