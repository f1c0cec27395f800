import { afterEach, describe, expect, it } from 'vitest';
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import { BATCH_BUDGET_FRAMES_PER_SEC, MAX_SNAPSHOT_SESSIONS, SAMPLE_BUDGET_PER_SEC, SAMPLE_RECORD, SAMPLE_VIEW_ROW, TransportMetrics } from './transport-metrics.js';

const metrics: TransportMetrics[] = [];
afterEach(() => metrics.splice(0).forEach((m) => m.dispose()));

function make(now: number): TransportMetrics {
  const m = new TransportMetrics(0, now);
  metrics.push(m);
  return m;
}

/** Total count of an encoded histogram. */
function count(encoded: string): number {
  if (encoded === '') return 0;
  const h = decodeFromCompressedBase64(encoded, 32, false);
  const n = h.totalCount;
  h.destroy();
  return n;
}

const info = (sessionId: number) => ({ sessionId, user: 'alice', role: 'trader' as const, address: '127.0.0.1', connectedAt: 0, worker: 0 });

describe('TransportMetrics', () => {
  it('counts frames, messages and bytes per session exactly, and each sample in its histogram', () => {
    const m = make(0);
    const meter = m.opened(info(7), () => 42);
    m.subscriptions(7, 3);
    for (let i = 0; i < 10; i++) m.sent(meter, 300, 5);
    for (let i = 0; i < 4; i++) m.sample(SAMPLE_RECORD, 100, 102.5);
    m.sample(SAMPLE_VIEW_ROW, 100, 2100);
    m.received(300);
    const snap = m.snapshot(2000, 1);
    expect(snap.sessions).toEqual([{ ...info(7), subscriptions: 3, messagesPerSec: 25, framesPerSec: 5, bytesPerSec: 1500, queuedBytes: 42, clientLatencyMs: null }]);
    expect(snap.bytesIn).toBe(300);
    const latency = decodeFromCompressedBase64(snap.latency, 32, false);
    expect(latency.totalCount).toBe(4);
    expect(latency.maxValue).toBeGreaterThanOrEqual(2499);
    expect(latency.maxValue).toBeLessThan(2600);
    latency.destroy();
    const views = decodeFromCompressedBase64(snap.viewLatency, 32, false);
    expect(views.totalCount).toBe(1);
    expect(views.maxValue).toBeGreaterThanOrEqual(1_999_000);
    views.destroy();
    expect(count(snap.batch)).toBe(10);
    // the interval is over: counters start again
    const next = m.snapshot(3000, 1);
    expect(next.latency).toBe('');
    expect(next.sessions![0]).toMatchObject({ messagesPerSec: 0, framesPerSec: 0 });
  });

  it('leaves the sessions list out unless asked, and a list asked later covers its own interval only', () => {
    const m = make(0);
    const meter = m.opened(info(7), () => 0);
    for (let i = 0; i < 10; i++) m.sent(meter, 100, 2);
    const quiet = m.snapshot(1000, 1, undefined, false, false);
    expect(quiet.sessions).toBeUndefined();
    expect(quiet.sessionsWanted).toBe(false);
    expect(count(quiet.batch)).toBe(10);
    for (let i = 0; i < 3; i++) m.sent(meter, 100, 2);
    const asked = m.snapshot(2000, 1, undefined, true, true);
    expect(asked.sessionsWanted).toBe(true);
    expect(asked.sessions).toEqual([expect.objectContaining({ sessionId: 7, framesPerSec: 3, messagesPerSec: 6, bytesPerSec: 300 })]);
  });

  it('carries the source flow counters it is given (a copy; all 0 without them)', () => {
    const m = make(0);
    expect(m.snapshot(1000, 0).sourceFlow).toEqual({ pauses: 0, overruns: 0, paused: 0, pausedMs: 0 });
    const counts = { pauses: 3, overruns: 1, paused: 1, pausedMs: 420 };
    const snap = m.snapshot(2000, 0, counts);
    counts.pauses = 99;
    expect(snap.sourceFlow).toEqual({ pauses: 3, overruns: 1, paused: 1, pausedMs: 420 });
  });

  it('asks the engine for a sampling period that brings about the budget back', () => {
    const m = make(0);
    expect(m.samplingPeriod()).toBe(1);
    // every item sampled: four times the budget in one second -> keep 1 in 4
    for (let i = 0; i < SAMPLE_BUDGET_PER_SEC * 4; i++) m.sample(SAMPLE_RECORD, 0, 1);
    m.snapshot(1000, 1);
    expect(m.samplingPeriod()).toBe(4);
    // at 1 in 4 the budget came back over two seconds: the items doubled -> 1 in 8
    for (let i = 0; i < SAMPLE_BUDGET_PER_SEC * 4; i++) m.sample(SAMPLE_VIEW_ROW, 0, 1);
    m.snapshot(3000, 1);
    expect(m.samplingPeriod()).toBe(8);
    // quiet: back to every item
    m.snapshot(4000, 1);
    expect(m.samplingPeriod()).toBe(1);
  });

  it('records the batch size of 1 frame in N above its frame budget; session rates stay exact', () => {
    const m = make(0);
    const meter = m.opened(info(1), () => 0);
    const frames = BATCH_BUDGET_FRAMES_PER_SEC * 4; // four times the budget in one second
    for (let i = 0; i < frames; i++) m.sent(meter, 10, 3);
    expect(count(m.snapshot(1000, 1).batch)).toBe(frames);
    for (let i = 0; i < frames; i++) m.sent(meter, 10, 3);
    const snap = m.snapshot(2000, 1);
    expect(count(snap.batch)).toBe(frames / 4);
    expect(snap.sessions![0]).toMatchObject({ messagesPerSec: frames * 3, framesPerSec: frames, bytesPerSec: frames * 10 });
  });

  it('counts frames of sessions it has no meter for in the transport, not in any session', () => {
    const m = make(0);
    const meter = m.opened(info(1), () => 0);
    m.sent(undefined, 10, 3);
    m.sent(meter, 10, 2);
    const snap = m.snapshot(1000, 1);
    expect(count(snap.batch)).toBe(2);
    expect(snap.sessions![0]).toMatchObject({ messagesPerSec: 2, framesPerSec: 1 });
  });

  it('reports the busiest sessions only when there are more than MAX_SNAPSHOT_SESSIONS', () => {
    const m = make(0);
    const n = MAX_SNAPSHOT_SESSIONS + 5;
    const meters = Array.from({ length: n }, (_, i) => m.opened(info(i + 1), () => 0));
    // sessions 1..5 send nothing; the others send i bytes: the 5 idle ones drop out
    meters.forEach((meter, i) => { if (i >= 5) m.sent(meter, i, 1); });
    const snap = m.snapshot(1000, n);
    expect(snap.sessions).toHaveLength(MAX_SNAPSHOT_SESSIONS);
    expect(snap.sessions!.some((s) => s.sessionId <= 5)).toBe(false);
    expect(snap.sessions![0]).toMatchObject({ sessionId: n, bytesPerSec: n - 1 });
    expect(m.sessionList()).toHaveLength(n);
  });

  it('forgets closed sessions and ignores reports without samples', () => {
    const m = make(0);
    m.opened(info(1), () => 0);
    m.clientReport(1, { samples: 0, meanMs: 5, p99Ms: 5, maxMs: 5 });
    expect(m.sessionList()[0]!.clientLatencyMs).toBeNull();
    m.closed(1);
    m.closed(99);
    expect(m.snapshot(1000, 0).sessions).toEqual([]);
  });
});
