import type { AdminMetricsSample } from '@tidewire/protocol';
import { describe, expect, it } from 'vitest';
import { CHARTS, LOG_FLOOR, WINDOW_MS, chartCaption, chartData, formatChartValue, mergeSamples } from './metrics-window.js';

const stats = { count: 1, mean: 1, p50: 1, p99: 2, max: 3 };
function sample(at: number, cpuPercent = 10): AdminMetricsSample {
  return {
    at, intervalMs: 1000, latencyMs: stats, batchSize: stats, viewUpdateMs: stats, orderAckMs: stats, clientLatencyMs: stats, clientPaintMeanMs: 4,
    messagesInPerSec: 5, messagesOutPerSec: 7, bytesInPerSec: 0, bytesOutPerSec: 0, framesOutPerSec: 0, conflatedPerSec: 0, droppedPerSec: 0,
    totals: { messagesIn: 0, messagesOut: 0, bytesIn: 0, bytesOut: 0, framesOut: 0, conflatedUpdates: 0, droppedUpdates: 0, slowConsumerCloses: 0, publishesRejected: 0, kicks: 0, ordersAccepted: 0, ordersRejected: 0 },
    sessions: 2, connections: 3, subscriptions: 0, records: 0, containers: 0, views: 0, viewWindows: 0, ordersOpen: 0, cpuPercent, rssBytes: 100 * 1024 * 1024, heapUsedBytes: 10 * 1024 * 1024,
    eventLoopLagMs: stats, batching: { burstMinMs: 100, burstMaxMs: 0, burstIncrementMs: 50, throttleMs: 0 },
  };
}

describe('mergeSamples', () => {
  it('orders by time, replaces duplicates, keeps five minutes before the newest', () => {
    const merged = mergeSamples([sample(3000), sample(1000)], [sample(2000), sample(3000, 99), sample(3000 + WINDOW_MS)]);
    expect(merged.map((s) => s.at)).toEqual([3000 + WINDOW_MS]);
    const kept = mergeSamples([sample(3000), sample(1000)], [sample(2000), sample(3000, 99)]);
    expect(kept.map((s) => [s.at, s.cpuPercent])).toEqual([[1000, 10], [2000, 10], [3000, 99]]);
    expect(mergeSamples([], [])).toEqual([]);
  });
});

describe('chartData', () => {
  it('gives uPlot columns: seconds, then one column per series', () => {
    const latency = CHARTS.find((c) => c.id === 'latency')!;
    expect(chartData(latency, [sample(1000), sample(2000)])).toEqual([[1, 2], [1, 1], [1, 1], [2, 2], [3, 3]]);
    const memory = CHARTS.find((c) => c.id === 'memory')!;
    expect(chartData(memory, [sample(1000)])).toEqual([[1], [100], [10]]);
  });

  it('draws a value not above 0 at the floor of a log chart, and as is on a linear one', () => {
    const latency = CHARTS.find((c) => c.id === 'latency')!;
    expect(latency.log).toBe(true);
    const zero = { ...sample(1000), latencyMs: { count: 4, mean: 0, p50: 0, p99: 0, max: 0 } };
    expect(chartData(latency, [zero])).toEqual([[1], [LOG_FLOOR], [LOG_FLOOR], [LOG_FLOOR], [LOG_FLOOR]]);
    const cpu = CHARTS.find((c) => c.id === 'cpu')!;
    expect(cpu.log).toBeUndefined();
    expect(chartData(cpu, [sample(1000, 0)])).toEqual([[1], [0]]);
  });
});

describe('chartCaption', () => {
  it('formats milliseconds as the latency pill does, and other units to a tenth or whole with grouping', () => {
    const client = CHARTS.find((c) => c.id === 'client')!;
    const s = { ...sample(1000), clientLatencyMs: { count: 9, mean: 966.568, p50: 900, p99: 1507.294189453125, max: 1507.294189453125 }, clientPaintMeanMs: 0.4213 };
    expect(chartCaption(client, s)).toBe('mean 967 · p99 1507 · max 1507 · paint 0.42 (ms, log scale)');
    expect(chartCaption(client, undefined)).toBe('no data yet (ms, log scale)');
    expect(formatChartValue('msg/s', 16474.25)).toBe('16,474');
    expect(formatChartValue('% of a core', 32.349)).toBe('32.3');
    expect(formatChartValue('MB', Number.NaN)).toBe('—');
  });

  it('leaves an interval that measured nothing out: a gap in the line, a dash in the caption', () => {
    const client = CHARTS.find((c) => c.id === 'client')!;
    const none = { ...sample(2000), clientLatencyMs: { count: 0, mean: 0, p50: 0, p99: 0, max: 0 } };
    expect(chartData(client, [sample(1000), none])).toEqual([[1, 2], [1, null], [2, null], [3, null], [4, null]]);
    expect(chartCaption(client, none)).toBe('mean — · p99 — · max — · paint — (ms, log scale)');
    const loop = CHARTS.find((c) => c.id === 'loop')!;
    expect(chartData(loop, [{ ...sample(1000), eventLoopLagMs: { count: 0, mean: 0, p50: 0, p99: 0, max: 0 } }])).toEqual([[1], [null], [null]]);
  });
});
