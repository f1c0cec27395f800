import { encodeServerFrame, type RecordUpdate, type ViewRows } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import { MAX_SNAPSHOT_SESSIONS, SCAN_BUDGET_ITEMS_PER_SEC, TransportMetrics, type SessionMeter } from './transport-metrics.js';

const metrics: TransportMetrics[] = [];
afterEach(() => metrics.splice(0).forEach((m) => m.dispose()));

function make(now: number): TransportMetrics {
  const m = new TransportMetrics(0, now);
  metrics.push(m);
  return m;
}

function frame(n: number, ts: number): Buffer {
  const ms: RecordUpdate[] = Array.from({ length: n }, (_, i) => ({ type: 'record.update', id: i + 1, seq: 2, ts, fields: { bid: i } }));
  return Buffer.from(encodeServerFrame(ms));
}

/** What the transport does per frame: count it, read it when sampled. */
function send(m: TransportMetrics, meter: SessionMeter | undefined, f: Buffer, now: number): void {
  if (m.sent(meter, f.length)) m.scan(meter, f, now);
}

const info = (sessionId: number) => ({ sessionId, user: 'alice', role: 'trader' as const, address: '127.0.0.1', connectedAt: 0, worker: 0 });

describe('TransportMetrics', () => {
  it('counts per session exactly while every frame is scanned', () => {
    const m = make(0);
    const meter = m.opened(info(7), () => 42);
    m.subscriptions(7, 3);
    for (let i = 0; i < 10; i++) send(m, meter, frame(5, 100), 102.5);
    m.received(300);
    const snap = m.snapshot(2000, 1);
    expect(snap.sessions).toEqual([{ ...info(7), subscriptions: 3, messagesPerSec: 25, framesPerSec: 5, bytesPerSec: Math.round((10 * frame(5, 100).length) / 2), queuedBytes: 42, clientLatencyMs: null }]);
    expect(snap.bytesIn).toBe(300);
    const latency = decodeFromCompressedBase64(snap.latency, 32, false);
    expect(latency.totalCount).toBe(50);
    expect(latency.maxValue).toBeGreaterThanOrEqual(2499);
    latency.destroy();
    // the interval is over: counters start again
    const next = m.snapshot(3000, 1);
    expect(next.latency).toBe('');
    expect(next.sessions[0]).toMatchObject({ messagesPerSec: 0, framesPerSec: 0 });
  });

  it('carries the source flow counters it is given (a copy; all 0 without them)', () => {
    const m = make(0);
    expect(m.snapshot(1000, 0).sourceFlow).toEqual({ pauses: 0, overruns: 0, paused: 0, pausedMs: 0 });
    const counts = { pauses: 3, overruns: 1, paused: 1, pausedMs: 420 };
    const snap = m.snapshot(2000, 0, counts);
    counts.pauses = 99;
    expect(snap.sourceFlow).toEqual({ pauses: 3, overruns: 1, paused: 1, pausedMs: 420 });
  });

  it('samples frames above the budget and scales the session rate from its sampled frames', () => {
    const m = make(0);
    const meter = m.opened(info(1), () => 0);
    const f = frame(10, 0);
    const frames = SCAN_BUDGET_ITEMS_PER_SEC / 10 * 4; // four times the budget in one second
    for (let i = 0; i < frames; i++) send(m, meter, f, 1);
    m.snapshot(1000, 1);
    for (let i = 0; i < frames; i++) send(m, meter, f, 1);
    const snap = m.snapshot(2000, 1);
    const latency = decodeFromCompressedBase64(snap.latency, 32, false);
    // 1 frame in 4 scanned: a quarter of the messages measured, the rate still exact (uniform frames)
    expect(latency.totalCount).toBe(frames * 10 / 4);
    latency.destroy();
    expect(snap.sessions[0]!.messagesPerSec).toBe(frames * 10);
    expect(snap.sessions[0]!.framesPerSec).toBe(frames);
  });

  it('counts updated view rows in the scan budget: frames of 1 message and 49 rows are sampled 1 in 10', () => {
    const m = make(0);
    const meter = m.opened(info(1), () => 0);
    const updated = Array.from({ length: 49 }, (_, i) => ({ id: i + 1, seq: 2, ts: 0, fields: { bid: i } }));
    const rows: ViewRows = { type: 'view.rows', reqId: 0, viewId: 1, updated };
    const f = Buffer.from(encodeServerFrame([rows]));
    const frames = SCAN_BUDGET_ITEMS_PER_SEC / 50 * 10; // 50 items per frame, ten times the budget
    for (let i = 0; i < frames; i++) send(m, meter, f, 2);
    m.snapshot(1000, 1);
    for (let i = 0; i < frames; i++) send(m, meter, f, 2);
    const snap = m.snapshot(2000, 1);
    const views = decodeFromCompressedBase64(snap.viewLatency, 32, false);
    expect(views.totalCount).toBe(frames / 10 * 49);
    expect(views.maxValue).toBeGreaterThanOrEqual(1999);
    views.destroy();
    const batch = decodeFromCompressedBase64(snap.batch, 32, false);
    expect(batch.totalCount).toBe(frames / 10);
    batch.destroy();
    expect(snap.sessions[0]).toMatchObject({ messagesPerSec: frames, framesPerSec: frames });
  });

  it('counts frames of sessions it has no meter for in the sample, not in any session', () => {
    const m = make(0);
    const meter = m.opened(info(1), () => 0);
    send(m, undefined, frame(3, 0), 1);
    send(m, meter, frame(2, 0), 1);
    const snap = m.snapshot(1000, 1);
    const latency = decodeFromCompressedBase64(snap.latency, 32, false);
    expect(latency.totalCount).toBe(5);
    latency.destroy();
    expect(snap.sessions[0]).toMatchObject({ messagesPerSec: 2, framesPerSec: 1 });
  });

  it('reports the busiest sessions only when there are more than MAX_SNAPSHOT_SESSIONS', () => {
    const m = make(0);
    const n = MAX_SNAPSHOT_SESSIONS + 5;
    const meters = Array.from({ length: n }, (_, i) => m.opened(info(i + 1), () => 0));
    // sessions 1..5 send nothing; the others send i bytes: the 5 idle ones drop out
    meters.forEach((meter, i) => { if (i >= 5) m.sent(meter, i); });
    const snap = m.snapshot(1000, n);
    expect(snap.sessions).toHaveLength(MAX_SNAPSHOT_SESSIONS);
    expect(snap.sessions.some((s) => s.sessionId <= 5)).toBe(false);
    expect(snap.sessions[0]).toMatchObject({ sessionId: n, bytesPerSec: n - 1 });
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
