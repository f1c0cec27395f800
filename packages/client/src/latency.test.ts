import { describe, expect, it } from 'vitest';
import { LatencyTracker, LatencyWindow } from './latency.js';

describe('LatencyWindow', () => {
  it('is all zeros when empty', () => {
    expect(new LatencyWindow().stats()).toEqual({ samples: 0, meanMs: 0, p99Ms: 0, maxMs: 0 });
  });

  it('gives mean and max exactly and p99 within 5%', () => {
    const w = new LatencyWindow();
    for (let i = 1; i <= 1000; i++) w.add(i / 10); // 0.1 .. 100 ms
    const s = w.stats();
    expect(s.samples).toBe(1000);
    expect(s.meanMs).toBeCloseTo(50.05, 9);
    expect(s.maxMs).toBe(100);
    expect(s.p99Ms).toBeGreaterThanOrEqual(99);
    expect(s.p99Ms).toBeLessThanOrEqual(99 * 1.05);
  });

  it('keeps negative (clock-skewed) samples and ignores non-finite ones', () => {
    const w = new LatencyWindow();
    w.add(-2);
    w.add(Number.NaN);
    w.add(Infinity);
    expect(w.stats()).toEqual({ samples: 1, meanMs: -2, p99Ms: -2, maxMs: -2 });
  });
});

describe('LatencyTracker', () => {
  it('rotates periods, keeps the lifetime and reports paint means per period', () => {
    const t = new LatencyTracker();
    t.receipt(10);
    t.receipt(30);
    t.paint(40);
    expect(t.rotate()).toEqual({ samples: 2, meanMs: 20, p99Ms: 30, maxMs: 30, paintMeanMs: 40 });
    t.receipt(5);
    const snap = t.snapshot();
    expect(snap.period.samples).toBe(2);
    expect(snap.current).toMatchObject({ samples: 1, maxMs: 5 });
    expect(snap.lifetime).toMatchObject({ samples: 3, maxMs: 30 });
    expect(snap.paintMeanMs).toBe(40);
    expect(t.rotate()).toEqual({ samples: 1, meanMs: 5, p99Ms: 5, maxMs: 5 });
    expect(t.snapshot().paintMeanMs).toBeUndefined();
  });

  it('keeps the last report with samples as `reported` (the server ignores empty ones)', () => {
    const t = new LatencyTracker();
    expect(t.snapshot().reported.samples).toBe(0);
    t.receipt(7);
    t.rotate();
    t.rotate();
    const snap = t.snapshot();
    expect(snap.period.samples).toBe(0);
    expect(snap.reported).toEqual({ samples: 1, meanMs: 7, p99Ms: 7, maxMs: 7 });
  });
});
