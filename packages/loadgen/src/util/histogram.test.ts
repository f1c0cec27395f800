import { describe, expect, it } from 'vitest';
import { encodeHistogram, mergeEncoded, newLatencyHistogram, recordLatencyMs, summarizeMs } from './histogram.js';

describe('latency histograms', () => {
  it('merging encoded histograms equals recording everything in one', () => {
    const parts = [newLatencyHistogram(), newLatencyHistogram(), newLatencyHistogram()];
    const all = newLatencyHistogram();
    for (let i = 0; i < 30_000; i++) {
      const ms = ((i * 7919) % 5000) / 1000 + (i % 97 === 0 ? 40 : 0); // 0..5 ms, a tail at 40 ms
      recordLatencyMs(parts[i % 3]!, ms);
      recordLatencyMs(all, ms);
    }
    const merged = newLatencyHistogram();
    for (const p of parts) mergeEncoded(merged, encodeHistogram(p));
    expect(merged.totalCount).toBe(30_000);
    expect(summarizeMs(merged)).toEqual(summarizeMs(all));
    const s = summarizeMs(merged);
    expect(s.min).toBe(0);
    expect(s.p50).toBeGreaterThan(2);
    expect(s.p50).toBeLessThan(3);
    expect(s.p99).toBeGreaterThan(40);
    expect(s.max).toBeGreaterThanOrEqual(44.9);
  });

  it('an empty histogram encodes to "" and merges as nothing; its summary is all zero', () => {
    const h = newLatencyHistogram();
    expect(encodeHistogram(h)).toBe('');
    mergeEncoded(h, '');
    expect(summarizeMs(h)).toEqual({ mean: 0, min: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 });
  });

  it('clamps negative latencies to 0 and keeps µs precision', () => {
    const h = newLatencyHistogram();
    recordLatencyMs(h, -3);
    recordLatencyMs(h, 0.25);
    const s = summarizeMs(h);
    expect(s.min).toBe(0);
    expect(s.max).toBe(0.25);
  });
});
