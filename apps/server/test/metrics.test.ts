/**
 * Metrics against known traffic: N publishes in -> the counters, histograms and Prometheus
 * output show N; client latency reports are aggregated; /api/health carries process CPU and RSS.
 */

import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AdminMetricsSample, ServerMessage } from '@tidewire/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/server.js';
import { closeAll, delta, image, RawSocket, sdkClient, sourceSocket, startTestServer, waitFor, wsUrl } from './helpers.js';

afterEach(closeAll);

const auditDir = (): string => mkdtempSync(path.join(os.tmpdir(), 'tw-audit-'));

/** A raw socket whose sent bytes are counted (what bytesIn must show). */
class CountingSocket extends RawSocket {
  sentBytes = 0;
  override send(frame: string | object): void {
    const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
    this.sentBytes += Buffer.byteLength(text);
    super.send(text);
  }
}

/** Collects metrics intervals until `pred` holds for the latest sample (bounded). */
async function sampleWhere(server: RunningServer, pred: (s: AdminMetricsSample) => boolean, what: string): Promise<AdminMetricsSample> {
  let sample: AdminMetricsSample | undefined;
  await waitFor(() => {
    void server.collectMetrics();
    sample = server.metrics.last()?.sample;
    return sample !== undefined && pred(sample);
  }, what);
  return sample!;
}

/** Parses Prometheus text exposition: every sample line's family has HELP and TYPE before it. */
function parsePrometheus(text: string): Map<string, number> {
  const types = new Map<string, string>();
  const values = new Map<string, number>();
  expect(text.endsWith('\n')).toBe(true);
  for (const line of text.trimEnd().split('\n')) {
    let m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line);
    if (m) {
      if (m[1] === 'TYPE') {
        expect(['counter', 'gauge', 'summary', 'histogram', 'untyped']).toContain(m[3]);
        expect(types.has(m[2]!), `duplicate TYPE ${m[2]}`).toBe(false);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"(?:,[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*")*\})? (\S+)$/.exec(line);
    expect(m, `bad line: ${line}`).not.toBeNull();
    const name = m![1]!;
    const family = types.has(name) ? name : name.replace(/_(sum|count)$/, '');
    expect(types.has(family), `no TYPE for ${name}`).toBe(true);
    const value = m![3]! === '+Inf' ? Infinity : m![3]! === '-Inf' ? -Infinity : Number(m![3]);
    expect(Number.isNaN(value) && m![3] !== 'NaN', `bad value in ${line}`).toBe(false);
    values.set(name + (m![2] ?? ''), value);
  }
  return values;
}

describe('metrics from known traffic', () => {
  it('N publishes show as N in, N+1 messages out (ack + image + updates), N latencies, exact bytes in', async () => {
    const server = await startTestServer({ admin: { auditDir: auditDir() } });
    const trader = await new CountingSocket(wsUrl(server, '/stream')).open();
    trader.send({ type: 'session.login', reqId: 1, user: 'alice', password: 'alice123' });
    await trader.next((m) => m.type === 'session.loggedIn', 'login');
    trader.send({ type: 'record.subscribe', reqId: 2, subjects: ['/T/M'] });
    await trader.next((m) => m.type === 'record.subscribed', 'ack');
    const source = await sourceSocket(server);
    const N = 40;
    let sourceBytes = 0;
    const publish = (ms: Parameters<typeof source.publish>[0]): void => {
      sourceBytes += Buffer.byteLength(JSON.stringify(ms));
      source.publish(ms);
    };
    publish([image('/T/M', { bid: 0 })]);
    for (let i = 1; i < N; i++) publish([delta('/T/M', { bid: i })]);
    const records = (): ServerMessage[] => trader.messages.filter((m) => m.type === 'record.image' || m.type === 'record.update');
    await waitFor(() => records().length === N, `${N} record messages at the trader`);
    const sample = await sampleWhere(server, (s) => s.totals.messagesIn === N && s.totals.messagesOut === N + 1, 'counters');
    expect(sample.totals).toMatchObject({ messagesIn: N, messagesOut: N + 1, conflatedUpdates: 0, droppedUpdates: 0, slowConsumerCloses: 0, kicks: 0 });
    expect(sample.sessions).toBe(2);
    expect(sample.subscriptions).toBe(1);
    const all = server.metrics.samples();
    // every frame is scanned at this rate: one latency per record message, one batch size per frame
    const latencyCount = all.reduce((n, s) => n + s.latencyMs.count, 0);
    const batchMessages = all.reduce((n, s) => n + s.batchSize.mean * s.batchSize.count, 0);
    expect(latencyCount).toBe(N);
    expect(Math.round(batchMessages)).toBe(N + 1);
    expect(all.reduce((n, s) => n + s.batchSize.count, 0)).toBe(trader.frames.length - 1); // minus the login reply (sent directly)
    for (const s of all) if (s.latencyMs.count > 0) expect(s.latencyMs.max).toBeGreaterThanOrEqual(s.latencyMs.p50);
    // bytes in: everything both sockets sent (the source's login is sent by the helper)
    const sourceLogin = Buffer.byteLength(JSON.stringify({ type: 'session.login', reqId: 1, user: 'feed', password: 'feed123' }));
    expect(all.reduce((n, s) => n + s.bytesInPerSec * (s.intervalMs / 1000), 0)).toBeGreaterThan(0);
    expect(server.metrics.last()!.sample.totals.bytesIn).toBe(trader.sentBytes + sourceBytes + sourceLogin);
    // the server did work in at least one interval, and no interval reads more than every core
    expect(all.some((s) => s.cpuPercent > 0)).toBe(true);
    for (const s of all) expect(s.cpuPercent).toBeLessThanOrEqual(100 * os.cpus().length + 1);
    expect(sample.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(sample.heapUsedBytes).toBeGreaterThan(1024 * 1024);
    expect(sample.eventLoopLagMs.max).toBeGreaterThanOrEqual(sample.eventLoopLagMs.p50);
    expect(sample.eventLoopLagMs.max).toBeLessThan(60_000);

    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const prom = parsePrometheus(await res.text());
    expect(prom.get('tidewire_messages_in_total')).toBe(N);
    expect(prom.get('tidewire_messages_out_total')).toBe(N + 1);
    expect(prom.get('tidewire_sessions')).toBe(2);
    expect(prom.get('tidewire_delivery_latency_seconds_count')).toBe(N);
    expect(prom.get('tidewire_batch_size_messages_sum')).toBe(N + 1);
    expect(prom.get('tidewire_batching_burst_max_ms')).toBe(0);
  });

  it('N orders show as N accepted with N ack latencies; views, windows and view-row latencies are counted', async () => {
    const server = await startTestServer({
      admin: { auditDir: auditDir() },
      orders: { journalDir: mkdtempSync(path.join(os.tmpdir(), 'tw-metrics-journal-')), fillIntervalMs: 60_000 },
      limits: { ordersPerSecPerUser: 0, requestsPerSec: 0 },
    });
    const source = await sourceSocket(server);
    source.publish([image('/FX/EURUSD', { bid: 1.085, ask: 1.0852 }), image('/P/0', { bid: 1 }), image('/P/1', { bid: 2 })]);
    source.send({ type: 'container.publish', subject: '/C/M', ops: [{ op: 'add', subjects: ['/P/0', '/P/1'] }] });
    await source.barrier(); // applied before the orders and views below (control-lane requests)
    const client = sdkClient(server);
    await client.connect();
    const N = 12;
    // limit orders far off the market: they stay open (no fills to journal besides the acks)
    for (let i = 0; i < N; i++) await client.submitOrder({ instrument: '/FX/EURUSD', side: 'buy', quantity: 10, price: 1.0 });
    await expect(client.submitOrder({ instrument: '/FX/NOPE', side: 'buy', quantity: 10, price: 1 })).rejects.toThrow();
    let updatedSeen = 0;
    const onRows = (_rows: unknown, _count: number, updated: ReadonlySet<number>): void => { updatedSeen += updated.size; };
    client.view({ container: '/C/M', sort: [{ field: 'bid', dir: 'asc' }], window: { offset: 0, size: 10 } }, { onRows });
    client.view({ container: '/C/M', sort: [{ field: 'bid', dir: 'asc' }], window: { offset: 0, size: 1 } }, { onRows: () => {} });
    await waitFor(() => server.engine.stats().viewWindows === 2, 'two windows open');
    const M = 5;
    for (let i = 0; i < M; i++) {
      const before = updatedSeen;
      source.publish([delta('/P/1', { bid: 2 + i + 1, note: i })]);
      await waitFor(() => updatedSeen > before, `view update ${i}`);
    }
    const sample = await sampleWhere(server, (s) => s.totals.ordersAccepted === N && s.views === 1 && s.viewWindows === 2, 'orders and views');
    expect(sample.totals.ordersRejected).toBe(1);
    expect(sample.ordersOpen).toBe(N);
    expect(sample.containers).toBeGreaterThanOrEqual(1);
    const all = server.metrics.samples();
    expect(all.reduce((n, s) => n + s.orderAckMs.count, 0)).toBe(N);
    // /P/1 sits in the 10-row window only: one updated row per publish
    await sampleWhere(server, () => server.metrics.samples().reduce((n, s) => n + s.viewUpdateMs.count, 0) === M, 'view-row latencies');
    const prom = parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
    expect(prom.get('tidewire_orders_accepted_total')).toBe(N);
    expect(prom.get('tidewire_order_ack_latency_seconds_count')).toBe(N);
    expect(prom.get('tidewire_view_update_latency_seconds_count')).toBe(M);
    expect(prom.get('tidewire_views')).toBe(1);
    expect(prom.get('tidewire_view_windows')).toBe(2);
  });

  it('measures latency from each update\'s own ts: updates and view rows published AGE ms ago show as AGE+ in the histograms', async () => {
    const server = await startTestServer({ admin: { auditDir: auditDir() } });
    const source = await sourceSocket(server);
    source.publish([image('/L/0', { bid: 1 }), image('/L/1', { bid: 2 })]);
    source.send({ type: 'container.publish', subject: '/C/L', ops: [{ op: 'add', subjects: ['/L/0', '/L/1'] }] });
    await source.barrier();
    const trader = await new RawSocket(wsUrl(server, '/stream')).open();
    trader.send({ type: 'session.login', reqId: 1, user: 'alice', password: 'alice123' });
    await trader.next((m) => m.type === 'session.loggedIn', 'login');
    trader.send({ type: 'record.subscribe', reqId: 2, subjects: ['/L/0'] });
    await trader.next((m) => m.type === 'record.image', 'image');
    trader.send({ type: 'view.create', reqId: 3, container: '/C/L', sort: [{ field: 'bid', dir: 'asc' }], window: { offset: 0, size: 10 } });
    await trader.next((m) => m.type === 'view.created', 'view');
    await sampleWhere(server, (s) => s.latencyMs.count === 0 && s.viewUpdateMs.count === 0, 'an interval without traffic');
    const from = server.metrics.samples().length;
    const before = parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
    const AGE = 5_000;
    const N = 10;
    // one source frame: the N updates leave in one or a few frames of several messages
    const sent = Date.now();
    source.publish(Array.from({ length: N }, (_, i) => delta(i % 2 === 0 ? '/L/0' : '/L/1', { bid: 10 + i }, sent - AGE - i)));
    await waitFor(() => trader.messages.filter((m) => m.type === 'record.update').length === N / 2, 'the updates of /L/0');
    const done = (): AdminMetricsSample[] => server.metrics.samples().slice(from).filter((s) => s.latencyMs.count > 0 || s.viewUpdateMs.count > 0);
    await sampleWhere(server, () => done().reduce((n, s) => n + s.latencyMs.count, 0) === N / 2 && done().reduce((n, s) => n + s.viewUpdateMs.count, 0) >= 1, 'latencies');
    const received = Date.now();
    for (const s of done()) {
      for (const h of [s.latencyMs, s.viewUpdateMs]) {
        if (h.count === 0) continue;
        // origin ts (AGE .. AGE + N ms ago) -> socket write, within the test's own span
        expect(h.p50).toBeGreaterThanOrEqual(AGE * 0.99);
        expect(h.max).toBeLessThanOrEqual((received - sent + AGE + N) * 1.01);
      }
    }
    const prom = parsePrometheus(await (await fetch(`${server.url}/metrics`)).text());
    const grew = (name: string): number => prom.get(name)! - before.get(name)!;
    expect(grew('tidewire_delivery_latency_seconds_count')).toBe(N / 2);
    expect(grew('tidewire_delivery_latency_seconds_sum')).toBeGreaterThanOrEqual((N / 2) * (AGE / 1000) * 0.99);
  });

  it('aggregates client latency reports per session and overall', async () => {
    const server = await startTestServer({ admin: { auditDir: auditDir() } });
    const a = await new RawSocket(wsUrl(server, '/stream')).open();
    const b = await new RawSocket(wsUrl(server, '/stream')).open();
    await a.login('alice', 'alice123');
    await b.login('bob', 'bob123');
    a.send({ type: 'session.ping', reqId: 5, ts: Date.now(), latency: { samples: 30, meanMs: 2, p99Ms: 5, maxMs: 8 } });
    b.send({ type: 'session.ping', reqId: 5, ts: Date.now(), latency: { samples: 10, meanMs: 6, p99Ms: 9, maxMs: 20, paintMeanMs: 11 } });
    await a.next((m) => m.type === 'session.pong', 'pong a');
    await b.next((m) => m.type === 'session.pong', 'pong b');
    const sample = await sampleWhere(server, (s) => s.clientLatencyMs.count === 40, 'client latency');
    expect(sample.clientLatencyMs).toEqual({ count: 40, mean: 3, p50: 0, p99: 9, max: 20 });
    // only bob's web-style report carries paint latency: its mean is over his samples alone
    expect(sample.clientPaintMeanMs).toBe(11);
    // the timer's intervals have no sessions list while nothing reads it: collect one that has it
    await server.collectMetrics();
    const sessions = server.metrics.last()!.sessions!;
    expect(sessions.map((s) => [s.user, s.clientLatencyMs])).toEqual([
      ['alice', { meanMs: 2, p99Ms: 5, maxMs: 8 }],
      ['bob', { meanMs: 6, p99Ms: 9, maxMs: 20, paintMeanMs: 11 }],
    ]);
    // the next interval has no reports: the overall figure is per interval, the session keeps its last
    const next = await sampleWhere(server, (s) => s.clientLatencyMs.count === 0, 'empty interval');
    expect(next.clientLatencyMs.count).toBe(0);
    await server.collectMetrics();
    expect(server.metrics.last()!.sessions![0]!.clientLatencyMs).toEqual({ meanMs: 2, p99Ms: 5, maxMs: 8 });
  });

  it('GET /api/health reports cumulative process CPU and RSS', async () => {
    const server = await startTestServer({ admin: { auditDir: auditDir() } });
    const first = (await (await fetch(`${server.url}/api/health`)).json()) as { process: { cpuUserMicros: number; cpuSystemMicros: number; rssBytes: number } };
    expect(first.process.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(first.process.cpuUserMicros).toBeGreaterThan(0);
    // burn some CPU: the counters are cumulative, so they grow
    const until = performance.now() + 30;
    while (performance.now() < until) Math.sqrt(Math.random());
    const second = (await (await fetch(`${server.url}/api/health`)).json()) as typeof first;
    expect(second.process.cpuUserMicros + second.process.cpuSystemMicros).toBeGreaterThan(first.process.cpuUserMicros + first.process.cpuSystemMicros);
  });
});
